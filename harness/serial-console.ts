// The harness side of a board's serial console over a transport (harness/transport/): a real serial
// port (node-serialport), a USB adapter for a real board or a pseudo-terminal for a virtual one, or
// a port on an RFC 2217 server. Lines in, commands out (docs/serial-console.md).
import { TimeoutError } from './board.ts';
import { LineSplitter } from './lines.ts';
import { SerialPortTransport } from './transport/serial.ts';
import type { SerialTransport } from './transport/transport.ts';

export class SerialConsole {
  readonly lines: string[] = [];
  private readonly splitter = new LineSplitter((line) => this.onLine(line));
  private readonly waiters: { pattern: RegExp; from: number; resolve: (l: string) => void; reject: (e: Error) => void }[] = [];
  private readonly stopReading: () => void;
  /** Raw bytes as they arrive (a monitor shows them before a line is complete). */
  onBytes: ((bytes: Uint8Array) => void) | undefined;
  onLineReceived: ((line: string) => void) | undefined;
  /** Bytes read since the console opened. */
  receivedBytes = 0;

  constructor(readonly transport: SerialTransport) {
    this.stopReading = transport.read((bytes) => {
      this.receivedBytes += bytes.length;
      this.onBytes?.(bytes);
      this.splitter.push(Buffer.from(bytes));
    });
  }

  /** A local port (or pseudo-terminal) at 115200, opened now. */
  static async open(path: string, baudRate = 115200): Promise<SerialConsole> {
    const t = new SerialPortTransport(path);
    await t.connect(baudRate);
    return new SerialConsole(t);
  }

  private onLine(line: string): void {
    this.lines.push(line);
    this.onLineReceived?.(line);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (this.lines.length - 1 >= w.from && w.pattern.test(line)) {
        this.waiters.splice(i, 1);
        w.resolve(line);
      }
    }
  }

  write(line: string): Promise<void> {
    return this.transport.write(new TextEncoder().encode(line + '\n'));
  }

  waitFor(pattern: RegExp, timeoutMs: number, fromIndex = 0): Promise<string> {
    const found = this.lines.slice(fromIndex).find((l) => pattern.test(l));
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = {
        pattern,
        from: fromIndex,
        resolve: (l: string) => (clearTimeout(timer), resolve(l)),
        reject: (e: Error) => (clearTimeout(timer), reject(e)),
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new TimeoutError(`a console line matching ${pattern} on ${this.transport.name}`, timeoutMs));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** A command and its answer: the first OK/ERR line after it was sent. */
  async command(line: string, timeoutMs = 30_000): Promise<string> {
    const from = this.lines.length;
    await this.write(line);
    return this.waitFor(/^(OK|ERR) /, timeoutMs, from);
  }

  /** Stops reading; the transport is closed too unless `keepTransport`. */
  async close(o: { keepTransport?: boolean } = {}): Promise<void> {
    this.stopReading();
    // Whoever waits for a line will not get one: told now, not at the end of its time-out (a pending
    // timer kept a stopped bench alive for a minute).
    for (const w of this.waiters.splice(0)) w.reject(new Error(`the console ${this.transport.name} was closed while waiting for a line matching ${w.pattern}`));
    if (!o.keepTransport) await this.transport.disconnect();
  }
}
