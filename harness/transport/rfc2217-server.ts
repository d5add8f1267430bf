// A virtual board's serial console on a TCP port, as an RFC 2217 access server presents a board's
// USB-UART bridge: Espressif's esp_rfc2217_server in front of the bridge (ser2net's handling of the
// line, plus esptool's reset sequences recognised and performed on the server side: auto-reset.ts).
// Data both ways; SET-BAUDRATE sets the host side of the line and is answered with the rate set, as
// ser2net answers (the chip's UART keeps its own rate: a mismatch garbles the bytes, uart.ts
// resample); SET-CONTROL for DTR and RTS (which reach EN and IO0 through the board's auto-reset
// circuit); PURGE-DATA. One client at a time, as a serial port has one user; a second is told so and
// closed. Loopback only.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ResetRecogniser } from './rfc2217-reset.ts';
import { COM, comPortCommand, CONTROL, DO, DONT, escapeData, negotiate, OPT, PURGE, SERVER_REPLY_OFFSET, TelnetParser, u32be, WILL, WONT } from './rfc2217-telnet.ts';

export interface SerialLine {
  /** Bytes the client sent towards the board. */
  data(bytes: Uint8Array): void;
  /** DTR/RTS as the client set them (only the one that changed is given). */
  control(lines: { dtr?: boolean; rts?: boolean }): void;
  /** The rate of the host side of the line: what the client set (DEFAULT_BAUD when a client connects). */
  baud(rate: number): void;
  purgeReceive(): void;
}

const SUPPORTED = new Set<number>([OPT.BINARY, OPT.SGA, OPT.COM_PORT]);

/** The rates the bridge takes (a CP2102N's range, roughly; the chip's UART goes to 5 Mbaud). */
const MIN_BAUD = 300;
const MAX_BAUD = 5_000_000;
/** The port's rate when a client connects (ser2net's configured default). */
export const DEFAULT_BAUD = 115200;

export class Rfc2217Server {
  private client: Socket | null = null;
  /** The host side's rate, as the last client set it. */
  private baud = DEFAULT_BAUD;

  private constructor(
    private readonly server: Server,
    private readonly line: SerialLine,
  ) {}

  static async listen(host: string, line: SerialLine, port = 0): Promise<Rfc2217Server> {
    if (!/^127\.\d+\.\d+\.\d+$/.test(host)) throw new Error(`an RFC 2217 port of a virtual board listens on loopback only, not ${host}`);
    const server = createServer();
    const rfc = new Rfc2217Server(server, line);
    server.on('connection', (s) => rfc.accept(s));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return rfc;
  }

  get url(): string {
    const a = this.server.address() as AddressInfo;
    return `rfc2217://${a.address}:${a.port}`;
  }

  /** Bytes from the board's UART to the client. */
  write(bytes: Uint8Array): void {
    if (this.client && !this.client.destroyed) this.client.write(escapeData(bytes));
  }

  private accept(socket: Socket): void {
    if (this.client && !this.client.destroyed) {
      socket.end('the serial port is in use by another client\r\n');
      return;
    }
    this.client = socket;
    socket.setNoDelay(true);
    // A new client gets the port's defaults, as ser2net applies its configured settings per connection.
    this.baud = DEFAULT_BAUD;
    this.line.baud(DEFAULT_BAUD);
    const lines = new ResetRecogniser((l) => this.line.control(l));
    const agreed = new Set<string>();
    const send = (bytes: Uint8Array) => void (socket.destroyed ? undefined : socket.write(bytes));
    // RFC 2217 section 2: the access server offers binary transmission and the COM port option.
    for (const [verb, option] of [[WILL, OPT.BINARY], [DO, OPT.BINARY], [WILL, OPT.SGA], [DO, OPT.SGA], [DO, OPT.COM_PORT]] as const) {
      agreed.add(`${verb}:${option}`);
      send(negotiate(verb, option));
    }
    const parser = new TelnetParser((e) => {
      if (e.kind === 'data') return this.line.data(e.bytes);
      if (e.kind === 'negotiate') {
        // Agree to what we support, refuse the rest; answer a request only once (RFC 1143's loop rule).
        const answer = e.verb === WILL ? (SUPPORTED.has(e.option) ? DO : DONT) : e.verb === DO ? (SUPPORTED.has(e.option) ? WILL : WONT) : null;
        if (answer !== null && !agreed.has(`${answer}:${e.option}`)) {
          agreed.add(`${answer}:${e.option}`);
          send(negotiate(answer, e.option));
        }
        return;
      }
      if (e.option !== OPT.COM_PORT || e.payload.length === 0) return;
      const [command, ...rest] = e.payload;
      const value = Uint8Array.from(rest);
      const reply = (v: Uint8Array) => send(comPortCommand(command! + SERVER_REPLY_OFFSET, v));
      switch (command) {
        case COM.SET_BAUDRATE: {
          // RFC 2217: a value of 0 asks for the current rate; a rate the line cannot take is refused by answering the one in force.
          const requested = value.length >= 4 ? ((value[0]! << 24) | (value[1]! << 16) | (value[2]! << 8) | value[3]!) >>> 0 : 0;
          if (requested >= MIN_BAUD && requested <= MAX_BAUD) {
            this.baud = requested;
            this.line.baud(requested);
          }
          return reply(u32be(this.baud));
        }
        case COM.SET_CONTROL: {
          const v = value[0] ?? 0;
          if (v === CONTROL.DTR_ON || v === CONTROL.DTR_OFF) lines.set({ dtr: v === CONTROL.DTR_ON });
          if (v === CONTROL.RTS_ON || v === CONTROL.RTS_OFF) lines.set({ rts: v === CONTROL.RTS_ON });
          return reply(Uint8Array.of(v));
        }
        case COM.PURGE_DATA:
          if (value[0] === PURGE.RECEIVE || value[0] === PURGE.BOTH) this.line.purgeReceive();
          return reply(value);
        case COM.SIGNATURE:
          return reply(new TextEncoder().encode('fleet virtual ESP32'));
        default:
          // Data size, parity, stop size, flow control, masks: acknowledged as asked (8N1 is all a UART boot needs).
          return reply(value);
      }
    });
    socket.on('data', (chunk: Buffer) => parser.push(chunk));
    const gone = () => {
      if (this.client !== socket) return;
      this.client = null;
      // A port closed by its user drops DTR and RTS (as a USB-UART bridge does).
      lines.hangUp();
    };
    socket.on('close', gone);
    socket.on('error', gone);
  }

  async close(): Promise<void> {
    this.client?.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
