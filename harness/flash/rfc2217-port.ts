// A serial port on an RFC 2217 access server (ser2net, esp_rfc2217_server, a virtual board's
// console port) in the Web Serial shape esptool-js expects: telnet with the COM-PORT-OPTION
// (firmware/host/rfc2217/telnet.ts), SET-BAUDRATE on open and on a rate change, SET-CONTROL for DTR
// and RTS, each awaited until the server acknowledges it, so that a reset sequence keeps its order
// and timing.
import { connect, type Socket } from 'node:net';
import { TimeoutError } from '../board.ts';
import { COM, comPortCommand, CONTROL, DO, escapeData, negotiate, OPT, SERVER_REPLY_OFFSET, TelnetParser, u32be, WILL } from '../../firmware/host/rfc2217/telnet.ts';
import { byteStream, type SerialSignals, type WebSerialPortLike } from './web-serial.ts';

/** How long an RFC 2217 command may wait for the server's acknowledgement. */
const ACK_TIMEOUT_MS = 3000;

export class Rfc2217Port implements WebSerialPortLike {
  readable: ReadableStream<Uint8Array> | null = null;
  writable: WritableStream<Uint8Array> | null = null;
  private socket: Socket | null = null;
  private readonly waiting = new Map<number, ((value: Uint8Array) => void)[]>();
  private data: ((bytes: Uint8Array) => void) | null = null;

  constructor(readonly url: string) {
    if (!/^rfc2217:\/\/[^/:]+:\d+$/.test(url)) throw new Error(`not an rfc2217://host:port URL: ${url}`);
  }

  getInfo(): Record<string, never> {
    return {};
  }

  async open(options: { baudRate: number }): Promise<void> {
    const { hostname, port } = new URL(this.url.replace(/^rfc2217:/, 'http:'));
    const socket = connect({ host: hostname, port: Number(port) });
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    this.socket = socket;
    const parser = new TelnetParser((e) => {
      if (e.kind === 'data') this.data?.(e.bytes);
      else if (e.kind === 'sub' && e.option === OPT.COM_PORT && e.payload.length > 0) {
        const queue = this.waiting.get(e.payload[0]!);
        queue?.shift()?.(e.payload.subarray(1));
      }
    });
    socket.on('data', (chunk: Buffer) => parser.push(chunk));
    this.readable = byteStream((push, end) => {
      this.data = push;
      socket.once('close', end);
      return () => (this.data = null);
    });
    this.writable = new WritableStream<Uint8Array>({
      write: (chunk) => new Promise<void>((resolve, reject) => socket.write(escapeData(chunk), (err) => (err ? reject(err) : resolve()))),
    });
    // RFC 2217 section 2: the client offers the COM port option; binary both ways for 8-bit data.
    for (const [verb, option] of [[WILL, OPT.COM_PORT], [WILL, OPT.BINARY], [DO, OPT.BINARY], [WILL, OPT.SGA], [DO, OPT.SGA]] as const) socket.write(negotiate(verb, option));
    await this.setBaudRate(options.baudRate);
  }

  private command(command: number, value: Uint8Array, what: string): Promise<Uint8Array> {
    const socket = this.socket;
    if (!socket) return Promise.reject(new Error(`${this.url} is not open`));
    return new Promise((resolve, reject) => {
      const reply = command + SERVER_REPLY_OFFSET;
      const queue = this.waiting.get(reply) ?? [];
      this.waiting.set(reply, queue);
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(done), 1);
        reject(new TimeoutError(`${this.url} to acknowledge ${what}`, ACK_TIMEOUT_MS));
      }, ACK_TIMEOUT_MS);
      const done = (v: Uint8Array) => {
        clearTimeout(timer);
        resolve(v);
      };
      queue.push(done);
      socket.write(comPortCommand(command, value));
    });
  }

  async setBaudRate(baudRate: number): Promise<void> {
    await this.command(COM.SET_BAUDRATE, u32be(baudRate), `SET-BAUDRATE ${baudRate}`);
  }

  /** DTR first, then RTS, each acknowledged before the next. */
  async setSignals(signals: SerialSignals): Promise<void> {
    if (signals.dataTerminalReady !== undefined) {
      const v = signals.dataTerminalReady ? CONTROL.DTR_ON : CONTROL.DTR_OFF;
      await this.command(COM.SET_CONTROL, Uint8Array.of(v), `SET-CONTROL DTR ${signals.dataTerminalReady ? 'on' : 'off'}`);
    }
    if (signals.requestToSend !== undefined) {
      const v = signals.requestToSend ? CONTROL.RTS_ON : CONTROL.RTS_OFF;
      await this.command(COM.SET_CONTROL, Uint8Array.of(v), `SET-CONTROL RTS ${signals.requestToSend ? 'on' : 'off'}`);
    }
  }

  async close(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    this.readable = null;
    this.writable = null;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((r) => {
      socket.once('close', () => r());
      socket.end();
      setTimeout(() => socket.destroy(), 500).unref();
    });
  }
}
