// HTTP between the host's sockets and the firmware in XS: requests that arrive on an interface's
// listener are handed to the firmware as commands, their bodies pulled chunk by chunk; requests the
// firmware makes are real HTTP from this process, streamed both ways. Only loopback destinations are
// allowed: a virtual board never sends traffic off this machine.
//
// The firmware runs one command at a time and its host calls are synchronous, so nothing a client
// does may make the firmware wait on that client (docs/board-http-limits.md): a request reaches the
// firmware only once its whole body is here (bounded in size and time, as a board's TCP stack holds
// what a peer sent), and responses are written without waiting for the client to read them.
import { request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Iface } from '../src/hal/network.ts';

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/;

/** What a board's listeners accept; every limit is answered with a JSON error, never a stall. */
export interface InboundLimits {
  /** The largest request body taken in (the largest route, PUT /backup, refuses more itself). */
  maxBodyBytes: number;
  /** How long a request body may take to arrive, from the end of its headers. */
  bodyTimeoutMs: number;
  /** Requests received on one interface and not yet answered; more get 503 and Retry-After. */
  maxPendingPerIface: number;
  /** The longest request target (path and query). */
  maxTargetBytes: number;
  /** The largest request head (request line and headers). */
  maxHeaderBytes: number;
  /** How long a request head may take, and how long a connection may sit idle. */
  headersTimeoutMs: number;
  idleTimeoutMs: number;
}

export const DEFAULT_INBOUND_LIMITS: InboundLimits = {
  maxBodyBytes: 1 << 20,
  bodyTimeoutMs: 15_000,
  maxPendingPerIface: 8,
  maxTargetBytes: 1024,
  maxHeaderBytes: 8192,
  headersTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
};

/** Hands a stream's chunks out in pieces of at most `max` bytes (a board's buffers are small). */
class ChunkCutter {
  private rest: Buffer | null = null;

  constructor(private readonly chunks: AsyncIterator<Buffer>) {}

  async next(max: number): Promise<Buffer | null> {
    if (!this.rest || this.rest.length === 0) {
      const n = await this.chunks.next();
      if (n.done) return null;
      this.rest = n.value;
    }
    const limit = Math.max(1, max || this.rest.length);
    const piece = this.rest.subarray(0, limit);
    this.rest = this.rest.subarray(piece.length);
    return piece;
  }
}

interface Inbound {
  res: ServerResponse;
  body: Buffer;
  at: number;
}

interface Outbound {
  req: ClientRequest;
  /**
   * Listened for from the start: a server may answer as soon as it has Content-Length bytes, before
   * the firmware's net.send ends the request.
   */
  response: Promise<IncomingMessage>;
  chunks?: ChunkCutter;
  timeoutMs: number;
}

/** The parts of a request target the firmware sees: the path still percent-encoded (the core decodes). */
export type Target = { path: string; query: Record<string, string> } | { error: string };

/**
 * Origin-form (`/path?query`) or absolute-form (`http://host/path?query`, RFC 9112 section 3.2.2)
 * request targets; anything else (authority- or asterisk-form, garbage) is an error, never a throw.
 */
