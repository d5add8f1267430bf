// `http` (modules/network/http/http.js, documentation/network/network.md "HTTP Request" and "HTTP
// Server"), written for the emulation from that documentation and the SDK's observable behaviour,
// over the emulated `socket` (socket.ts). What the firmware relies on, kept as the SDK has it:
// - Server: one Listener per Server ({port, address}); per connection the callback runs with `this`
//   the connection and messages connection 1, status 2 (path, method), header 3 (lower-case name,
//   value), headersComplete 4 (answer true: requestFragment 5 messages; String or ArrayBuffer: the
//   whole body in requestComplete 6; false: the body is skipped), prepareResponse 8 (answered
//   synchronously: {status, headers: [name, value, ...], body}), responseFragment 9 (answered
//   synchronously with the next piece, undefined at the end), responseComplete 10, error -1.
//   Every response carries "connection: close" and the connection closes after it. A chunked
//   request body is an error (the connection is dropped). `detach(connection)` hands the socket
//   over (the WebSocket path) and the server forgets the connection.
// - Request: messages requestFragment 0 (answered synchronously with a piece of at most the value's
//   bytes, undefined at the end), status 1, header 2, headersComplete 3, responseFragment 4 (read it
//   with `read`), responseComplete 5, error -2. "Connection: close" and "Host" are added; a body
//   that is a buffer gets its content-length.
import Timer from './timer.ts';
import { Listener, Socket, SOCKET_MESSAGE, type SocketDictionary } from './socket.ts';

type ServerCallback = (this: Connection, message: number, value?: unknown, etc?: unknown) => unknown;
type BodyKind = typeof String | typeof ArrayBuffer;

const REASONS: Record<number, string> = { 200: 'OK', 204: 'No Content', 400: 'Bad Request', 404: 'Not Found', 500: 'Internal Server Error' };

function bodyLength(body: unknown): number {
  if (typeof body === 'string') return body.length;
  if (body instanceof ArrayBuffer) return body.byteLength;
  if (ArrayBuffer.isView(body)) return body.byteLength;
  return 0;
}

function concatBuffers(buffers: ArrayBuffer[]): ArrayBuffer {
  const total = buffers.reduce((n, b) => n + b.byteLength, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const b of buffers) {
    out.set(new Uint8Array(b), at);
    at += b.byteLength;
  }
  return out.buffer;
}

/** One accepted connection of a Server: `this` in the server's callback. */
export class Connection {
  socket: Socket | undefined;
  server: Server | undefined;
  callback: ServerCallback | undefined;
  state: 'status' | 'headers' | 'body' | 'respond' | 'response-body' | 'done' | 'closed' = 'status';
  private line = '';
  private total: number | undefined;
  private bodyKind: BodyKind | true | false | undefined;
  private buffers: (string | ArrayBuffer)[] = [];
  private responseBody: unknown;
  private streamed = false;

  constructor(socket: Socket, server: Server) {
    this.socket = socket;
    this.server = server;
    socket.callback = (message, value) => this.onSocket(message, value);
  }

  /** What the callback reads during requestFragment: the body's bytes that have arrived. */
  read(type?: unknown, limit?: number): unknown {
    const socket = this.socket;
    if (!socket) return undefined;
    const available = Math.min(socket.read(), this.total ?? 0);
    if (type === undefined) return available;
    const count = Math.min(available, limit ?? available);
    if (count === 0) return undefined;
    this.total = (this.total ?? 0) - count;
    return socket.read(type, count);
  }

  close(): void {
    this.state = 'closed';
    try {
      this.socket?.close();
    } catch {
      /* already closed */
    }
    this.socket = undefined;
    this.server?._forget(this);
    this.server = undefined;
  }

  private notify(message: number, value?: unknown, etc?: unknown): unknown {
    return this.callback?.call(this, message, value, etc);
  }

  private onSocket(message: number, value?: number): void {
    try {
      if (message === SOCKET_MESSAGE.readable) this.readable();
      if (message === SOCKET_MESSAGE.writable || (this.state === 'respond' && message === SOCKET_MESSAGE.readable)) this.writable();
      if (message < 0) {
        const done = this.state === 'done';
        this.close();
        this.notify(done ? Server.responseComplete : Server.error);
      }
    } catch {
      const wasDone = this.state === 'done';
      this.close();
      try {
        this.notify(wasDone ? Server.responseComplete : Server.error);
      } catch {
        /* the app's error handler threw: nothing more to do */
      }
    }
    void value;
  }

