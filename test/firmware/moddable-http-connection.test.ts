// The board's HTTP listener logic (hal/http-connection.ts and its parts) on Node, over stand-ins for
// the two Moddable pieces it uses, written from the SDK's source: a TCP socket with
// modules/network/socket/lwip/modSocket.c's read/write semantics, and `timer` with manual time.
// The next issue runs the same code in XS over an emulation of the Moddable modules; this checks the
// platform's own decisions: pull-based bodies, streamed responses, the limits and their JSON answers.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { HttpHandler, HttpRequest, RequestMemory } from '../../firmware/src/hal/network.ts';

vi.mock('timer', async () => ({ default: (await import('./fixtures/manual-timers.ts')).timerModule }));

import { BOARD_HTTP_LIMITS, type ListenerLimits } from '../../firmware/src/platform/moddable/hal/http-limits.ts';
import { HttpRefusal } from '../../firmware/src/platform/moddable/hal/http-text.ts';
import { REQUEST_MEMORY_BYTES, RequestBudget } from '../../firmware/src/core/http/request-memory.ts';
import { LwipSocket } from './fixtures/lwip-socket.ts';
import { advance, resetTimers } from './fixtures/manual-timers.ts';

/**
 * http-connection.ts imports Moddable's `timer`, which the root tsconfig (Node types) cannot
 * resolve: it is loaded by a computed path and typed here. The Moddable tsconfig checks the module.
 */
interface ConnectionOptions {
  handler: HttpHandler;
  limits: ListenerLimits;
  memory: RequestMemory;
  stationMacOf?: (address: string) => string | undefined;
  refusal?: InstanceType<typeof HttpRefusal>;
  done: () => void;
}
const CONNECTION_MODULE = '../../firmware/src/platform/moddable/hal/http-connection.ts';
const { HttpConnection, CONNECTION_BYTES } = (await import(CONNECTION_MODULE)) as {
  HttpConnection: new (socket: unknown, iface: 'softap', options: ConnectionOptions) => { start(): void };
  CONNECTION_BYTES: number;
};

/** Lets promise jobs run, as XS does between two reports. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Delivers everything the client sent, letting promise jobs run between reports. */
async function pump(socket: LwipSocket): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    await settle();
    if (socket.pump() === 0) {
      await settle();
      if (socket.pump() === 0) return;
    }
  }
}

/** A client's request: its request line, then `head` (the headers and what follows them). */
function request(socket: LwipSocket, method: string, target: string, head: string | Uint8Array = '\r\n'): void {
  socket.send(`${method} ${target} HTTP/1.1\r\n`);
  socket.send(head);
}

function open(socket: LwipSocket, handler: HttpHandler, extra: Partial<ConnectionOptions> = {}) {
  let done = false;
  const memory = extra.memory ?? new RequestBudget(REQUEST_MEMORY_BYTES);
  const connection = new HttpConnection(socket, 'softap', { handler, limits: BOARD_HTTP_LIMITS, memory, done: () => (done = true), stationMacOf: (ip) => (ip === '192.168.4.2' ? 'AA:BB:CC:DD:EE:01' : undefined), ...extra });
  connection.start();
  return { isDone: () => done };
}

function parse(output: string) {
  const [head, ...rest] = output.split('\r\n\r\n');
  const [status, ...lines] = head!.split('\r\n');
  return { status: Number(status!.split(' ')[1]), headers: Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()])), body: rest.join('\r\n\r\n') };
}

beforeEach(resetTimers);

