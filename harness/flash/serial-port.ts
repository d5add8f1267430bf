// A local serial port in the Web Serial shape esptool-js expects, over node-serialport: a USB-UART
// bridge of a real board, or a virtual board's pseudo-terminal. node-serialport's set() defaults
// DTR and RTS to true, so both are always given; a pseudo-terminal has no modem lines (ENOTTY) and
// says so with NoModemLinesError.
import { SerialPort } from 'serialport';
import { byteStream, NoModemLinesError, type SerialSignals, type WebSerialPortLike } from './web-serial.ts';

export class NodeSerialPort implements WebSerialPortLike {
  readable: ReadableStream<Uint8Array> | null = null;
  writable: WritableStream<Uint8Array> | null = null;
  private port: SerialPort | null = null;
  private readonly lines = { dtr: false, rts: false, brk: false };

  constructor(readonly path: string) {}

  getInfo(): Record<string, never> {
    return {};
  }

  async open(options: { baudRate: number }): Promise<void> {
    const port = new SerialPort({ path: this.path, baudRate: options.baudRate, autoOpen: false, hupcl: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(new Error(`cannot open ${this.path}: ${err.message}`)) : resolve())));
    this.port = port;
    this.readable = byteStream((push, end) => {
      const onData = (chunk: Buffer) => push(new Uint8Array(chunk));
      port.on('data', onData);
      port.once('close', end);
      return () => port.off('data', onData);
    });
    this.writable = new WritableStream<Uint8Array>({
      write: (chunk) => new Promise<void>((resolve, reject) => port.write(Buffer.from(chunk), (err) => (err ? reject(err) : port.drain(() => resolve())))),
    });
  }

  async close(): Promise<void> {
    const port = this.port;
    this.port = null;
    this.readable = null;
    this.writable = null;
    if (port?.isOpen) await new Promise<void>((r) => port.close(() => r()));
  }

  async setSignals(signals: SerialSignals): Promise<void> {
    if (!this.port) throw new Error(`${this.path} is not open`);
    if (signals.dataTerminalReady !== undefined) this.lines.dtr = signals.dataTerminalReady;
    if (signals.requestToSend !== undefined) this.lines.rts = signals.requestToSend;
    if (signals.break !== undefined) this.lines.brk = signals.break;
    const port = this.port;
    await new Promise<void>((resolve, reject) =>
      port.set({ dtr: this.lines.dtr, rts: this.lines.rts, brk: this.lines.brk }, (err) => {
        if (!err) return resolve();
        if (/ENOTTY|Inappropriate ioctl/i.test(err.message)) return reject(new NoModemLinesError(`${this.path} has no modem lines (a pseudo-terminal?): reset the board with its boot control`));
        reject(err);
      }),
    );
  }

  async setBaudRate(baudRate: number): Promise<void> {
    const port = this.port;
    if (!port) throw new Error(`${this.path} is not open`);
    await new Promise<void>((resolve, reject) => port.update({ baudRate }, (err) => (err ? reject(err) : resolve())));
  }
}
