// The board's HTTP listener logic (hal/http-connection.ts and its parts) on Node, over stand-ins for
// the two Moddable pieces it uses, written from the SDK's source: a TCP socket with
// modules/network/socket/lwip/modSocket.c's read/write semantics, and `timer` with manual time.
// The next issue runs the same code in XS over an emulation of the Moddable modules; this checks the
// platform's own decisions: pull-based bodies, streamed responses, the limits and their JSON answers.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { HttpHandler, HttpRequest } from '../../firmware/src/hal/network.ts';

const timers = vi.hoisted(() => {
  const pending = new Map<number, { at: number; callback: () => void }>();
  const state = { now: 0, next: 1 };
  return {
    pending,
    state,
    module: {
      set: (callback: () => void, ms = 0) => {
        const id = state.next++;
        pending.set(id, { at: state.now + ms, callback });
        return id;
      },
      clear: (id: number | undefined) => void (id !== undefined && pending.delete(id)),
    },
  };
});
vi.mock('timer', () => ({ default: timers.module }));

import { BOARD_HTTP_LIMITS, type ListenerLimits } from '../../firmware/src/platform/moddable/hal/http-limits.ts';
import { HttpRefusal } from '../../firmware/src/platform/moddable/hal/http-text.ts';

/**
 * http-connection.ts imports Moddable's `timer`, which the root tsconfig (Node types) cannot
 * resolve: it is loaded by a computed path and typed here. The Moddable tsconfig checks the module.
 */
interface ConnectionOptions {
  handler: HttpHandler;
  limits: ListenerLimits;
  stationMacOf?: (address: string) => string | undefined;
  refusal?: InstanceType<typeof HttpRefusal>;
  done: () => void;
}
const CONNECTION_MODULE = '../../firmware/src/platform/moddable/hal/http-connection.ts';
const { HttpConnection } = (await import(CONNECTION_MODULE)) as {
  HttpConnection: new (socket: unknown, iface: 'softap', method: string, target: string, options: ConnectionOptions) => { start(): void };
};

function advance(ms: number): void {
  timers.state.now += ms;
  for (const [id, timer] of [...timers.pending].sort((a, b) => a[1].at - b[1].at)) {
    if (timer.at > timers.state.now || !timers.pending.has(id)) continue;
    timers.pending.delete(id);
    timer.callback();
  }
}


/** Timers fired by the test, not by the clock. */
class UnusedManualTimers {
  private next = 1;
  readonly pending = new Map<number, { at: number; callback: () => void }>();
  now = 0;

  readonly module = {
    set: (callback: () => void, ms = 0) => {
      const id = this.next++;
      this.pending.set(id, { at: this.now + ms, callback });
      return id;
    },
    clear: (id: number | undefined) => {
      if (id !== undefined) this.pending.delete(id);
    },
  };

  advance(ms: number): void {
    this.now += ms;
    for (const [id, timer] of [...this.pending].sort((a, b) => a[1].at - b[1].at)) {
      if (timer.at > this.now || !this.pending.has(id)) continue;
      this.pending.delete(id);
      timer.callback();
    }
  }
}

/**
 * modSocket.c: data arrives as pbufs; `read()` sees only the current one, and the next becomes
 * current with the next "readable" report (2), sent only once the current one is read to the end.
 * `write()` answers the free send buffer; a larger write throws. "writable" (3) reports room.
 */
class FakeSocket {
  callback: ((message: number, value?: number) => void) | undefined;
  readonly segments: Uint8Array[] = [];
  private current: Uint8Array = new Uint8Array(0);
  private at = 0;
  readonly written: Uint8Array[] = [];
  room = 64 * 1024;
  closed = false;
  remoteIp = '192.168.4.2';

  /** The client sends `data`, in segments of at most `segment` bytes. */
  send(data: string | Uint8Array, segment = 1460): void {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    for (let i = 0; i < bytes.length; i += segment) this.segments.push(bytes.subarray(i, i + segment));
  }

  /** Delivers the next segment if the current one has been read, as socketMsgDataReceived does. */
  deliver(): boolean {
    if (this.closed || this.at < this.current.length || this.segments.length === 0) return false;
    this.current = this.segments.shift()!;
    this.at = 0;
    this.callback?.(2, this.current.length);
    return true;
  }

  read(type?: unknown, limit?: number | string): unknown {
    const rest = this.current.length - this.at;
    if (type === undefined) return rest;
    if (rest === 0) throw new Error('nothing to read');
    let count = rest;
    if (typeof limit === 'number') count = Math.min(count, limit);
    else if (typeof limit === 'string') {
      const i = this.current.indexOf(limit.charCodeAt(0), this.at);
      if (i >= 0) count = i - this.at + 1;
    }
    const piece = this.current.slice(this.at, this.at + count);
    this.at += count;
    if (type === null) return count;
    if (type === String) return new TextDecoder().decode(piece);
    return piece.buffer;
  }