describe('a request on a board listener', () => {
  it('hands the core a whole request: method, path, decoded query, lower-case headers, interface, station', async () => {
    const socket = new LwipSocket(7); // the head in 7-byte segments: lines split anywhere
    let seen: HttpRequest | undefined;
    request(socket, 'GET', '/api/status?x=1%202&flag', 'Host: 192.168.4.1\r\nX-Visual-Token: abc\r\nAccept: a\r\naccept: b\r\n\r\n');
    const c = open(socket, async (r) => {
      seen = r;
      return { status: 200, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"ok":true}') };
    });
    await pump(socket);
    expect(seen).toMatchObject({ method: 'GET', path: '/api/status', query: { x: '1 2', flag: '' }, iface: 'softap', stationMac: 'AA:BB:CC:DD:EE:01' });
    expect(seen!.headers).toEqual({ host: '192.168.4.1', 'x-visual-token': 'abc', accept: 'a, b' });
    const res = parse(socket.sentText());
    expect(res).toEqual({ status: 200, headers: { 'content-type': 'application/json', 'content-length': '11', connection: 'close' }, body: '{"ok":true}' });
    expect(socket.closed).toBe(false); // until the response is acknowledged
    socket.ack();
    socket.pump();
    expect(socket.closed).toBe(true);
    expect(c.isDone()).toBe(true);
  });

  it('pulls the body: bytes the core has not asked for stay in the socket', async () => {
    const socket = new LwipSocket();
    const body = new Uint8Array(10_000).map((_, i) => i & 0xff);
    request(socket, 'PUT', '/backup', 'Content-Length: 10000\r\n\r\n');
    socket.send(body);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const received: number[] = [];
    open(socket, async (r) => {
      await gate;
      for (let chunk = await r.body.read(); chunk; chunk = await r.body.read()) {
        expect(chunk.length).toBeLessThanOrEqual(BOARD_HTTP_LIMITS.chunkBytes);
        received.push(...chunk);
      }
      return { status: 200, headers: {}, body: new TextEncoder().encode('{}') };
    });
    await pump(socket);
    expect(socket.unsent()).toBeGreaterThan(0); // nobody asked: the rest waits (TCP backpressure)
    release();
    await pump(socket);
    expect(Uint8Array.from(received)).toEqual(body);
    expect(parse(socket.sentText()).status).toBe(200);
  });

  it('streams a BodyReader response with its content-length, waiting for room, and answers HEAD without a body', async () => {
    const socket = new LwipSocket();
    socket.room = 1000;
    request(socket, 'GET', '/backup');
    const chunks = [new Uint8Array(3000).fill(65), new Uint8Array(2000).fill(66)];
    let i = 0;
    open(socket, async () => ({ status: 200, headers: { 'content-length': '5000' }, body: { read: async () => chunks[i++] ?? null } }));
    await pump(socket);
    for (let n = 0; n < 10 && socket.sentText().split('\r\n\r\n')[1]!.length < 5000; n++) {
      socket.ack(1000);
      socket.pump();
      await settle();
    }
    const res = parse(socket.sentText());
    expect(res.headers['content-length']).toBe('5000');
    expect(res.body).toBe('A'.repeat(3000) + 'B'.repeat(2000));

    const head = new LwipSocket();
    request(head, 'HEAD', '/backup');
    open(head, async () => ({ status: 200, headers: { 'content-length': '5000' }, body: { read: async () => new Uint8Array(5000) } }));
    await pump(head);
    expect(parse(head.sentText())).toMatchObject({ status: 200, headers: { 'content-length': '5000' }, body: '' });
  });

  it('answers 408 body_timeout when the body stops, whatever the core made of it', async () => {
    const socket = new LwipSocket();
    request(socket, 'PUT', '/backup', 'Content-Length: 100\r\n\r\n0123456789');
    open(socket, async (r) => {
      try {
        while (await r.body.read());
      } catch {
        return { status: 500, headers: {}, body: new Uint8Array(0) };
      }
      return { status: 200, headers: {} };
    });
    await pump(socket);
    expect(socket.sentText()).toBe('');
    advance(BOARD_HTTP_LIMITS.bodyTimeoutMs);
    await settle();
    const res = parse(socket.sentText());
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
      const socket = new LwipSocket();
      request(socket, method, target, head);
      let called = false;
      open(socket, async () => ((called = true), { status: 200, headers: {} }));
      await pump(socket);
      const res = parse(socket.sentText());
      expect([res.status, JSON.parse(res.body).error, called], code).toEqual([status, code, false]);
    }
    const slow = new LwipSocket();
    request(slow, 'GET', '/', 'Host: x\r\n');
    open(slow, async () => ({ status: 200, headers: {} }));
    await pump(slow);
    advance(BOARD_HTTP_LIMITS.headTimeoutMs);
    await settle();
    expect(parse(slow.sentText()).status).toBe(408);
    const busy = new LwipSocket();
    request(busy, 'GET', '/');
    open(busy, async () => ({ status: 200, headers: {} }), { refusal: new HttpRefusal(503, 'board_busy', 'busy', { 'retry-after': '1' }) });
    await pump(busy);
    expect(parse(busy.sentText())).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
  });

  it('writes 100 Continue before reading a body when the client asks', async () => {
    const socket = new LwipSocket();
    request(socket, 'POST', '/api/login', 'Content-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    open(socket, async (r) => {
      while (await r.body.read());
      return { status: 204, headers: {} };
    });
    await pump(socket);
    expect(socket.sentText().startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    socket.send('{}');
    await pump(socket);
    expect(socket.sentText()).toContain('HTTP/1.1 204 No Content');
  });

  it('answers 500 for a handler that throws or streams without content-length, and cuts a body that breaks it', async () => {
    const thrown = new LwipSocket();
    request(thrown, 'GET', '/');
    open(thrown, async () => {
      throw new Error('boom');
    });
    await pump(thrown);
    expect(JSON.parse(parse(thrown.sentText()).body)).toEqual({ error: 'internal_error', message: 'The board could not answer this request' });

    const unsized = new LwipSocket();
    request(unsized, 'GET', '/');
    open(unsized, async () => ({ status: 200, headers: {}, body: { read: async () => null } }));
    await pump(unsized);
    expect(parse(unsized.sentText()).status).toBe(500);

    const short = new LwipSocket();
    request(short, 'GET', '/');
    let n = 0;
    open(short, async () => ({ status: 200, headers: { 'content-length': '10' }, body: { read: async () => (n++ ? null : new Uint8Array(4)) } }));
    await pump(short);
    expect(short.closed).toBe(true);
    expect(parse(short.sentText()).headers['content-length']).toBe('10');
  });

  it('drops a client that stops reading its response', async () => {
    const socket = new LwipSocket();
    socket.room = 100;
    request(socket, 'GET', '/');
    const c = open(socket, async () => ({ status: 200, headers: {}, body: new Uint8Array(5000) }));
    await pump(socket);
    expect(socket.closed).toBe(false);
    advance(BOARD_HTTP_LIMITS.idleMs);
    await settle();
    expect(socket.closed).toBe(true);
    expect(c.isDone()).toBe(true);
  });

  it('refuses a NUL byte in the head at once (400), not at the head time-out', async () => {
    const socket = new LwipSocket();
    request(socket, 'GET', '/backup', 'X-A: a\u0000b\r\nHost: b\r\n\r\n');
    open(socket, async () => ({ status: 200, headers: {} }));
    await pump(socket);
    expect(parse(socket.sentText())).toMatchObject({ status: 400, body: JSON.stringify({ error: 'bad_request', message: 'A request head line holds a NUL byte' }) });
  });

  it('reads its own request line: empty lines before it are skipped, one that is not "METHOD target HTTP/1.x" is 400', async () => {
    const skipped = new LwipSocket();
    skipped.send('\r\n\r\n');
    request(skipped, 'GET', '/api/status');
    let seen = '';
    open(skipped, async (r) => ((seen = `${r.method} ${r.path}`), { status: 204, headers: {} }));
    await pump(skipped);
    expect(seen).toBe('GET /api/status');
    for (const line of ['GARBAGE\r\n\r\n', 'GET /\r\n\r\n', 'GET / HTTP/2.0\r\n\r\n', 'GE T / HTTP/1.1\r\n\r\n']) {
      const socket = new LwipSocket();
      socket.send(line);
      open(socket, async () => ({ status: 200, headers: {} }));
      await pump(socket);
      expect(parse(socket.sentText()), line).toMatchObject({ status: 400, body: JSON.stringify({ error: 'bad_request', message: 'The request line is not "METHOD target HTTP/1.1"' }) });
    }
  });

  it('sends a small refusal whole when the client half-closes as it sends (a malformed Content-Length, then FIN)', async () => {
    for (const length of ['+5', 'abc', '5, 5']) {
      const socket = new LwipSocket();
      request(socket, 'PUT', '/backup', `Content-Length: ${length}\r\n\r\n`);
      socket.finish();
      open(socket, async () => ({ status: 200, headers: {} }));
      await pump(socket);
      const res = parse(socket.sentText());
      expect(res.status, length).toBe(400);
      expect(Buffer.byteLength(res.body), length).toBe(Number(res.headers['content-length']));
      expect(JSON.parse(res.body)).toEqual({ error: 'bad_request', message: 'Content-Length is not a byte count' });
    }
  });

  it('takes each connection and its head from the request memory, refuses what would pass it with 503, and gives everything back', async () => {
    const memory = new RequestBudget(CONNECTION_BYTES * 2 + 3000);
    const holders = [new LwipSocket(), new LwipSocket()];
    const unfinished = `GET /backup HTTP/1.1\r\nX-Pad: ${'a'.repeat(1400)}\r\n`; // a head that does not end
    const headBytes = Buffer.byteLength(unfinished);
    for (const socket of holders) {
      socket.send(unfinished);
      open(socket, async () => ({ status: 200, headers: {} }), { memory });
      await pump(socket);
    }
    expect(memory.inUse()).toBe(CONNECTION_BYTES * 2 + 2 * headBytes);
    // A third connection: no room for it at all.
    const third = new LwipSocket();
    request(third, 'GET', '/backup');
    open(third, async () => ({ status: 200, headers: {} }), { memory });
    await pump(third);
    expect(parse(third.sentText())).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    expect(JSON.parse(parse(third.sentText()).body).error).toBe('board_busy');
    // The first holder finishes its head: the rest of it does not fit, 503 too; then its memory is back.
    holders[0]!.send(`X-More: ${'b'.repeat(1000)}\r\n\r\n`);
    await pump(holders[0]!);
    expect(parse(holders[0]!.sentText())).toMatchObject({ status: 503 });
    holders[0]!.ack();
    holders[0]!.pump();
    expect(memory.inUse()).toBe(CONNECTION_BYTES + headBytes);
    advance(BOARD_HTTP_LIMITS.headTimeoutMs); // the second never finishes: 408, and its memory is back
    await settle();
    holders[1]!.ack();
    holders[1]!.pump();
    expect(parse(holders[1]!.sentText()).status).toBe(408);
    expect(memory.inUse()).toBe(0);
  });
});