  private readable(): void {
    const socket = this.socket;
    while (socket && (this.state === 'status' || this.state === 'headers') && socket.read() > 0) {
      const piece = socket.read(String, '\n') as string;
      const line = this.line + piece;
      if (!line.endsWith('\n')) {
        this.line = line;
        continue;
      }
      this.line = '';
      if (line === '\r\n' || line === '\n') return this.headersDone();
      if (this.state === 'status') {
        const words = line.trim().split(' ');
        if (words.length < 3) throw new Error('unexpected status format');
        const protocol = words.pop()!;
        if (protocol !== 'HTTP/1.1' && protocol !== 'HTTP/1.0') throw new Error('bad protocol ID');
        const method = words.shift()!;
        this.state = 'headers';
        this.total = undefined;
        this.notify(Server.status, words.join(' '), method);
        if (!this.socket) return; // detached or closed by the callback
        continue;
      }
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') this.total = parseInt(value, 10) || undefined;
      if (name === 'transfer-encoding' && value.toLowerCase() === 'chunked') throw new Error('chunked request body not implemented');
      this.notify(Server.header, name, value);
    }
    if (this.state === 'body') this.bodyReadable();
  }

  private headersDone(): void {
    const kind = this.notify(Server.headersComplete);
    if (this.total === undefined) {
      this.state = 'respond';
      return this.writable();
    }
    this.state = 'body';
    this.bodyKind = kind === true || kind === String || kind === ArrayBuffer ? (kind as BodyKind | true) : kind === false ? false : String;
    this.bodyReadable();
  }

  private bodyReadable(): void {
    const socket = this.socket!;
    while (this.state === 'body' && socket.read() > 0 && (this.total ?? 0) > 0) {
      const count = Math.min(socket.read(), this.total!);
      if (this.bodyKind === false) {
        socket.read(null, count);
        this.total! -= count;
      } else if (this.bodyKind === true) {
        const before = this.total!;
        this.notify(Server.requestFragment, count);
        if (!this.socket) return;
        if (this.total === before) break; // the app left it in lwIP: the next readable report asks again
      } else {
        this.buffers.push(socket.read(this.bodyKind, count));
        this.total! -= count;
      }
    }
    if (this.state === 'body' && this.total === 0) {
      const data = this.bodyKind === String ? this.buffers.join('') : this.bodyKind === ArrayBuffer ? concatBuffers(this.buffers as ArrayBuffer[]) : undefined;
      this.buffers = [];
      this.state = 'respond';
      this.notify(Server.requestComplete, data);
      this.writable();
    }
  }

  private writable(): void {
    const socket = this.socket;
    if (!socket) return;
    if (this.state === 'respond') {
      const response = this.notify(Server.prepareResponse) as { status?: number; reason?: string; headers?: unknown[]; body?: unknown } | undefined;
      const status = response?.status ?? 200;
      let head = `HTTP/1.1 ${status} ${response?.reason ?? REASONS[status] ?? 'OK'}\r\nconnection: close\r\n`;
      let declared: number | undefined;
      const headers = response?.headers ?? [];
      for (let i = 0; i + 1 < headers.length; i += 2) {
        head += `${String(headers[i])}: ${String(headers[i + 1])}\r\n`;
        if (String(headers[i]).toLowerCase() === 'content-length') declared = parseInt(String(headers[i + 1]), 10);
      }
      this.responseBody = response?.body;
      this.streamed = response?.body === true;
      if (this.streamed && declared === undefined) throw new Error('the emulation streams responses with a content-length only'); //@@ chunked responses
      if (!this.streamed) head += `content-length: ${bodyLength(this.responseBody)}\r\n`;
      socket.write(`${head}\r\n`);
      this.state = 'response-body';
      if (!this.streamed && bodyLength(this.responseBody) > socket.write()) return; // wait for room
    }
    if (this.state === 'response-body') {
      const body = this.streamed ? this.notify(Server.responseFragment, socket.write()) : this.responseBody;
      const count = bodyLength(body);
      if (count > 0) socket.write(body as ArrayBuffer);
      if (!this.streamed || count === 0) this.state = 'done';
      if (this.state !== 'done') return;
    }
    if (this.state === 'done') {
      // http.js closes once the response is written; the socket sends it before FIN.
      try {
        this.notify(Server.responseComplete);
      } finally {
        this.close();
      }
    }
  }
}