  write(...data: (string | ArrayBuffer | Uint8Array)[]): number | undefined {
    if (data.length === 0) return this.closed ? 0 : this.room;
    for (const item of data) {
      const bytes = typeof item === 'string' ? new TextEncoder().encode(item) : item instanceof Uint8Array ? item.slice() : new Uint8Array(item);
      if (bytes.length > this.room) throw new Error("can't write all data");
      this.room -= bytes.length;
      this.written.push(bytes);
    }
    return undefined;
  }

  get(what: string): string | undefined {
    return what === 'REMOTE_IP' ? this.remoteIp : undefined;
  }

  close(): void {
    this.closed = true;
  }

  /** The peer acknowledged everything: room again, and a "writable" report. */
  ack(room = 64 * 1024): void {
    this.room = room;
    this.callback?.(3, room);
  }

  output(): string {
    return Buffer.concat(this.written).toString('latin1');
  }
}

/** Lets promise jobs run, as XS does between two reports. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Delivers every segment the client sent, letting promise jobs run between reports. */
async function pump(socket: FakeSocket): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    await settle();
    if (!socket.deliver()) {
      await settle();
      if (!socket.deliver()) return;
    }
  }
}

function open(socket: FakeSocket, method: string, target: string, handler: HttpHandler, extra: Partial<ConnectionOptions> = {}) {
  let done = false;
  const connection = new HttpConnection(socket, 'softap', method, target, { handler, limits: BOARD_HTTP_LIMITS, done: () => (done = true), stationMacOf: (ip) => (ip === '192.168.4.2' ? 'AA:BB:CC:DD:EE:01' : undefined), ...extra });
  connection.start();
  return { isDone: () => done };
}

function parse(output: string) {
  const [head, ...rest] = output.split('\r\n\r\n');
  const [status, ...lines] = head!.split('\r\n');
  return { status: Number(status!.split(' ')[1]), headers: Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()])), body: rest.join('\r\n\r\n') };
}

beforeEach(() => {
  timers.pending.clear();
  timers.state.now = 0;
});

