/// <reference path="../native/native.d.ts" />
// The crash a board reports at its next boot (docs/device-health.md): XS calls the global `abort`
// before it aborts (mc's fxAbort, with the manifest's defines.xs.abortHook; the SDK's host build calls
// it too), with why ("memory full", "unhandled exception", "unhandled rejection", …) and the exception.
// The hook notes the crash in RTC memory (native/fw_system.c) and lets the abort go on: the chip
// resets. It allocates nothing for memory full (the heap is), and for the others only what a message
// and a line take. XS does not call it for a stack overflow: the next boot then reports the reset
// without a summary.
import type { CrashKind } from '../../../hal/system.ts';

const noteCrash = native('xs_fw_note_crash');

function kindOf(why: string): CrashKind {
  if (why === 'memory full') return 'memory_full';
  if (why === 'unhandled exception') return 'unhandled_exception';
  if (why === 'unhandled rejection') return 'unhandled_rejection';
  return 'abort';
}

/** The first "at" line of an error's stack, when XS keeps one (a debug build). */
function whereOf(exception: unknown): string {
  try {
    const stack = (exception as { stack?: unknown } | undefined)?.stack;
    if (typeof stack !== 'string') return '';
    const at = stack.indexOf(' at ');
    return at < 0 ? '' : stack.slice(at + 4, stack.indexOf('\n', at) < 0 ? undefined : stack.indexOf('\n', at)).trim();
  } catch {
    return '';
  }
}

export function installAbortHook(): void {
  (globalThis as { abort?: (why: string, exception?: unknown) => boolean }).abort = (why, exception) => {
    const kind = kindOf(why);
    if (kind === 'memory_full') noteCrash(kind, why, '');
    else {
      let message = why;
      try {
        const text = (exception as { message?: unknown } | undefined)?.message;
        if (typeof text === 'string') message = text;
      } catch {
        /* the exception's own getter failed: why is enough */
      }
      noteCrash(kind, message, whereOf(exception));
    }
    return true; // the abort goes on: the chip resets, and the next boot reports it
  };
}