export class Server {
  static readonly connection = 1;
  static readonly status = 2;
  static readonly header = 3;
  static readonly headersComplete = 4;
  static readonly requestFragment = 5;
  static readonly requestComplete = 6;
  static readonly prepareResponse = 8;
  static readonly responseFragment = 9;
  static readonly responseComplete = 10;
  static readonly error = -1;

  callback: ServerCallback | undefined;
  connections: Connection[] = [];
  #listener: Listener | undefined;

  constructor(dictionary: { port?: number; address?: string } = {}) {
    const listener = new Listener({ port: 80, ...dictionary });
    this.#listener = listener;
    listener.callback = () => {
      const connection = new Connection(new Socket({ listener }), this);
      connection.callback = this.callback;
      this.connections.push(connection);
      connection.callback?.call(connection, Server.connection);
    };
  }

  close(connections = true): void {
    if (connections) for (const c of this.connections.slice()) c.close();
    this.#listener?.close();
    this.#listener = undefined;
  }

  detach(connection: Connection): Socket {
    if (!this.connections.includes(connection)) throw new Error('not a connection of this server');
    this._forget(connection);
    const socket = connection.socket!;
    socket.callback = undefined;
    connection.socket = undefined;
    connection.server = undefined;
    connection.state = 'closed';
    return socket;
  }

  _forget(connection: Connection): void {
    const i = this.connections.indexOf(connection);
    if (i >= 0) this.connections.splice(i, 1);
  }
}

export interface RequestDictionary extends SocketDictionary {
  method?: string;
  path?: string;
  headers?: unknown[];
  body?: boolean | string | ArrayBuffer;
  response?: BodyKind;
  Socket?: new (dictionary: SocketDictionary) => Socket;
}

type RequestCallback = (message: number, value?: unknown, etc?: unknown) => unknown;

export class Request {
  static readonly requestFragment = 0;
  static readonly status = 1;
  static readonly header = 2;
  static readonly headersComplete = 3;
  static readonly responseFragment = 4;
  static readonly responseComplete = 5;
  static readonly error = -2;

  callback: RequestCallback | undefined;
  private socket: Socket | undefined;
  private phase: 'connecting' | 'head' | 'body' | 'status' | 'headers' | 'response' | 'done' = 'connecting';
  private pending: string[] = [];
  private body: boolean | string | ArrayBuffer | undefined;
  private line = '';
  private total: number | undefined;
  private chunked = false;
  private chunk = 0;
  private response: BodyKind | undefined;
  private buffers: (string | ArrayBuffer)[] = [];

  constructor(dictionary: RequestDictionary) {
    const d = { port: 80, method: 'GET', path: '/', ...dictionary };
    const host = d.host ?? d.address;
    const parts = [`${d.method} ${d.path} HTTP/1.1\r\n`, 'Connection: close\r\n'];
    let hasLength = false;
    let hasHost = false;
    const headers = d.headers ?? [];
    for (let i = 0; i + 1 < headers.length; i += 2) {
      const name = String(headers[i]);
      parts.push(`${name}: ${String(headers[i + 1])}\r\n`);
      if (name.toLowerCase() === 'content-length') hasLength = true;
      if (name.toLowerCase() === 'host') hasHost = true;
    }
    if (d.body !== undefined && d.body !== true && d.body !== false && !hasLength) parts.push(`content-length: ${bodyLength(d.body)}\r\n`);
    if (!hasHost && host) parts.push(`Host: ${host}\r\n`);
    parts.push('\r\n');
    this.pending = parts;
    this.body = d.body === false ? undefined : d.body;
    this.response = d.response;
    const SocketClass = d.Socket ?? Socket;
    this.socket = new SocketClass(d);
    this.socket.callback = (message, value) => this.onSocket(message, value ?? 0);
  }

  /** During responseFragment: the response bytes that have arrived (`read(ArrayBuffer)`). */
  read(type?: unknown, limit?: number): unknown {
    const socket = this.socket;
    if (!socket) return undefined;
    let available = socket.read();
    if (this.chunked) available = Math.min(available, this.chunk);
    if (this.total !== undefined) available = Math.min(available, this.total);
    if (type === undefined) return available;
    const count = Math.min(available, limit ?? available);
    if (count === 0) return undefined;
    const result = socket.read(type, count);
    if (this.chunked) this.chunk -= count;
    if (this.total !== undefined) {
      this.total -= count;
      if (this.total === 0) Timer.set(() => this.finish(false)); // as http.js: complete after the read returns
    }
    return result;
  }

