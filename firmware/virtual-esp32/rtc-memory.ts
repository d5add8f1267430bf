// What an ESP32-S3 keeps across a reset that is not a power cut (docs/device-health.md): its reset
// reason register (esp_reset_reason) and RTC no-init memory, where the firmware's abort hook and its
// restart leave what the next boot reports. Lost at power-on, as the chip's RTC domain is: a board
// started anew (SdkBoard.start, a power cut) begins with `power_on`.
import { MAX_CRASH_MESSAGE_BYTES, MAX_WHERE_BYTES } from '../src/core/health/limits.ts';
import { crashKindNamed, type CrashKind, type ResetReason } from '../src/hal/reasons.ts';
import type { LastRun } from '../src/hal/system.ts';

export class RtcMemory {
  private last: LastRun = { reason: 'power_on' };
  /** What the firmware's abort hook noted while it ran; read when its run ends in an abort. */
  private noted: LastRun['crash'];

  /** What the firmware reads at boot (natives: xs_fw_last_run). */
  lastRun(): LastRun {
    return this.last;
  }

  /** The abort hook (natives: xs_fw_note_crash), just before XS aborts. */
  noteCrash(kind: string, message: string, where: string): void {
    // RTC memory's room: the boot report cuts them again to their bytes on the wire (core/health/reports.ts).
    this.noted = { kind: crashKindNamed(kind), message: message.slice(0, MAX_CRASH_MESSAGE_BYTES), ...(where ? { where: where.slice(0, MAX_WHERE_BYTES) } : {}) };
  }

  /** How the run that just ended ended: what the next boot reads. */
  ended(reason: ResetReason, detail: { by?: string; why?: string } = {}): void {
    if (reason === 'software') this.last = { reason, ...(detail.by ? { by: detail.by } : {}) };
    else if (reason === 'abort') this.last = { reason, crash: this.noted ?? { kind: crashKindOf(detail.why ?? ''), message: detail.why ?? '' } };
    else if (reason === 'panic') this.last = { reason, crash: { kind: 'panic', message: detail.why ?? '' } };
    else this.last = { reason };
    this.noted = undefined;
  }
}

/** XS's abort reasons (fxAbortString) by kind: what the chip's console says when no hook ran (a stack overflow). */
export function crashKindOf(why: string): CrashKind {
  if (/memory full/.test(why)) return 'memory_full';
  if (/stack overflow/.test(why)) return 'stack_overflow';
  if (/unhandled rejection/.test(why)) return 'unhandled_rejection';
  if (/unhandled exception/.test(why)) return 'unhandled_exception';
  return 'abort';
}
