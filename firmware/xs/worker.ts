// Drives a Moddable XS engine through @agoric/xsnap's native `xsnap-worker` binary, speaking its
// netstring protocol on fds 3 (to the worker) and 4 (from the worker) ourselves: the package's JS
// wrapper needs SES `lockdown` in the host process, which we must not impose. See docs/xs-engine.md.
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export interface MeterUsage {
  /** Computrons spent by this crank (the delivery plus the promise jobs it queued). */
  compute: number;
  /** Bytes the machine has obtained for its chunk and slot heaps since it started; never shrinks. */
  allocate: number;
  /** Heap slots in use at the end of the crank. */
  currentHeapCount: number;
  /** Wall-clock seconds: delivery read, each issueCommand sent/answered, reply written. */
  timestamps: number[];
}
export interface RunResult {
  reply: Uint8Array;
  meterUsage: MeterUsage;
}
export interface XsWorkerOptions {
  name?: string;
  /** Answers the worker's synchronous issueCommand(ArrayBuffer) calls. May be async. */
  handleCommand?: (message: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /** Per-crank compute budget (computrons); overrunning it kills the worker (exit code 17). */
  meteringLimit?: number;
  debug?: boolean;
  /** Receives the worker's print()/stdout/stderr lines. */
  onOutput?: (line: string) => void;
  /**
   * Called once if the worker dies on its own (stack overflow, out of memory, too much computation,
   * a protocol error), not after close(): the owner may restart it, as a watchdog resets a board.
   */
  onExit?: (err: Error) => void;
}

/** An exception thrown inside XS by evaluated code or by globalThis.handleCommand; the message is
 * the worker's String(exception), e.g. "TypeError: x is not a function" (XS sends no stack). */
export class XsError extends Error {
  override readonly name = 'XsError';
  constructor(readonly worker: string, text: string) {
    super(text);
  }
}

// From xsnap-worker.c's ExitCode enum.
const EXIT_REASONS: Record<number, string> = { 1: 'bad usage', 2: 'I/O error', 11: 'not enough memory', 12: 'stack overflow',
  15: 'unhandled exception', 16: 'no more keys', 17: 'too much computation' };
const CLOSE_GRACE_MS = 2000;
// Marks code running on behalf of a host handleCommand that has not answered yet: a request it
// awaited would wait forever behind the crank that is waiting for the answer.
const answering = new AsyncLocalStorage<{ worker: XsWorker; answered: boolean }>();
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class XsWorker {
  private readonly name: string;
  private readonly child: ChildProcess;
  private readonly toWorker: Writable;
  private readonly exited: Promise<void>;
  private chain: Promise<unknown> = Promise.resolve();
  private current: { resolve: (message: Buffer) => void; reject: (err: unknown) => void; hostError?: Error } | undefined;
  private dead: Error | undefined;
  private closing: Promise<void> | undefined;
  private lastStderr = '';
  private input: Buffer = Buffer.alloc(0);

  private constructor(private readonly opts: XsWorkerOptions) {
    this.name = opts.name ?? 'xs-worker';
    // The worker takes its first non-flag argument as its name; a leading '-' would be a flag.
    if (this.name.startsWith('-')) throw new Error(`xs worker name must not start with "-": ${this.name}`);
    const limit = opts.meteringLimit;
    // The worker parses the limit with atoi(); without -l it meters but never stops a crank.
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0 && limit <= 0x7fffffff)) {
      throw new RangeError(`meteringLimit must be an integer in 1..2^31-1, got ${limit}`);
    }
    const args = limit === undefined ? [this.name] : [this.name, '-l', String(limit)];
    this.child = spawn(workerBinary(opts.debug ?? false), args, { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
    const [, stdout, stderr, toWorker, fromWorker] = this.child.stdio as [null, Readable, Readable, Writable, Readable];
    this.toWorker = toWorker;
    // EPIPE after the worker died: the 'close' handler below reports the death itself.
    toWorker.on('error', () => {});
    fromWorker.on('data', (chunk: Buffer) => this.onData(chunk));
    // Drained even without onOutput: a full pipe would block print() inside the worker.
    createInterface({ input: stdout }).on('line', (line) => opts.onOutput?.(line));
    createInterface({ input: stderr }).on('line', (line) => {
      this.lastStderr = line;
      opts.onOutput?.(line);
    });
    this.exited = new Promise((resolve) => {
      this.child.on('error', (err) => {
        this.markDead(new Error(`xs worker "${this.name}" failed: ${err.message}`, { cause: err }));
        resolve();
      });
      // 'close' rather than 'exit': by then stderr is drained, so lastStderr is the final word.
      this.child.on('close', (code, signal) => {
        const reason = code === null ? undefined : EXIT_REASONS[code];
        const how = signal ? `signal ${signal}` : `code ${code}${reason ? ` (${reason})` : ''}`;
        this.markDead(new Error(`xs worker "${this.name}" exited with ${how}${this.lastStderr ? `; last stderr: ${this.lastStderr}` : ''}`));
        resolve();
      });
    });
  }

  /** Spawns a worker and waits until it answers a readiness probe. */
  static async start(opts: XsWorkerOptions = {}): Promise<XsWorker> {
    const worker = new XsWorker(opts);
    await worker.request([encoder.encode('R')]);
    return worker;
  }

  /** Evaluates a script at global scope; the reply follows the same rule as issueCommand's. */
  async evaluate(code: string): Promise<RunResult> {
    return this.runResult(await this.request([encoder.encode('e'), encoder.encode(code)]));
  }

  /**
   * Calls globalThis.handleCommand(ArrayBuffer) inside XS; its reply is the ArrayBuffer returned (or
   * left in `.result` of the returned object once promise jobs have drained), else empty.
   */
  async issueCommand(message: Uint8Array): Promise<RunResult> {
    return this.runResult(await this.request([encoder.encode('?'), message]));
  }

  async issueStringCommand(message: string): Promise<{ reply: string; meterUsage: MeterUsage }> {
    const { reply, meterUsage } = await this.issueCommand(encoder.encode(message));
    return { reply: decoder.decode(reply), meterUsage };
  }

  /**
   * Lets queued requests finish, asks the worker to quit, and kills it if all that takes over 2 s.
   * The exit code is not checked: after 'q' the worker exits 15 if its last crank threw.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const timer = setTimeout(() => this.child.kill('SIGKILL'), CLOSE_GRACE_MS);
      await this.chain;
      if (!this.dead) this.toWorker.end(netstring([encoder.encode('q')]));
      await this.exited;
      clearTimeout(timer);
    })();
    return this.closing;
  }

  private request(parts: Uint8Array[]): Promise<Buffer> {
    if (this.closing) return Promise.reject(new Error(`xs worker "${this.name}" is closed`));
    const ctx = answering.getStore();
    if (ctx?.worker === this && !ctx.answered) {
      return Promise.reject(new Error(`xs worker "${this.name}": cannot send a request before handleCommand has answered (the worker is blocked in issueCommand)`));
    }
    const run = this.chain.then(() => new Promise<Buffer>((resolve, reject) => {
      if (this.dead) return reject(this.dead);
      this.current = { resolve, reject };
      this.toWorker.write(netstring(parts));
    }));
    this.chain = run.catch(() => {});
    return run;
  }

  private runResult(message: Buffer): RunResult {
    // Success is '.' + meter JSON + '\x01' + reply bytes.
    const sep = message.indexOf(1);
    if (sep < 0) throw new Error(`xs worker "${this.name}" replied without meter data`);
    // A copy, so that reply.buffer does not expose the rest of the read buffer.
    return { reply: new Uint8Array(message.subarray(sep + 1)), meterUsage: JSON.parse(message.subarray(1, sep).toString('utf8')) as MeterUsage };
  }

  private onData(chunk: Buffer): void {
    this.input = this.input.length ? Buffer.concat([this.input, chunk]) : chunk;
    for (;;) {
      const colon = this.input.indexOf(0x3a);
      if (colon < 0) return;
      const header = this.input.subarray(0, colon).toString('latin1');
      if (!/^\d{1,9}$/.test(header)) return this.protocolError(`bad netstring length "${header.slice(0, 20)}"`);
      const end = colon + 1 + Number(header);
      if (this.input.length <= end) return;
      if (this.input[end] !== 0x2c) return this.protocolError('netstring without trailing ","');
      const message = this.input.subarray(colon + 1, end);
      this.input = this.input.subarray(end + 1);
      this.onMessage(message);
    }
  }

  private onMessage(message: Buffer): void {
    const kind = String.fromCharCode(message[0] ?? 0);
    if (kind === '?') return void this.answer(message.subarray(1));
    const pending = this.current;
    if ((kind !== '.' && kind !== '!') || !pending) return this.protocolError(`unexpected message kind "${kind}"`);
    this.current = undefined;
    if (pending.hostError) pending.reject(pending.hostError);
    else if (kind === '!') pending.reject(new XsError(this.name, message.subarray(1).toString('utf8')));
    else pending.resolve(message);
  }

  /** The worker is blocked inside issueCommand() until it reads our answer. */
  private async answer(query: Buffer): Promise<void> {
    let answer: Uint8Array[];
    const ctx = { worker: this, answered: false };
    try {
      const handler = this.opts.handleCommand;
      if (!handler) throw new Error('no handleCommand was given to XsWorker.start');
      answer = [encoder.encode('/'), await answering.run(ctx, () => handler(new Uint8Array(query)))];
    } catch (err) {
      // Any answer not starting with '/' makes issueCommand throw inside XS ("Received unexpected
      // command reply."), which unblocks the worker; the request itself then fails with our error.
      const reason = err instanceof Error ? err.message : String(err);
      if (this.current) this.current.hostError ??= new Error(`xs worker "${this.name}": host handleCommand failed: ${reason}`, { cause: err });
      answer = [encoder.encode('!')];
    }
    ctx.answered = true;
    if (!this.dead) this.toWorker.write(netstring(answer));
  }

  private protocolError(what: string): void {
    this.markDead(new Error(`xs worker "${this.name}" protocol error: ${what}`));
    this.child.kill('SIGKILL');
  }

  private markDead(err: Error): void {
    if (!this.dead && !this.closing) queueMicrotask(() => this.opts.onExit?.(err));
    this.dead ??= err;
    this.current?.reject(this.dead);
    this.current = undefined;
  }
}

function netstring(parts: Uint8Array[]): Buffer {
  const length = parts.reduce((n, p) => n + p.length, 0);
  return Buffer.concat([Buffer.from(`${length}:`), ...parts, Buffer.from(',')]);
}

function workerBinary(debug: boolean): string {
  if (process.platform !== 'linux') throw new Error(`xs worker: only the Linux build of xsnap-worker is wired up (platform ${process.platform})`);
  const pkgDir = dirname(createRequire(import.meta.url).resolve('@agoric/xsnap/package.json'));
  const bin = join(pkgDir, 'xsnap-native/xsnap/build/bin/lin', debug ? 'debug' : 'release', 'xsnap-worker');
  if (!existsSync(bin)) throw new Error(`xs worker binary missing at ${bin}: run npm ci: @agoric/xsnap builds XS at install`);
  return bin;
}