describe('a request on a board listener', () => {
  it('hands the core a whole request: method, path, decoded query, lower-case headers, interface, station', async () => {
    const socket = new FakeSocket();
    let seen: HttpRequest | undefined;
    socket.send('Host: 192.168.4.1\r\nX-Visual-Token: abc\r\nAccept: a\r\naccept: b\r\n\r\n', 7);
    const c = open(socket, 'GET', '/api/status?x=1%202&flag', async (r) => {
      seen = r;
      return { status: 200, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"ok":true}') };
    });
    await pump(socket);
    expect(seen).toMatchObject({ method: 'GET', path: '/api/status', query: { x: '1 2', flag: '' }, iface: 'softap', stationMac: 'AA:BB:CC:DD:EE:01' });
    expect(seen!.headers).toEqual({ host: '192.168.4.1', 'x-visual-token': 'abc', accept: 'a, b' });
    const res = parse(socket.output());
    expect(res).toEqual({ status: 200, headers: { 'content-type': 'application/json', 'content-length': '11', connection: 'close' }, body: '{"ok":true}' });
    expect(socket.closed).toBe(false); // until the response is acknowledged
    socket.ack();
    expect(socket.closed).toBe(true);
    expect(c.isDone()).toBe(true);
  });

  it('pulls the body: bytes the core has not asked for stay in the socket', async () => {
    const socket = new FakeSocket();
    const body = new Uint8Array(10_000).map((_, i) => i & 0xff);
    socket.send('Content-Length: 10000\r\n\r\n');
    socket.send(body);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const received: number[] = [];
    open(socket, 'PUT', '/backup', async (r) => {
      await gate;
      for (let chunk = await r.body.read(); chunk; chunk = await r.body.read()) {
        expect(chunk.length).toBeLessThanOrEqual(BOARD_HTTP_LIMITS.chunkBytes);
        received.push(...chunk);
      }
      return { status: 200, headers: {}, body: new TextEncoder().encode('{}') };
    });
    await pump(socket);
    expect(socket.segments.length).toBeGreaterThan(0); // nobody asked: the rest waits (TCP backpressure)
    release();
    await pump(socket);
    expect(Uint8Array.from(received)).toEqual(body);
    expect(parse(socket.output()).status).toBe(200);
  });

  it('streams a BodyReader response with its content-length, waiting for room, and answers HEAD without a body', async () => {
    const socket = new FakeSocket();
    socket.room = 1000;
    socket.send('\r\n');
    const chunks = [new Uint8Array(3000).fill(65), new Uint8Array(2000).fill(66)];
    let i = 0;
    open(socket, 'GET', '/backup', async () => ({ status: 200, headers: { 'content-length': '5000' }, body: { read: async () => chunks[i++] ?? null } }));
    await pump(socket);
    for (let n = 0; n < 10 && socket.output().split('\r\n\r\n')[1]!.length < 5000; n++) {
      socket.ack(1000);
      await settle();
    }
    const res = parse(socket.output());
    expect(res.headers['content-length']).toBe('5000');
    expect(res.body).toBe('A'.repeat(3000) + 'B'.repeat(2000));

    const head = new FakeSocket();
    head.send('\r\n');
    open(head, 'HEAD', '/backup', async () => ({ status: 200, headers: { 'content-length': '5000' }, body: { read: async () => new Uint8Array(5000) } }));
    await pump(head);
    expect(parse(head.output())).toMatchObject({ status: 200, headers: { 'content-length': '5000' }, body: '' });
  });

  it('answers 408 body_timeout when the body stops, whatever the core made of it', async () => {
    const socket = new FakeSocket();
    socket.send('Content-Length: 100\r\n\r\n0123456789');
    open(socket, 'PUT', '/backup', async (r) => {
      try {
        while (await r.body.read());
      } catch {
        return { status: 500, headers: {}, body: new Uint8Array(0) };
      }
      return { status: 200, headers: {} };
    });
    await pump(socket);
    expect(socket.output()).toBe('');
    advance(BOARD_HTTP_LIMITS.bodyTimeoutMs);
    await settle();
    const res = parse(socket.output());
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toEqual({ error: 'body_timeout', message: 'The request body did not arrive within 15 s' });
  });

  it('refuses before the core sees the request: 431, 411, 413, 417, 414, 408, 503 with Retry-After', async () => {
    const cases: [string, string, string, number, string][] = [
      ['GET', '/', `X-Big: ${'a'.repeat(9000)}\r\n\r\n`, 431, 'headers_too_large'],
      ['PUT', '/backup', 'Transfer-Encoding: chunked\r\n\r\n', 411, 'length_required'],
      ['PUT', '/backup', 'Content-Length: 2000000\r\n\r\n', 413, 'body_too_large'],
      ['PUT', '/backup', 'Content-Length: 5\r\nExpect: 200-ok\r\n\r\n', 417, 'expectation_failed'],
      ['GET', `/${'a'.repeat(1100)}`, '\r\n', 414, 'uri_too_long'],
      ['GET', 'nonsense', '\r\n', 400, 'bad_request_target'],
      ['GET', '/', 'no colon here\r\n\r\n', 400, 'bad_request'],
    ];
    for (const [method, target, head, status, code] of cases) {
      const socket = new FakeSocket();
      socket.send(head);
      let called = false;
      open(socket, method, target, async () => ((called = true), { status: 200, headers: {} }));
      await pump(socket);
      const res = parse(socket.output());
      expect([res.status, JSON.parse(res.body).error, called], code).toEqual([status, code, false]);
    }
    const slow = new FakeSocket();
    slow.send('Host: x\r\n');
    open(slow, 'GET', '/', async () => ({ status: 200, headers: {} }));
    await pump(slow);
    advance(BOARD_HTTP_LIMITS.headTimeoutMs);
    await settle();
    expect(parse(slow.output()).status).toBe(408);
    const busy = new FakeSocket();
    open(busy, 'GET', '/', async () => ({ status: 200, headers: {} }), { refusal: new HttpRefusal(503, 'board_busy', 'busy', { 'retry-after': '1' }) });
    await pump(busy);
    expect(parse(busy.output())).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
  });

  it('writes 100 Continue before reading a body when the client asks', async () => {
    const socket = new FakeSocket();
    socket.send('Content-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    open(socket, 'POST', '/api/login', async (r) => {
      while (await r.body.read());
      return { status: 204, headers: {} };
    });
    await pump(socket);
    expect(socket.output().startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    socket.send('{}');
    await pump(socket);
    expect(socket.output()).toContain('HTTP/1.1 204 No Content');
  });

  it('answers 500 for a handler that throws or streams without content-length, and cuts a body that breaks it', async () => {
    const thrown = new FakeSocket();
    thrown.send('\r\n');
    open(thrown, 'GET', '/', async () => {
      throw new Error('boom');
    });
    await pump(thrown);
    expect(JSON.parse(parse(thrown.output()).body)).toEqual({ error: 'internal_error', message: 'The board could not answer this request' });

    const unsized = new FakeSocket();
    unsized.send('\r\n');
    open(unsized, 'GET', '/', async () => ({ status: 200, headers: {}, body: { read: async () => null } }));
    await pump(unsized);
    expect(parse(unsized.output()).status).toBe(500);

    const short = new FakeSocket();
    short.send('\r\n');
    let n = 0;
    open(short, 'GET', '/', async () => ({ status: 200, headers: { 'content-length': '10' }, body: { read: async () => (n++ ? null : new Uint8Array(4)) } }));
    await pump(short);
    expect(short.closed).toBe(true);
    expect(parse(short.output()).headers['content-length']).toBe('10');
  });

  it('drops a client that stops reading its response', async () => {
    const socket = new FakeSocket();
    socket.room = 100;
    socket.send('\r\n');
    const c = open(socket, 'GET', '/', async () => ({ status: 200, headers: {}, body: new Uint8Array(5000) }));
    await pump(socket);
    expect(socket.closed).toBe(false);
    advance(BOARD_HTTP_LIMITS.idleMs);
    await settle();
    expect(socket.closed).toBe(true);
    expect(c.isDone()).toBe(true);
  });
});
