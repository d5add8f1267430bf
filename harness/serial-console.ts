// The harness side of a board's serial console: a real serial port (node-serialport), a USB adapter
// for a real board or a pseudo-terminal for a virtual one. Lines in, commands out.
import { SerialPort } from 'serialport';
import { TimeoutError } from './board.ts';
import { LineSplitter } from './lines.ts';

export class SerialConsole {
  readonly lines: string[] = [];
  private readonly splitter = new LineSplitter((line) => this.onLine(line));
  private readonly waiters: { pattern: RegExp; from: number; resolve: (l: string) => void }[] = [];

  private constructor(private readonly port: SerialPort) {
    port.on('data', (chunk: Buffer) => this.splitter.push(chunk));
  }

  static async open(path: string, baudRate = 115200): Promise<SerialConsole> {
    const port = new SerialPort({ path, baudRate, autoOpen: false, hupcl: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(new Error(`cannot open ${path}: ${err.message}`)) : resolve())));
    return new SerialConsole(port);
  }

  private onLine(line: string): void {
    this.lines.push(line);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (this.lines.length - 1 >= w.from && w.pattern.test(line)) {
        this.waiters.splice(i, 1);
        w.resolve(line);
      }
    }
  }

  write(line: string): Promise<void> {
    return new Promise((resolve, reject) => this.port.write(line + '\n', (err) => (err ? reject(err) : this.port.drain(() => resolve()))));
  }

  waitFor(pattern: RegExp, timeoutMs: number, fromIndex = 0): Promise<string> {
    const found = this.lines.slice(fromIndex).find((l) => pattern.test(l));
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = { pattern, from: fromIndex, resolve: (l: string) => (clearTimeout(timer), resolve(l)) };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new TimeoutError(`a console line matching ${pattern}`, timeoutMs));
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

  close(): Promise<void> {
    return new Promise((resolve) => (this.port.isOpen ? this.port.close(() => resolve()) : resolve()));
  }
}
