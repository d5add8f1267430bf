// The firmware of a virtual board as it runs: the SDK-built mc.so in the loader (firmware/sdk-host/
// loader.c), one process per start, its current directory the board's flash folder (the file system
// the firmware's `file` and `preference` see, config.file.root). Its UART0 pins are a stream; trace()
// is its standard output. How it ended tells the chip what happened (loader.c): esp_restart, an XS
// abort (memory full is 65), powered off.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { ChipCallHandlers } from './chip-calls.ts';
import { ChipChannel } from './chip-channel.ts';
import { flashTimingEnv, type FlashTiming } from './flash-timing.ts';

/** loader.c's exit statuses. */
export const EXIT_RESTART = 3;
/** A fault in native code: the loader's panic handler printed a backtrace. */
export const EXIT_PANIC = 4;
export const EXIT_ABORT_BASE = 64;
export const EXIT_CHIP_GONE = 70;

/** XS's abort statuses (xs/includes/xs.h XS_*_EXIT), as fxAbortString names them. */
const ABORTS: Record<number, string> = {
  1: 'memory full',
  2: 'JavaScript stack overflow',
  3: 'native stack overflow',
  4: 'debugger',
  5: 'unhandled exception',
  6: 'not enough keys',
  7: 'too much computation',
  8: 'unhandled rejection',
  9: 'dead strip',
};

export type FirmwareEnd =
  | { kind: 'restart' }
  | { kind: 'panic'; detail: string }
  | { kind: 'abort'; status: number; why: string }
  | { kind: 'off' }
  | { kind: 'crash'; detail: string };

export interface HeapFigures {
  chunkBytes: number;
  chunkPeakBytes: number;
  chunkMaxBytes: number;
  slots: number;
  slotPeak: number;
  slotMax: number;
  /** The JavaScript stack: the deepest it went (slots), and its size (the manifest's creation.stack). */
  stackPeak: number;
  stackMax: number;
}

export interface FirmwareProcessOptions {
  loader: string;
  firmware: string;
  flashDir: string;
  handlers: Omit<ChipCallHandlers, 'pong'>;
  /** Bytes the firmware writes on UART0. */
  onUart: (bytes: Uint8Array) => void;
  /** A line of trace() output (or of the loader). */
  onTrace: (line: string) => void;
  onEnd: (end: FirmwareEnd) => void;
  /** The file system's operations go to handlers.flashOp before they happen (a power-cut trial: natives/fw_host_flash.c). */
  watchFlash?: boolean;
  /** The flash chip's program and erase times (flash-timing.ts); unset, the flash takes no time. */
  flashTiming?: FlashTiming;
}

export class FirmwareProcess {
  private readonly child: ChildProcess;
  private readonly channel: ChipChannel;
  private readonly uart: Writable;
  private sequence = 0;
  private readonly pongs = new Map<number, (figures: HeapFigures) => void>();
  private ended: FirmwareEnd | undefined;
  private readonly exited: Promise<FirmwareEnd>;
  private stderrTail = '';

