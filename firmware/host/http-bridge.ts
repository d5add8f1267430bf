// HTTP between the host's sockets and the firmware in XS: requests that arrive on an interface's
// listener are handed to the firmware as commands, their bodies pulled chunk by chunk; requests the
// firmware makes are real HTTP from this process, streamed both ways. Only loopback destinations are
// allowed: a virtual board never sends traffic off this machine.
import { request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Iface } from '../src/hal/network.ts';

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/;

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
  req: IncomingMessage;
  res: ServerResponse;
  chunks: ChunkCutter;
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

export class HttpBridge {
  private readonly inbound = new Map<number, Inbound>();
  private readonly outbound = new Map<number, Outbound>();
  private nextId = 1;

  constructor(
    private readonly send: (command: Record<string, unknown>) => Promise<unknown>,
    private readonly stationMacOf: (iface: Iface) => string | undefined,
  ) {}

  /** A request on one of the board's listeners, served by the firmware. */
  serve(iface: Iface, req: IncomingMessage, res: ServerResponse): void {
    const id = this.nextId++;
    this.inbound.set(id, { req, res, chunks: new ChunkCutter(req[Symbol.asyncIterator]()) });
    const url = new URL(req.url ?? '/', 'http://board');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    const query = Object.fromEntries(url.searchParams);
    let path = url.pathname;
    try {
      path = decodeURI(path);
    } catch {
      /* the firmware answers 404 */
    }
    const stationMac = this.stationMacOf(iface);
    this.send({ type: 'http', request: { id, iface, method: req.method ?? 'GET', path, query, headers, ...(stationMac ? { stationMac } : {}) } })
      .catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'firmware_failed', message: err.message }));
      })
      .finally(() => {
        if (!res.writableEnded) res.end();
        this.inbound.delete(id);
      });
  }

  /** Answers the http.* and net.* host calls; undefined for any other op. */
  async op(c: Record<string, any>, payload: Uint8Array): Promise<{ value?: unknown; payload?: Uint8Array } | undefined> {
    switch (c.op) {
      case 'http.read': {
        const r = this.inbound.get(c.id);
        if (!r) return { value: { end: true } };
        const piece = await r.chunks.next(c.max);
        return piece === null ? { value: { end: true } } : { payload: piece };
      }
      case 'http.head': {
        const r = this.inbound.get(c.id);
        r?.res.writeHead(c.status, c.headers);
        return {};
      }
      case 'http.write': {
        const r = this.inbound.get(c.id);
        if (r && !r.res.write(payload)) await new Promise((ok) => r.res.once('drain', ok));
        return {};
      }
      case 'http.end':
        this.inbound.get(c.id)?.res.end();
        return {};
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

  abortAll(): void {
    for (const o of this.outbound.values()) o.req.destroy();
    this.outbound.clear();
    for (const r of this.inbound.values()) r.res.destroy();
    this.inbound.clear();
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