  close(): void {
    try {
      this.socket?.close();
    } catch {
      /* already closed */
    }
    this.socket = undefined;
    this.phase = 'done';
  }

  private onSocket(message: number, value: number): void {
    try {
      if (message === SOCKET_MESSAGE.connected) {
        this.phase = 'head';
        return this.writable(this.socket!.write());
      }
      if (message === SOCKET_MESSAGE.writable) return this.writable(value);
      if (message === SOCKET_MESSAGE.readable) return this.readable();
      if (message < 0) {
        const clean = this.phase === 'response' && !this.chunked && (this.total === undefined || this.total === 0);
        this.finish(!clean, message === SOCKET_MESSAGE.error ? 'connection failed' : undefined);
      }
    } catch (err) {
      this.finish(true, err instanceof Error ? err.message : String(err));
    }
  }

  private writable(room: number): void {
    const socket = this.socket;
    if (!socket) return;
    if (this.phase === 'head') {
      while (room > 0 && this.pending.length > 0) {
        const part = this.pending[0]!;
        if (part.length <= room) {
          socket.write(part);
          room -= part.length;
          this.pending.shift();
        } else {
          socket.write(part.slice(0, room));
          this.pending[0] = part.slice(room);
          room = 0;
        }
      }
      if (this.pending.length > 0) return;
      this.phase = this.body === undefined ? 'status' : 'body';
    }
    if (this.phase === 'body') {
      if (this.body === true) {
        const piece = this.callback?.(Request.requestFragment, socket.write()) as ArrayBuffer | string | undefined;
        if (piece !== undefined) {
          if (bodyLength(piece) > 0) socket.write(piece);
          return;
        }
      } else if (this.body !== undefined) {
        if (bodyLength(this.body) > socket.write()) throw new Error("can't write all data"); //@@ as http.js: a buffer body is written at once
        socket.write(this.body as string | ArrayBuffer);
      }
      this.body = undefined;
      this.phase = 'status';
    }
  }

  private readable(): void {
    const socket = this.socket;
    while (socket && this.socket && (this.phase === 'status' || this.phase === 'headers') && socket.read() > 0) {
      const line = this.line + (socket.read(String, '\n') as string);
      if (!line.endsWith('\n')) {
        this.line = line;
        continue;
      }
      this.line = '';
      if (this.phase === 'status') {
        const words = line.split(' ');
        if (words.length < 3) throw new Error('unexpected status format');
        this.phase = 'headers';
        this.callback?.(Request.status, parseInt(words[1]!, 10));
        continue;
      }
      if (line === '\r\n' || line === '\n') {
        this.callback?.(Request.headersComplete);
        if (!this.socket) return;
        this.phase = 'response';
        if (this.total === 0) return this.finish(false);
        break;
      }
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      this.callback?.(Request.header, name, value);
      if (name === 'content-length') this.total = parseInt(value, 10);
      else if (name === 'transfer-encoding' && value.toLowerCase() === 'chunked') this.chunked = true;
    }
    if (this.phase === 'response' && this.socket) this.responseReadable();
  }

  private responseReadable(): void {
    const socket = this.socket!;
    while (this.socket && this.phase === 'response' && socket.read() > 0) {
      if (this.chunked && this.chunk === 0) {
        const line = this.line + (socket.read(String, '\n') as string);
        if (!line.endsWith('\n')) {
          this.line = line;
          continue;
        }
        this.line = '';
        if (line.trim() === '') continue; // the CRLF after a chunk
        this.chunk = parseInt(line.trim(), 16);
        if (this.chunk === 0) return this.finish(false);
        continue;
      }
      if (this.response) {
        this.buffers.push(this.read(this.response) as ArrayBuffer);
        continue;
      }
      const before = socket.read();
      this.callback?.(Request.responseFragment, this.read());
      if (!this.socket || socket.read() === before) break; // left unread: asked again at the next report
    }
  }

  private finish(error: boolean, reason?: string): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    let data: unknown = reason;
    if (!error && this.response) data = this.response === String ? this.buffers.join('') : concatBuffers(this.buffers as ArrayBuffer[]);
    this.close();
    this.callback?.(error ? Request.error : Request.responseComplete, data);
  }
}
