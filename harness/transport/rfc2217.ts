// A client of RFC 2217 access servers (ser2net, esp_rfc2217_server, a virtual board's console port):
// telnet (RFC 854) with option negotiation (RFC 855; BINARY, RFC 856, and SUPPRESS-GO-AHEAD, RFC 858,
// both ways) and the COM-PORT-OPTION (44): 8N1 and no flow control at connect, SET-BAUDRATE,
// SET-CONTROL for DTR and RTS, PURGE-DATA. Every command waits for the server's answer (command +
// 100) before the next, so a reset sequence keeps its order and timing across the network. IAC
// (0xFF) in data is doubled both ways (harness/transport/rfc2217-telnet.ts, shared with the server).
import { connect, type Socket } from 'node:net';
import { COM, comPortCommand, CONTROL, DO, DONT, escapeData, negotiate, OPT, PURGE, SERVER_REPLY_OFFSET, TelnetParser, u32be, WILL, WONT } from '../../harness/transport/rfc2217-telnet.ts';
import { TimeoutError } from './transport.ts';
import { DisconnectedError, PORT_IN_USE, PortUnavailableError, portProblem, type SerialTransport } from './transport.ts';

/** RFC 2217 SET-PARITY 1 = NONE, SET-STOPSIZE 1 = one stop bit, SET-CONTROL 1 = no flow control. */
const PARITY_NONE = 1;
const STOPSIZE_ONE = 1;
const FLOW_NONE = 1;

/** Options we agree to: ours (we WILL) and the server's (we DO). */
const LOCAL_OK = new Set<number>([OPT.BINARY, OPT.SGA, OPT.COM_PORT]);
const REMOTE_OK = new Set<number>([OPT.BINARY, OPT.SGA]);

export interface Rfc2217Options {
  /** How long the TCP connection and the server's DO COM-PORT-OPTION may take. */
  connectTimeoutMs?: number;
  /** How long one COM-PORT command may wait for the server's answer. */
  ackTimeoutMs?: number;
}

