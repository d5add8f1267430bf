// The host side of the emulated `socket` module (firmware/sim/xs/modules/socket.ts): the board's TCP
// connections, with the flow control of lwIP as ESP-IDF configures it (TCP_MSS 1440, TCP_WND and
// TCP_SND_BUF 5760). What a peer sends is cut into segments of at most one MSS; the firmware reads
// one segment at a time and learns of the next in a new "readable" report. At most one window of
// unread bytes is held: then the host stops reading the peer's socket, so TCP itself slows the peer
// (a slow or stuck client holds only its own connection). Writes are taken while the send buffer
// has room; "writable" reports follow as the bytes leave. Listeners keep their loopback address and
// port for the board's life (an interface keeps its address over a reset), and the host never waits
// on a peer inside a call from the firmware.
import { connect as netConnect, createServer, type Server, type Socket as NetSocket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export const TCP_MSS = 1440;
export const TCP_WND = 5760;
export const TCP_SND_BUF = 5760;
/** Connections a listener holds before the firmware accepts them (lwIP's listen backlog). */
export const LISTEN_BACKLOG = 8;
const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|::1)$/;
/** Ids of accepted sockets: apart from the ids the firmware picks for its own connections. */
const FIRST_ACCEPTED_ID = 1_000_000;

export type SocketEvent = { kind: 'socket'; id: number; message: number; value?: number } | { kind: 'listener'; id: number };

interface Conn {
  id: number;
  net: NetSocket;
  segments: Buffer[];
  current: Buffer | null;
  at: number;
  held: number;
  reported: boolean;
  readablePending: boolean;
  unacked: number;
  writablePending: boolean;
  peerEnded: boolean;
  gone: boolean;
  /** Accepted from a listener (not one the firmware opened). */
  inbound: boolean;
  /** The firmware has written to it (an answer has begun). */
  wrote: boolean;
}

interface Bound {
  server: Server;
  port: number;
  listener: number | null;
  backlog: NetSocket[];
}

export interface TcpOptions {
  /** Delivers an event into the firmware (queued behind other commands). */
  emit: (event: SocketEvent) => void;
  /** Where the firmware's listeners bound (address, port): the board's URLs. */
  onBound?: (address: string, port: number) => void;
  /** A connection arrived while the firmware has no listener on that address. */
  onRefused?: (address: string, socket: NetSocket) => void;
}

export class SimTcp {
  private readonly conns = new Map<number, Conn>();
  private readonly bound = new Map<string, Bound>();
  private readonly listenerAddress = new Map<number, string>();
  private nextAccepted = FIRST_ACCEPTED_ID;
  /** Every peer socket not yet closed, including those the firmware has let go (closing gracefully). */
  private readonly open = new Set<NetSocket>();

  constructor(private readonly o: TcpOptions) {}