export function parseTarget(raw: string | undefined): Target {
  let target = raw ?? '';
  if (!target.startsWith('/')) {
    const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*([/?][^#]*)?$/.exec(target);
    if (!m) return { error: 'The request target must be a path (/…) or an absolute http URL' };
    target = m[1] ?? '/';
    if (!target.startsWith('/')) target = '/' + target;
  }
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query: Record<string, string> = {};
  if (q >= 0) {
    try {
      for (const [k, v] of new URLSearchParams(target.slice(q + 1))) query[k] = v;
    } catch {
      return { error: 'The query string is not valid' };
    }
  }
  // The firmware splits the path on "/" and decodes each segment once; a literal "#" or white
  // space cannot come from a well-formed target.
  if (/[\s#]/.test(path)) return { error: 'The request path contains characters a URL may not' };
  return { path, query };
}

/** A JSON error written on a response, unless the client is gone or an answer has begun. */
export function answerError(res: ServerResponse, status: number, error: string, message: string, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  const body = JSON.stringify({ error, message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close', ...headers });
  res.end(body);
}

/**
 * The answer to a request Node's parser refused before any handler saw it (a malformed request line,
 * a bad chunk size, a head over the limit, a head or body that took too long): JSON, then close.
 */
export function answerClientError(err: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Duplex): void {
  if (!socket.writable || (err as { code?: string }).code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const code = err.code ?? '';
  const [status, error, message] =
    code === 'HPE_HEADER_OVERFLOW' ? [431, 'headers_too_large', 'The request head is too large'] as const
    : code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT' ? [408, 'request_timeout', 'The request took too long to arrive'] as const
    : code === 'HPE_INVALID_EOF_STATE' ? [400, 'incomplete_request', 'The connection ended before the request was whole'] as const
    : [400, 'bad_request', 'The request is not valid HTTP'] as const;
  const body = JSON.stringify({ error, message });
  const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status];
  socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

export class HttpBridge {
  private readonly inbound = new Map<number, Inbound>();
  private readonly outbound = new Map<number, Outbound>();
  private readonly pending: Record<Iface, number> = { ethernet: 0, softap: 0, station: 0 };
  private nextId = 1;

  constructor(
    private readonly send: (command: Record<string, unknown>) => Promise<unknown>,
    private readonly stationMacOf: (iface: Iface) => string | undefined,
    readonly limits: InboundLimits = DEFAULT_INBOUND_LIMITS,
    /** Whether the firmware can take requests now (false while the board restarts). */
    private readonly up: () => boolean = () => true,
    /** Host-side diagnostics of a request the firmware could not answer (never sent to the client). */
    private readonly onFault: (what: string) => void = () => undefined,
  ) {}

  /** A request on one of the board's listeners: taken in whole, then served by the firmware. */
  serve(iface: Iface, req: IncomingMessage, res: ServerResponse): void {
    const l = this.limits;
    req.on('error', () => undefined); // an aborted upload: 'close' below cleans up
    res.on('error', () => undefined);
    const target = parseTarget(req.url);
    if ('error' in target) return this.refuse(req, res, 400, 'bad_request_target', target.error);
    if ((req.url ?? '').length > l.maxTargetBytes) return this.refuse(req, res, 414, 'uri_too_long', `The request target exceeds ${l.maxTargetBytes} bytes`);
    if (!this.up()) return this.refuse(req, res, 503, 'board_restarting', 'The board is restarting; try again shortly', { 'retry-after': '1' });
    if (this.pending[iface] >= l.maxPendingPerIface) {
      return this.refuse(req, res, 503, 'board_busy', `The board is serving ${l.maxPendingPerIface} requests on this interface; try again shortly`, { 'retry-after': '1' });
    }
    const declared = req.headers['content-length'] === undefined ? 0 : Number(req.headers['content-length']);
    if (declared > l.maxBodyBytes) return this.refuse(req, res, 413, 'body_too_large', `The request body exceeds ${l.maxBodyBytes} bytes`);

    if (req.headers.expect !== undefined) res.writeContinue(); // only 100-continue reaches here
    this.pending[iface]++;
    let settled = false;
    let dispatched = false;
    const done = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this.pending[iface]--;
    };
    const chunks: Buffer[] = [];
    let total = 0;
    const timer = setTimeout(() => {
      answerError(res, 408, 'body_timeout', `The request body did not arrive within ${l.bodyTimeoutMs} ms`);
      done();
      req.destroy();
    }, l.bodyTimeoutMs);
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      total += chunk.length;
      if (total > l.maxBodyBytes) {
        answerError(res, 413, 'body_too_large', `The request body exceeds ${l.maxBodyBytes} bytes`);
        done();
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    // The client left before its request was whole (FIN, RST, a bad chunk): nothing reaches the firmware.
    const left = () => {
      if (!dispatched) done();
    };
    res.on('close', left);
    req.on('close', left);
    req.on('end', () => {
      if (settled) return;
      clearTimeout(timer);
      if (res.destroyed) return done();
      dispatched = true;
      this.dispatch(iface, target, req, res, Buffer.concat(chunks, total)).finally(done);
    });
  }

  /** Answers the http.* and net.* host calls; undefined for any other op. */
  async op(c: Record<string, any>, payload: Uint8Array): Promise<{ value?: unknown; payload?: Uint8Array } | undefined> {
    switch (c.op) {
      case 'http.read': {
        const r = this.inbound.get(c.id);
        if (!r || r.at >= r.body.length) return { value: { end: true } };
        const piece = r.body.subarray(r.at, r.at + Math.max(1, c.max || r.body.length));
        r.at += piece.length;
        return { payload: piece };
      }
      case 'http.head': {
        const r = this.inbound.get(c.id);
        if (r && !r.res.destroyed && !r.res.headersSent) r.res.writeHead(c.status, c.headers);
        return {};
      }
      case 'http.write': {
        // Never waits for the client to read: a response is at most a backup's size, and a client
        // that does not read it is dropped by the idle time-out.
        const r = this.inbound.get(c.id);
        if (r && !r.res.destroyed && !r.res.writableEnded) r.res.write(payload);
        return {};
      }
      case 'http.end': {
        const r = this.inbound.get(c.id);
        if (r && !r.res.destroyed && !r.res.writableEnded) r.res.end();
        return {};
      }
      case 'net.open':
        return { value: this.open(c) };
      case 'net.write': {
        const o = this.outbound.get(c.id);
        if (!o) throw new Error('no such request');
        if (!o.req.write(payload)) await new Promise((ok) => o.req.once('drain', ok));
        return {};
      }
      case 'net.send':
        return { value: await this.finish(c.id) };
      case 'net.read': {
        const o = this.outbound.get(c.id);
        if (!o?.chunks) return { value: { end: true } };
        const piece = await o.chunks.next(c.max);
        if (piece === null) {
          this.outbound.delete(c.id);
          return { value: { end: true } };
        }
        return { payload: piece };
      }
    }
    return undefined;
  }

  /** The board lost power or restarts: its own requests to others end with it. */
  abortOutbound(): void {
    for (const o of this.outbound.values()) o.req.destroy();
    this.outbound.clear();
  }

  abortAll(): void {
    this.abortOutbound();
    for (const r of this.inbound.values()) r.res.destroy();
    this.inbound.clear();
  }

  private refuse(req: IncomingMessage, res: ServerResponse, status: number, error: string, message: string, headers: Record<string, string> = {}): void {
    answerError(res, status, error, message, headers);
    // The body (if any) is not read: the connection closes after the answer.
    req.resume();
  }

  private async dispatch(iface: Iface, target: { path: string; query: Record<string, string> }, req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const id = this.nextId++;
    this.inbound.set(id, { res, body, at: 0 });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    const stationMac = this.stationMacOf(iface);
    try {
      await this.send({ type: 'http', request: { id, iface, method: req.method ?? 'GET', path: target.path, query: target.query, headers, ...(stationMac ? { stationMac } : {}) } });
      if (!res.headersSent) {
        this.onFault(`${req.method} ${target.path}: the firmware gave no answer`);
        answerError(res, 500, 'internal_error', 'The board could not answer this request');
      }
    } catch (err) {
      // The firmware died (the board restarts) or the host failed: the client gets a clear error and
      // never the engine's own text.
      this.onFault(`${req.method} ${target.path}: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) answerError(res, 503, 'board_restarting', 'The board restarted while serving this request; try again shortly', { 'retry-after': '1' });
    } finally {
      this.inbound.delete(id);
      // An answer cut short (the firmware stopped mid-body) must not look complete.
      if (!res.writableEnded) res.destroy();
    }
  }

  private open(c: Record<string, any>): number {
    const url = new URL(c.url);
    if (url.protocol !== 'http:') throw new Error(`only http:// is available to a virtual board, not ${url.protocol}`);
    if (!LOOPBACK.test(url.hostname)) throw new Error(`${url.hostname} is not a loopback address: a virtual board only reaches this machine`);
    const id = this.nextId++;
    const headers: Record<string, string> = { ...c.headers };
    if (c.bodyLength > 0) headers['content-length'] = String(c.bodyLength);
    const req = httpRequest(url, { method: c.method, headers });
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', reject);
    });
    response.catch(() => undefined); // reported by finish()
    this.outbound.set(id, { req, response, timeoutMs: c.timeoutMs });
    return id;
  }

  private async finish(id: number): Promise<{ status: number; headers: Record<string, string> }> {
    const o = this.outbound.get(id);
    if (!o) throw new Error('no such request');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        o.req.destroy();
        reject(new Error(`no answer within ${o.timeoutMs} ms`));
      }, o.timeoutMs);
    });
    o.req.end();
    try {
      const res = await Promise.race([o.response, timeout]);
      o.chunks = new ChunkCutter(res[Symbol.asyncIterator]());
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers[k] = v;
      return { status: res.statusCode ?? 0, headers };
    } catch (err) {
      this.outbound.delete(id);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}