export function parseRfc2217Url(url: string): { host: string; port: number } {
  const m = /^rfc2217:\/\/(\[[0-9a-fA-F:]+\]|[^/:[\]]+):(\d{1,5})\/?$/.exec(url);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) throw new PortUnavailableError(`not an rfc2217://host:port URL: ${url}`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

export class Rfc2217Transport implements SerialTransport {
  private socket: Socket | null = null;
  private readonly waiting = new Map<number, ((value: Uint8Array) => void)[]>();
  private readonly listeners = new Set<(bytes: Uint8Array) => void>();
  private readonly closeListeners = new Set<(why: string) => void>();
  /** Options in force: ours (WILL) and the server's (DO). */
  private readonly local = new Set<number>();
  private readonly remote = new Set<number>();
  /** What the server answered SET-BAUDRATE with (the rate in force there). */
  serverBaudRate = 0;
  baudRate = 115200;
  /** Lines as last acknowledged. */
  readonly modemLines = { dtr: false, rts: false };
  private readonly connectTimeoutMs: number;
  private readonly ackTimeoutMs: number;

  constructor(
    readonly name: string,
    o: Rfc2217Options = {},
  ) {
    parseRfc2217Url(name);
    this.connectTimeoutMs = o.connectTimeoutMs ?? 5000;
    this.ackTimeoutMs = o.ackTimeoutMs ?? 3000;
  }

  get connected(): boolean {
    return this.socket !== null && !this.socket.destroyed;
  }

  async connect(baudRate: number): Promise<void> {
    const { host, port } = parseRfc2217Url(this.name);
    const socket = connect({ host, port });
    socket.setNoDelay(true);
    const failure = (err: Error) => new PortUnavailableError(`cannot reach ${this.name}: ${portProblem(err)}`);
    await this.within(`a TCP connection to ${this.name}`, new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', (err) => reject(failure(err)));
    }), () => socket.destroy());
    this.socket = socket;
    this.local.clear();
    this.remote.clear();
    let comPort!: { resolve: () => void; reject: (e: Error) => void };
    const agreed = new Promise<void>((resolve, reject) => (comPort = { resolve, reject }));
    // What the server says before it agrees (ser2net and our server say why they hang up on a second client).
    let said = '';
    let agreedYet = false;
    void agreed.then(() => (agreedYet = true), () => undefined);
    const parser = new TelnetParser((e) => {
      if (e.kind === 'data' && !agreedYet && said.length < 200) said += Buffer.from(e.bytes).toString('latin1');
      if (e.kind === 'data') for (const l of this.listeners) l(e.bytes);
      else if (e.kind === 'negotiate') this.negotiated(e.verb, e.option, comPort);
      else if (e.option === OPT.COM_PORT && e.payload.length > 0) this.waiting.get(e.payload[0]!)?.shift()?.(e.payload.subarray(1));
      // NOTIFY-LINESTATE / NOTIFY-MODEMSTATE without a waiter: nothing here asks for them.
    });
    socket.on('data', (chunk: Buffer) => parser.push(chunk));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (this.socket === socket) this.socket = null;
      const why = said.replace(/[^\x20-\x7e]+/g, ' ').trim();
      comPort.reject(new PortUnavailableError(/in use/i.test(why) ? `cannot open ${this.name}: ${PORT_IN_USE} (the server said: ${why})` : `${this.name} closed the connection during negotiation (another client on the port?)`));
      for (const l of this.closeListeners) l(`${this.name} closed the connection`);
    });
    // RFC 2217 section 2: the client offers the COM port option; 8-bit data and no go-aheads both ways.
    this.offer(WILL, OPT.COM_PORT);
    this.offer(WILL, OPT.BINARY);
    this.offer(DO, OPT.BINARY);
    this.offer(WILL, OPT.SGA);
    this.offer(DO, OPT.SGA);
    try {
      await this.within(`${this.name} to agree to the COM-PORT-OPTION (DO 44): is it an RFC 2217 server?`, agreed);
      await this.command(COM.SET_DATASIZE, Uint8Array.of(8), 'SET-DATASIZE 8');
      await this.command(COM.SET_PARITY, Uint8Array.of(PARITY_NONE), 'SET-PARITY NONE');
      await this.command(COM.SET_STOPSIZE, Uint8Array.of(STOPSIZE_ONE), 'SET-STOPSIZE 1');
      await this.command(COM.SET_CONTROL, Uint8Array.of(FLOW_NONE), 'SET-CONTROL no flow control');
      await this.setBaudRate(baudRate);
    } catch (err) {
      await this.disconnect();
      throw err;
    }
  }

  private offer(verb: number, option: number): void {
    // Our own requests count as agreed once answered in kind; recording them now keeps us from
    // answering the server's acknowledgement again (RFC 854: do not acknowledge a state already in force).
    (verb === WILL ? this.local : this.remote).add(option);
    this.socket?.write(negotiate(verb, option));
  }

  private negotiated(verb: number, option: number, comPort: { resolve: () => void; reject: (e: Error) => void }): void {
    const send = (v: number) => this.socket?.write(negotiate(v, option));
    if (verb === DO) {
      if (!LOCAL_OK.has(option)) return void send(WONT);
      if (!this.local.has(option)) {
        this.local.add(option);
        send(WILL);
      }
      if (option === OPT.COM_PORT) comPort.resolve();
    } else if (verb === DONT) {
      if (option === OPT.COM_PORT) comPort.reject(new PortUnavailableError(`${this.name} refused the COM-PORT-OPTION (DONT 44): not an RFC 2217 port`));
      if (this.local.delete(option)) send(WONT);
    } else if (verb === WILL) {
      if (!REMOTE_OK.has(option)) return void send(DONT);
      if (!this.remote.has(option)) {
        this.remote.add(option);
        send(DO);
      }
    } else if (verb === WONT) {
      if (this.remote.delete(option)) send(DONT);
    }
  }

  private async within<T>(what: string, p: Promise<T>, onTimeout?: () => void): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        p,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            onTimeout?.();
            reject(new TimeoutError(what, this.connectTimeoutMs));
          }, this.connectTimeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One COM-PORT command, resolved with the server's answer's value. */
  private command(command: number, value: Uint8Array, what: string): Promise<Uint8Array> {
    const socket = this.socket;
    if (!socket || socket.destroyed) return Promise.reject(new DisconnectedError(`${this.name} is not connected`));
    return new Promise((resolve, reject) => {
      const reply = command + SERVER_REPLY_OFFSET;
      const queue = this.waiting.get(reply) ?? [];
      this.waiting.set(reply, queue);
      const done = (v: Uint8Array) => {
        clearTimeout(timer);
        socket.off('close', gone);
        resolve(v);
      };
      const gone = () => {
        clearTimeout(timer);
        reject(new DisconnectedError(`${this.name} closed while waiting for the answer to ${what}`));
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(done), 1);
        socket.off('close', gone);
        reject(new TimeoutError(`${this.name} to acknowledge ${what}`, this.ackTimeoutMs));
      }, this.ackTimeoutMs);
      socket.once('close', gone);
      queue.push(done);
      socket.write(comPortCommand(command, value));
    });
  }

  read(listener: (bytes: Uint8Array) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onClose(listener: (why: string) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  write(bytes: Uint8Array): Promise<void> {
    const socket = this.socket;
    if (!socket || socket.destroyed) return Promise.reject(new DisconnectedError(`${this.name} is not connected`));
    return new Promise((resolve, reject) => socket.write(escapeData(bytes), (err) => (err ? reject(err) : resolve())));
  }

  async setBaudRate(baudRate: number): Promise<void> {
    const answer = await this.command(COM.SET_BAUDRATE, u32be(baudRate), `SET-BAUDRATE ${baudRate}`);
    this.serverBaudRate = answer.length >= 4 ? ((answer[0]! << 24) | (answer[1]! << 16) | (answer[2]! << 8) | answer[3]!) >>> 0 : 0;
    this.baudRate = baudRate;
  }

  async setDTR(asserted: boolean): Promise<void> {
    await this.command(COM.SET_CONTROL, Uint8Array.of(asserted ? CONTROL.DTR_ON : CONTROL.DTR_OFF), `SET-CONTROL DTR ${asserted ? 'on' : 'off'}`);
    this.modemLines.dtr = asserted;
  }

  async setRTS(asserted: boolean): Promise<void> {
    await this.command(COM.SET_CONTROL, Uint8Array.of(asserted ? CONTROL.RTS_ON : CONTROL.RTS_OFF), `SET-CONTROL RTS ${asserted ? 'on' : 'off'}`);
    this.modemLines.rts = asserted;
  }

  async purge(): Promise<void> {
    await this.command(COM.PURGE_DATA, Uint8Array.of(PURGE.BOTH), 'PURGE-DATA both');
  }

  async disconnect(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((r) => {
      socket.once('close', () => r());
      socket.end();
      setTimeout(() => socket.destroy(), 500).unref();
    });
  }
}
