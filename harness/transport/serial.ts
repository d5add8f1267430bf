// A local serial port through node-serialport: a board's USB-UART bridge or its USB-Serial/JTAG, or
// a pseudo-terminal. node-serialport's set() writes every modem line at once and defaults the ones
// not given (DTR and RTS to true), so this keeps both lines' state and always passes both: setting
// DTR alone would otherwise assert RTS and hold EN low. A pseudo-terminal has no modem lines
// (ENOTTY): NoModemLinesError.
import { SerialPort } from 'serialport';
import { DisconnectedError, NoModemLinesError, PortUnavailableError, portProblem, type SerialTransport } from './transport.ts';

/** The part of node-serialport's SerialPort this uses (the seam for the tests of the line handling). */
export interface NodePortLike {
  readonly isOpen: boolean;
  open(cb: (err: Error | null) => void): void;
  close(cb: (err: Error | null) => void): void;
  write(data: Buffer, cb: (err: Error | null | undefined) => void): boolean;
  drain(cb: (err: Error | null) => void): void;
  flush(cb: (err: Error | null) => void): void;
  set(flags: { dtr: boolean; rts: boolean }, cb: (err: Error | null) => void): void;
  update(o: { baudRate: number }, cb: (err: Error | null | undefined) => void): void;
  on(event: 'data', l: (chunk: Buffer) => void): unknown;
  on(event: 'close', l: () => void): unknown;
  off(event: 'data', l: (chunk: Buffer) => void): unknown;
}

export type NodePortFactory = (path: string, baudRate: number) => NodePortLike;

const defaultFactory: NodePortFactory = (path, baudRate) => new SerialPort({ path, baudRate, autoOpen: false, hupcl: false }) as unknown as NodePortLike;

export class SerialPortTransport implements SerialTransport {
  private port: NodePortLike | null = null;
  private readonly lines = { dtr: false, rts: false };
  private readonly closeListeners = new Set<(why: string) => void>();
  baudRate = 115200;

  constructor(
    readonly name: string,
    private readonly open: NodePortFactory = defaultFactory,
    readonly usb?: { vendorId: number; productId: number },
  ) {}

  get connected(): boolean {
    return this.port?.isOpen ?? false;
  }

  /** The lines as last set (both always written together). */
  get modemLines(): { dtr: boolean; rts: boolean } {
    return { ...this.lines };
  }

  async connect(baudRate: number): Promise<void> {
    const port = this.open(this.name, baudRate);
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(new PortUnavailableError(`cannot open ${this.name}: ${portProblem(err)}`)) : resolve())));
    this.port = port;
    this.baudRate = baudRate;
    port.on('close', () => {
      if (this.port !== port) return;
      this.port = null;
      for (const l of this.closeListeners) l(`${this.name} closed`);
    });
  }

  async disconnect(): Promise<void> {
    const port = this.port;
    this.port = null;
    if (port?.isOpen) await new Promise<void>((r) => port.close(() => r()));
  }

  private need(): NodePortLike {
    if (!this.port) throw new DisconnectedError(`${this.name} is not open`);
    return this.port;
  }

  read(listener: (bytes: Uint8Array) => void): () => void {
    const port = this.need();
    const onData = (chunk: Buffer) => listener(new Uint8Array(chunk));
    port.on('data', onData);
    return () => port.off('data', onData);
  }

  onClose(listener: (why: string) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  async write(bytes: Uint8Array): Promise<void> {
    const port = this.need();
    return new Promise((resolve, reject) => port.write(Buffer.from(bytes), (err) => (err ? reject(err) : port.drain((e) => (e ? reject(e) : resolve())))));
  }

  async setDTR(asserted: boolean): Promise<void> {
    this.lines.dtr = asserted;
    await this.applyLines();
  }

  async setRTS(asserted: boolean): Promise<void> {
    this.lines.rts = asserted;
    await this.applyLines();
  }

  private applyLines(): Promise<void> {
    const port = this.need();
    return new Promise((resolve, reject) =>
      port.set({ dtr: this.lines.dtr, rts: this.lines.rts }, (err) => {
        if (!err) return resolve();
        if (/ENOTTY|Inappropriate ioctl/i.test(err.message)) return reject(new NoModemLinesError(`${this.name} has no modem lines (a pseudo-terminal?): reset the board with its boot control`));
        reject(err);
      }),
    );
  }

  async setBaudRate(baudRate: number): Promise<void> {
    const port = this.need();
    await new Promise<void>((resolve, reject) => port.update({ baudRate }, (err) => (err ? reject(err) : resolve())));
    this.baudRate = baudRate;
  }

  async purge(): Promise<void> {
    const port = this.need();
    await new Promise<void>((resolve, reject) => port.flush((err) => (err ? reject(err) : resolve())));
  }
}