  constructor(o: FirmwareProcessOptions) {
    // This board's own say only, whatever the owner's environment holds.
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.FW_HOST_FLASH_OPS;
    delete env.FW_HOST_FLASH_TIMING;
    if (o.watchFlash) env.FW_HOST_FLASH_OPS = '1';
    Object.assign(env, flashTimingEnv(o.flashTiming));
    this.child = spawn(o.loader, [o.firmware], { cwd: o.flashDir, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'], env });
    const [, stdout, stderr, calls, events, uart] = this.child.stdio as unknown as [null, Readable, Readable, Readable & Writable, Writable, Readable & Writable];
    this.uart = uart;
    uart.on('data', (chunk: Buffer) => o.onUart(new Uint8Array(chunk)));
    uart.on('error', () => undefined);
    lines(stdout, o.onTrace);
    lines(stderr, (line) => {
      this.stderrTail = (this.stderrTail + line + '\n').slice(-2000);
      o.onTrace(line);
    });
    this.channel = new ChipChannel(
      calls,
      events,
      {
        ...o.handlers,
        pong: (sequence, chunkBytes, chunkPeakBytes, chunkMaxBytes, slots, slotPeak, slotMax, stackPeak, stackMax) => {
          this.pongs.get(sequence)?.({ chunkBytes, chunkPeakBytes, chunkMaxBytes, slots, slotPeak, slotMax, stackPeak, stackMax });
          this.pongs.delete(sequence);
          return [];
        },
      } as ChipCallHandlers,
      (err) => {
        o.onTrace(`chip channel: ${err.message}`);
        this.child.kill('SIGKILL');
      },
    );
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.channel.close();
        const end = this.ended ?? endOf(code, signal, this.stderrTail);
        this.ended = end;
        for (const settle of this.pongs.values()) settle({ chunkBytes: -1, chunkPeakBytes: -1, chunkMaxBytes: -1, slots: -1, slotPeak: -1, slotMax: -1, stackPeak: -1, stackMax: -1 });
        this.pongs.clear();
        o.onEnd(end);
        resolve(end);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.ended === undefined;
  }

  get calls(): readonly string[] {
    return this.channel.trace;
  }

  /** Bytes arriving on UART0's RX pin. */
  uartReceive(bytes: Uint8Array): void {
    if (this.running) this.uart.write(Buffer.from(bytes));
  }

  emit: ChipChannel['emit'] = (name, ...fields) => this.channel.emit(name, ...fields);

  /**
   * The watchdog's ping and the heap probe: resolves with the machine's heap figures once its main
   * loop has answered (a firmware stuck in a loop never does), or undefined after `timeoutMs`.
   */
  ping(o: { collect?: boolean; resetPeaks?: boolean; timeoutMs?: number } = {}): Promise<HeapFigures | undefined> {
    if (!this.running) return Promise.resolve(undefined);
    const sequence = ++this.sequence;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pongs.delete(sequence);
        resolve(undefined);
      }, o.timeoutMs ?? 5000);
      this.pongs.set(sequence, (figures) => {
        clearTimeout(timer);
        resolve(figures.slots < 0 ? undefined : figures);
      });
      this.channel.emit('ping', sequence, !!o.collect, !!o.resetPeaks);
    });
  }

  /** Power off: SIGTERM, then SIGKILL if the loop does not end. */
  async stop(): Promise<FirmwareEnd> {
    if (this.running) {
      this.ended = { kind: 'off' };
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
      await this.exited;
      clearTimeout(timer);
    }
    return this.exited;
  }

  /** A power cut or a reset by the watchdog: the process ends at once, whatever it was doing. */
  async kill(): Promise<FirmwareEnd> {
    if (this.running) {
      this.ended = { kind: 'off' };
      this.child.kill('SIGKILL');
    }
    return this.exited;
  }

  /** Resolves when the process has ended, however it ended. */
  done(): Promise<FirmwareEnd> {
    return this.exited;
  }
}

function endOf(code: number | null, signal: NodeJS.Signals | null, stderr: string): FirmwareEnd {
  if (code === EXIT_RESTART) return { kind: 'restart' };
  if (code === EXIT_PANIC) return { kind: 'panic', detail: /Guru Meditation Error: (.*?)\. Backtrace/.exec(stderr)?.[1] ?? 'a fault in native code' };
  if (code !== null && code > EXIT_ABORT_BASE && code < EXIT_ABORT_BASE + 16) {
    const status = code - EXIT_ABORT_BASE;
    // The chip's fxAbort names an unhandled exception's message; the loader prints it for us (loader.c).
    const reason = /XS abort: reason: (.*)$/m.exec(stderr)?.[1];
    return { kind: 'abort', status, why: `${ABORTS[status] ?? `XS status ${status}`}${reason ? ` ${reason}` : ''}` };
  }
  if (code === 0 && signal === null) return { kind: 'off' };
  return { kind: 'crash', detail: signal ? `signal ${signal}` : `exit ${code}${stderr ? `: ${stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}` };
}

function lines(stream: Readable, each: (line: string) => void): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (text: string) => {
    const parts = (partial + text).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) each(line.replace(/\r$/, ''));
  });
  stream.on('end', () => {
    if (partial) each(partial);
  });
}

/** A firmware's end in words: the console's `firmware fault (<this>)`. */
export function describeEnd(end: FirmwareEnd): string {
  if (end.kind === 'abort') return `XS abort: ${end.why}`;
  if (end.kind === 'crash' || end.kind === 'panic') return end.detail;
  return end.kind;
}

/** The image's firmware as a file the loader can map, kept by content beside the loader. */
export function runnableCopy(firmware: Uint8Array, loader: string): string {
  const dir = join(loader, '..', 'run');
  const path = join(dir, `${createHash('sha256').update(firmware).digest('hex').slice(0, 24)}.so`);
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(temporary, firmware, { mode: 0o755 });
    renameSync(temporary, path);
  }
  return path;
}