  /** The firmware's Listener: binds (or re-binds) the address; resolves once the host listens. */
  async listen(id: number, address: string | null): Promise<void> {
    if (!address || !LOOPBACK.test(address)) throw new Error(`socket bind failed: ${address} is not an address of this board`);
    let b = this.bound.get(address);
    if (!b) {
      const server = createServer({ noDelay: true }, (socket) => this.arrived(address, socket));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, address, () => resolve());
      });
      b = { server, port: (server.address() as { port: number }).port, listener: null, backlog: [] };
      this.bound.set(address, b);
    }
    if (b.listener !== null) throw new Error('socket bind failed: address in use');
    b.listener = id;
    this.listenerAddress.set(id, address);
    this.o.onBound?.(address, b.port);
  }

  /** Whether the firmware has a listener on `address` now. */
  listening(address: string): boolean {
    return (this.bound.get(address)?.listener ?? null) !== null;
  }

  unlisten(id: number): void {
    const address = this.listenerAddress.get(id);
    this.listenerAddress.delete(id);
    const b = address === undefined ? undefined : this.bound.get(address);
    if (!b || b.listener !== id) return;
    b.listener = null;
    for (const s of b.backlog) s.destroy();
    b.backlog = [];
  }

  accept(listener: number): { id: number; free: number } | null {
    const address = this.listenerAddress.get(listener);
    const b = address === undefined ? undefined : this.bound.get(address);
    const net = b?.backlog.shift();
    if (!net) return null;
    const id = this.nextAccepted++;
    this.attach(id, net).inbound = true;
    return { id, free: TCP_SND_BUF };
  }

  connect(id: number, host: string, port: number, tls: { ca: number[] | null } | null): void {
    if (!LOOPBACK.test(host)) throw new Error(`${host} is not a loopback address: a virtual board only reaches this machine`);
    const net = tls
      ? tlsConnect({ host, port, ...(tls.ca ? { ca: derToPem(Buffer.from(tls.ca)) } : {}), servername: /^\d/.test(host) ? undefined : host })
      : netConnect({ host, port, noDelay: true });
    const conn = this.attach(id, net, false);
    net.once(tls ? 'secureConnect' : 'connect', () => {
      if (!conn.gone) this.o.emit({ kind: 'socket', id, message: 1, value: TCP_SND_BUF });
    });
  }

  /** Reads from the current segment: at most `max` bytes, up to and including `until`; or skips them. */
  read(id: number, max: number, until: number | null, discard: boolean): { count: number; rest: number; bytes: Buffer } {
    const c = this.conns.get(id);
    if (!c || !c.current) return { count: 0, rest: 0, bytes: Buffer.alloc(0) };
    let n = Math.min(Math.max(0, max), c.current.length - c.at);
    if (until !== null) {
      const at = c.current.indexOf(until, c.at);
      if (at >= 0 && at < c.at + n) n = at - c.at + 1;
    }
    const bytes = c.current.subarray(c.at, c.at + n);
    c.at += n;
    c.held -= n;
    const rest = c.current.length - c.at;
    if (rest === 0) {
      c.current = null;
      c.reported = false;
      if (c.net.isPaused() && c.held < TCP_WND) c.net.resume(); // the window opens again
      this.pump(c);
    }
    return { count: n, rest, bytes: discard ? Buffer.alloc(0) : Buffer.from(bytes) };
  }

  write(id: number, bytes: Uint8Array): number {
    const c = this.conns.get(id);
    if (!c || c.gone) throw new Error('write on closed socket');
    if (bytes.length > TCP_SND_BUF - c.unacked) throw new Error("can't write all data");
    c.unacked += bytes.length;
    c.wrote = true;
    c.net.write(bytes, () => {
      c.unacked -= bytes.length;
      this.reportWritable(c);
    });
    return TCP_SND_BUF - c.unacked;
  }

  remote(id: number): string | null {
    return this.conns.get(id)?.net.remoteAddress?.replace(/^::ffff:/, '') ?? null;
  }

  /** The firmware closed it: what was written is sent, then FIN. */
  close(id: number): void {
    const c = this.conns.get(id);
    if (!c) return;
    this.forget(c);
    c.net.end();
  }

  /**
   * The engine stopped (a reset, power off): every connection is cut, listeners forget the firmware.
   * `unanswered`, when given, takes the accepted and queued connections that have no answer yet
   * (the bench's stand-in answers them while the board restarts); the others are cut.
   */
  resetAll(unanswered?: (socket: NetSocket) => void): void {
    for (const c of this.conns.values()) {
      c.gone = true;
      if (unanswered && c.inbound && !c.wrote && !c.net.destroyed) unanswered(c.net);
      else c.net.destroy();
    }
    this.conns.clear();
    for (const b of this.bound.values()) {
      b.listener = null;
      for (const s of b.backlog) (unanswered ?? ((q: NetSocket) => q.destroy()))(s);
      b.backlog = [];
    }
    this.listenerAddress.clear();
  }

  async closeAll(): Promise<void> {
    this.resetAll();
    for (const s of this.open) s.destroy();
    await Promise.all([...this.bound.values()].map((b) => new Promise<void>((r) => b.server.close(() => r()))));
    this.bound.clear();
  }

  /** Bytes received and not yet read by the firmware, over all connections (at most one window each). */
  get heldBytes(): number {
    let n = 0;
    for (const c of this.conns.values()) n += c.held;
    return n;
  }

  /** Connections open now (tests: nothing leaks). */
  get openConnections(): number {
    return this.conns.size;
  }

  private arrived(address: string, socket: NetSocket): void {
    const b = this.bound.get(address)!;
    this.track(socket);
    socket.on('error', () => undefined);
    if (b.listener === null) return this.o.onRefused ? this.o.onRefused(address, socket) : void socket.destroy();
    if (b.backlog.length >= LISTEN_BACKLOG) return void socket.destroy(); // lwIP: backlog full, RST
    b.backlog.push(socket);
    socket.pause(); // nothing is read before the firmware accepts it
    socket.once('close', () => {
      const i = b.backlog.indexOf(socket);
      if (i >= 0) b.backlog.splice(i, 1);
    });
    this.o.emit({ kind: 'listener', id: b.listener });
  }

  private attach(id: number, net: NetSocket, connected = true): Conn {
    this.track(net);
    const c: Conn = { id, net, segments: [], current: null, at: 0, held: 0, reported: false, readablePending: false, unacked: 0, writablePending: false, peerEnded: false, gone: false, inbound: false, wrote: false };
    this.conns.set(id, c);
    net.on('error', () => undefined);
    net.on('data', (chunk: Buffer) => {
      // Only one window is taken in; the rest goes back to the stream (bytes still in flight) and
      // the stream pauses until the firmware has read enough to open the window again.
      const room = TCP_WND - c.held;
      if (chunk.length > room) {
        net.pause();
        net.unshift(chunk.subarray(room));
        chunk = chunk.subarray(0, room);
      }
      for (let at = 0; at < chunk.length; at += TCP_MSS) c.segments.push(chunk.subarray(at, at + TCP_MSS));
      c.held += chunk.length;
      if (c.held >= TCP_WND) net.pause();
      this.pump(c);
    });
    net.on('end', () => {
      c.peerEnded = true;
      this.pump(c);
    });
    net.on('close', () => {
      c.peerEnded = true;
      c.segments = c.segments.length || c.current ? c.segments : [];
      this.pump(c);
    });
    if (connected) net.resume();
    return c;
  }

  /** Makes the next segment current and reports it, or reports the end once everything was read. */
  private pump(c: Conn): void {
    if (c.gone || c.readablePending) return;
    if (!c.current && c.segments.length > 0) {
      c.current = Buffer.concat([c.segments.shift()!]);
      c.at = 0;
      c.reported = false;
    }
    if (c.current && c.reported) return;
    if (!c.current && !c.peerEnded) return;
    c.readablePending = true;
    setImmediate(() => {
      c.readablePending = false;
      if (c.gone) return;
      if (c.current) {
        c.reported = true;
        this.o.emit({ kind: 'socket', id: c.id, message: 2, value: c.current.length - c.at });
      } else if (c.peerEnded) {
        this.forget(c);
        c.net.end();
        this.o.emit({ kind: 'socket', id: c.id, message: -1 });
      }
    });
  }

  private reportWritable(c: Conn): void {
    if (c.gone || c.writablePending) return;
    c.writablePending = true;
    setImmediate(() => {
      c.writablePending = false;
      if (!c.gone) this.o.emit({ kind: 'socket', id: c.id, message: 3, value: TCP_SND_BUF - c.unacked });
    });
  }

  private track(socket: NetSocket): void {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
  }

  private forget(c: Conn): void {
    c.gone = true;
    this.conns.delete(c.id);
  }
}

function derToPem(der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}
