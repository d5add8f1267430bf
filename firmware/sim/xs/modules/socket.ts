// `socket` (modules/network/socket/socket.js over lwip/modSocket.c, documentation/network/network.md
// "Socket"): TCP sockets and listeners with the callback protocol of the classic SDK. What the
// firmware sees, as on lwIP:
// - Messages: 1 connected, 2 readable (value: bytes of the current segment), 3 writable (value:
//   tcp_sndbuf), -1 disconnected, -2 error.
// - A read never spans two received segments (pbufs): `read()` answers what is left of the current
//   one; once it is consumed the next one comes with a new readable message. `read(String, "\n")`
//   stops after the terminator or at the segment's end; `read(null, n)` skips; reading with a type
//   when nothing is left throws "nothing to read".
// - `write()` answers the free send buffer; a write larger than that throws "can't write all data".
// - Flow control: the bytes the firmware has not read stay with the host, at most one TCP window;
//   a peer that sends more waits (TCP backpressure), and the host never buffers a whole body.
import { arrayBufferOf, bytesOf, hostCall, newId, onEvent } from '../host.ts';
import { utf8Decode } from '../../../src/core/bytes.ts';

/**
 * modSocket.c copies the bytes into an XS string unchecked: a peer's invalid UTF-8 (a Latin-1 byte
 * in a request line) reaches the app as it came. Here such bytes become one character each.
 */
function stringOf(bytes: Uint8Array): string {
  try {
    return utf8Decode(bytes);
  } catch {
    let text = '';
    for (const b of bytes) text += String.fromCharCode(b);
    return text;
  }
}

export const SOCKET_MESSAGE = { connected: 1, readable: 2, writable: 3, disconnected: -1, error: -2 } as const;

type Callback = (message: number, value?: number) => void;
const sockets = new Map<number, Socket>();
const listeners = new Map<number, Listener>();

onEvent('socket', (event) => {
  const socket = sockets.get(event.id!);
  if (!socket) return;
  socket._report(event.message as number, event.value as number | undefined);
});

onEvent('listener', (event) => {
  const listener = listeners.get(event.id!);
  listener?.callback?.call(listener, listener);
});

export interface SocketDictionary {
  host?: string;
  address?: string;
  port?: number;
  listener?: Listener;
  noDelay?: boolean;
  keepalive?: unknown;
  secure?: { certificate?: ArrayBuffer; protocolVersion?: number; [option: string]: unknown };
}

export class Socket {
  callback: Callback | undefined;
  readonly #id: number;
  #available = 0;
  #free = 0;
  #open = true;

  constructor(dictionary: SocketDictionary) {
    if (dictionary.listener) {
      const listenerId = (dictionary.listener as unknown as { _id: number })._id;
      const accepted = hostCall('tcp.accept', { listener: listenerId }).value as { id: number; free: number } | null;
      if (!accepted) throw new Error('no socket avaiable from listener');
      this.#id = accepted.id;
      this.#free = accepted.free;
    } else {
      const host = dictionary.host ?? dictionary.address;
      if (typeof host !== 'string' || dictionary.port === undefined) throw new Error('invalid dictionary');
      this.#id = newId();
      const tls = dictionary.secure ? { ca: dictionary.secure.certificate ? Array.from(new Uint8Array(dictionary.secure.certificate)) : null } : null;
      hostCall('tcp.connect', { id: this.#id, host, port: dictionary.port, tls });
    }
    sockets.set(this.#id, this);
  }

  /** The host's report: keeps this socket's view of lwIP current, then tells the owner. */
  _report(message: number, value?: number): void {
    if (!this.#open) return;
    if (message === SOCKET_MESSAGE.readable) this.#available = value ?? 0;
    else if (message === SOCKET_MESSAGE.writable || message === SOCKET_MESSAGE.connected) this.#free = value ?? this.#free;
    if (message < 0) this.#finish();
    this.callback?.call(this, message, message === SOCKET_MESSAGE.connected ? undefined : value);
  }

  read(): number;
  read(type: unknown, limit?: number | string): any;
  read(...args: unknown[]): any {
    if (!this.#open) throw new Error('read on closed socket');
    if (args.length === 0) return this.#available;
    if (this.#available === 0) throw new Error('nothing to read');
    const [type, limit] = args;
    const until = typeof limit === 'string' && limit.length > 0 ? limit.charCodeAt(0) : undefined;
    const max = typeof limit === 'number' ? limit : this.#available;
    const asNumber = type === Number;
    const reply = hostCall('tcp.read', { id: this.#id, max: asNumber ? 1 : max, until: until ?? null, discard: type === null });
    this.#available = reply.value.rest as number;
    if (type === null) return reply.value.count as number;
    if (type === String) return stringOf(reply.payload);
    if (asNumber) return reply.payload[0];
    if (type === ArrayBuffer) return arrayBufferOf(reply.payload);
    throw new Error('unsupported output type');
  }

  write(): number;
  write(...data: (string | ArrayBuffer | ArrayBufferView)[]): void;
  write(...data: (string | ArrayBuffer | ArrayBufferView)[]): number | void {
    if (!this.#open) throw new Error('write on closed socket');
    if (data.length === 0) return this.#free;
    const parts = data.map((d) => bytesOf(d));
    const needed = parts.reduce((n, p) => n + p.length, 0);
    if (needed > this.#free) throw new Error("can't write all data");
    if (needed === 0) return;
    const joined = parts.length === 1 ? parts[0]! : new Uint8Array(needed);
    if (parts.length > 1) {
      let at = 0;
      for (const p of parts) {
        joined.set(p, at);
        at += p.length;
      }
    }
    this.#free = hostCall('tcp.write', { id: this.#id }, joined).value as number;
  }

  get(what: string): string | undefined {
    if (what !== 'REMOTE_IP') return undefined;
    return (hostCall('tcp.remote', { id: this.#id }).value as string | null) ?? undefined;
  }

  close(): void {
    if (!this.#open) return;
    this.#finish();
    hostCall('tcp.close', { id: this.#id });
  }

  #finish(): void {
    this.#open = false;
    this.#available = 0;
    sockets.delete(this.#id);
  }
}

export class Listener {
  callback: ((this: Listener, listener: Listener) => void) | undefined;
  readonly _id = newId();

  constructor(dictionary: { port?: number; address?: string }) {
    hostCall('tcp.listen', { id: this._id, port: dictionary.port ?? 80, address: dictionary.address ?? null });
    listeners.set(this._id, this);
  }

  close(): void {
    if (!listeners.delete(this._id)) return;
    hostCall('tcp.unlisten', { id: this._id });
  }
}
