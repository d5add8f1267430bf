// The board's own requests (hal/http-exchange.ts, http-response-body.ts) on Node, over a socket with
// lwIP's semantics (fixtures/lwip-socket.ts) and `timer` with manual time: the response is read only
// as fast as the core reads it (the rest stays in lwIP, whose window holds the sender back), framed by
// length, chunks or the server's close; the time-out counts time without progress.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { BodyReader, ClientResponse } from '../../firmware/src/hal/network.ts';
import { LWIP_TCP_WINDOW, LwipSocket } from './fixtures/lwip-socket.ts';
import { advance, resetTimers } from './fixtures/manual-timers.ts';

vi.mock('timer', async () => ({ default: (await import('./fixtures/manual-timers.ts')).timerModule }));

interface Exchange {
  what: string;
  method: string;
  head: string;
  body?: Uint8Array | BodyReader;
  bodyLength: number;
  timeoutMs: number;
}
/** Loaded by a computed path: the root tsconfig cannot resolve Moddable's `timer` (the Moddable tsconfig checks the module). */
const EXCHANGE_MODULE = '../../firmware/src/platform/moddable/hal/http-exchange.ts';
const { ClientExchange, framingOf, RESPONSE_PIECE_BYTES } = (await import(EXCHANGE_MODULE)) as {
  ClientExchange: new (socket: LwipSocket, exchange: Exchange) => { response: Promise<ClientResponse> };
  framingOf: (method: string, status: number, headers: Record<string, string>) => unknown;
  RESPONSE_PIECE_BYTES: number;
};

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

const bytes = (text: string) => new TextEncoder().encode(text);

function pattern(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >> 8)) & 0xff;
  return b;
}

/** A server on the other end: sends `wire` as fast as the window lets it, then closes (unless told not to). */
class Peer {
  constructor(
    readonly socket: LwipSocket,
    wire: Uint8Array,
    close = true,
  ) {
    socket.send(wire);
    if (close) socket.finish();
  }

  /** One turn of the network: what fits in the window goes in, the reports are delivered. */
  async turn(): Promise<void> {
    this.socket.pump();
    await settle();
  }

  get done(): boolean {
    return this.socket.unsent() === 0;
  }
}

function start(socket: LwipSocket, over: Partial<Exchange> = {}) {
  const exchange = new ClientExchange(socket, { what: 'GET http://127.0.0.3/backup', method: 'GET', head: 'GET /backup HTTP/1.1\r\nconnection: close\r\n\r\n', bodyLength: 0, timeoutMs: 30_000, ...over });
  socket.connect();
  socket.pump();
  return exchange;
}

/** Reads the whole body, one piece per network turn and `turnsPerRead` turns between reads (a slow core). */
async function readAll(peer: Peer, response: Promise<ClientResponse>, turnsPerRead = 1): Promise<{ status: number; body: Uint8Array; largest: number; mostAhead: number }> {
  let answer: ClientResponse | undefined;
  let refused: unknown;
  response.then(
    (r) => (answer = r),
    (e) => (refused = e),
  );
  for (let turns = 0; !answer; turns++) {
    if (refused) throw refused;
    if (turns > 100) throw new Error('no answer');
    await peer.turn();
  }
  const pieces: Uint8Array[] = [];
  // What the board took out of lwIP that the core had not read yet, at most (the head apart).
  const head = peer.socket.bytesRead;
  let consumed = 0;
  let mostAhead = 0;
  const ahead = () => (mostAhead = Math.max(mostAhead, peer.socket.bytesRead - head - consumed));
  for (;;) {
    let got: Uint8Array | null | undefined;
    let failure: unknown;
    answer.body.read().then(
      (c) => (got = c),
      (e) => (failure = e),
    );
    for (let turns = 0; got === undefined && failure === undefined; turns++) {
      if (turns > 1000) throw new Error('the body stalled');
      await peer.turn();
    }
    if (failure) throw failure;
    if (got === null) break;
    pieces.push(got!);
    consumed += got!.length;
    for (let i = 1; i < turnsPerRead; i++) {
      await peer.turn();
      ahead();
    }
  }
  return { status: answer.status, body: new Uint8Array(Buffer.concat(pieces)), largest: Math.max(0, ...pieces.map((p) => p.length)), mostAhead };
}

beforeEach(resetTimers);

describe('a download the core reads more slowly than the network delivers', () => {
  it('arrives whole and in order, 512 KB with a Content-Length, while lwIP never holds more than its window', async () => {
    const body = pattern(512 * 1024);
    const socket = new LwipSocket();
    const peer = new Peer(socket, Buffer.concat([bytes(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\netag: "x"\r\n\r\n`), body]));
    const got = await readAll(peer, start(socket).response, 5);
    expect(got.status).toBe(200);
    expect(Buffer.compare(got.body, body)).toBe(0);
    expect(got.largest).toBeLessThanOrEqual(RESPONSE_PIECE_BYTES);
    expect(got.mostAhead).toBe(0); // nothing is read out of lwIP before the core asks for it
    expect(socket.maxHeld).toBeLessThanOrEqual(LWIP_TCP_WINDOW);
    expect(socket.closed).toBe(true);
  });

  it('takes a chunked body (sizes, extensions, CRLFs and trailers split anywhere) and a body that ends with the connection', async () => {
    const parts = [pattern(3000), pattern(1), pattern(70_000), pattern(4096)];
    const chunked = Buffer.concat([bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'), ...parts.flatMap((p, i) => [bytes(`${p.length.toString(16)}${i === 1 ? ';name=x' : ''}\r\n`), p, bytes('\r\n')]), bytes('0\r\nx-trailer: 1\r\n\r\n')]);
    const socket = new LwipSocket();
    const got = await readAll(new Peer(socket, chunked), start(socket).response, 3);
    expect(Buffer.compare(got.body, Buffer.concat(parts))).toBe(0);
    const framing = chunked.length - Buffer.byteLength('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n') - got.body.length;
    expect(got.mostAhead).toBeLessThanOrEqual(framing); // sizes and CRLFs, never data the core did not ask for

    const closeFramed = new LwipSocket();
    const until = await readAll(new Peer(closeFramed, Buffer.concat([bytes('HTTP/1.1 200 OK\r\n\r\n'), pattern(20_000)])), start(closeFramed).response, 2);
    expect(Buffer.compare(until.body, pattern(20_000))).toBe(0);
  });

  it('skips a 100 Continue and reads no body after a 204 or for HEAD', async () => {
    const socket = new LwipSocket();
    const got = await readAll(new Peer(socket, bytes('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nx-a: 1\r\nX-A: 2\r\n\r\n')), start(socket).response);
    expect(got.status).toBe(204);
    expect(got.body.length).toBe(0);
    const head = new LwipSocket();
    const answer = await readAll(new Peer(head, bytes('HTTP/1.1 200 OK\r\ncontent-length: 99\r\n\r\n'), false), start(head, { method: 'HEAD' }).response);
    expect(answer.body.length).toBe(0);
    expect(head.closed).toBe(true);
  });
});

describe('a download that breaks', () => {
  it('a server that closes early fails the read with how much was missing', async () => {
    const socket = new LwipSocket();
    const peer = new Peer(socket, Buffer.concat([bytes('HTTP/1.1 200 OK\r\ncontent-length: 10000\r\n\r\n'), pattern(4000)]));
    await expect(readAll(peer, start(socket).response)).rejects.toThrow('GET http://127.0.0.3/backup: the connection closed 6000 bytes before the end of the body');
  });

  it('a sender that stalls mid-body ends in the no-progress time-out; a slow reader alone does not', async () => {
    const socket = new LwipSocket();
    const peer = new Peer(socket, Buffer.concat([bytes('HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n'), pattern(50_000)]), false);
    const exchange = start(socket, { timeoutMs: 1000 });
    for (let i = 0; i < 3; i++) await peer.turn();
    const response = await exchange.response;
    let received = 0;
    let failure: Error | undefined;
    const pull = async () => {
      for (let c = await response.body.read(); c; c = await response.body.read()) {
        received += c.length;
        advance(900); // a core slower than the network, but never a whole time-out between reads
      }
    };
    const reading = pull().catch((e: Error) => (failure = e));
    for (let i = 0; i < 200 && !peer.done; i++) await peer.turn();
    expect(failure).toBeUndefined();
    for (let i = 0; i < 20; i++) await peer.turn(); // the sender has nothing more to give
    advance(1000);
    await reading;
    expect(received).toBe(50_000);
    expect(failure?.message).toBe('GET http://127.0.0.3/backup: no progress for 1000 ms');
    expect(socket.closed).toBe(true);
  });

  it('refuses what is not an HTTP/1.1 answer, a head over 8 KB and a malformed Content-Length, and closes', async () => {
    for (const [wire, message] of [
      ['SSH-2.0-OpenSSH\r\n', 'not an HTTP/1.1 status line'],
      [`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(9000)}\r\n\r\n`, 'the head exceeds 8192 bytes'],
      ['HTTP/1.1 200 OK\r\ncontent-length: 5, 6\r\n\r\n', 'not a byte count'],
      ['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', 'malformed'],
    ] as const) {
      const socket = new LwipSocket();
      await expect(readAll(new Peer(socket, bytes(wire), false), start(socket).response)).rejects.toThrow(message);
      expect(socket.closed).toBe(true);
    }
  });

  it('a connection that never connects or closes before its answer rejects the request', async () => {
    const refused = new LwipSocket();
    const exchange = new ClientExchange(refused, { what: 'GET http://127.0.0.9/', method: 'GET', head: 'GET / HTTP/1.1\r\n\r\n', bodyLength: 0, timeoutMs: 1000 });
    refused.callback?.(-2);
    await expect(exchange.response).rejects.toThrow('GET http://127.0.0.9/: connection failed');
    const early = new LwipSocket();
    const closing = start(early);
    early.finish();
    early.pump();
    early.pump();
    await expect(closing.response).rejects.toThrow('the connection closed before the answer');
  });
});

describe('an upload', () => {
  it('sends the head and a streamed body as the socket has room, however slowly the core produces it', async () => {
    const chunks = [pattern(5000), pattern(5000), pattern(100)];
    let produced = 0;
    const reader: BodyReader = { read: async () => (produced < chunks.length ? chunks[produced++]! : null) };
    const socket = new LwipSocket();
    const exchange = start(socket, { method: 'PUT', head: 'PUT /backup HTTP/1.1\r\ncontent-length: 10100\r\n\r\n', body: reader, bodyLength: 10_100 });
    for (let i = 0; i < 10 && socket.sentText().length < 10_100; i++) {
      await settle();
      socket.ack();
      socket.pump();
    }
    await settle();
    const wire = Buffer.concat(socket.sent);
    const headEnd = wire.indexOf('\r\n\r\n') + 4;
    expect(Buffer.compare(wire.subarray(headEnd), Buffer.concat(chunks))).toBe(0);
    const peer = new Peer(socket, bytes('HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n'));
    expect((await readAll(peer, exchange.response)).status).toBe(201);
  });

  it('an upload that ends short of its length fails the request', async () => {
    const socket = new LwipSocket();
    const exchange = start(socket, { method: 'PUT', head: 'PUT /backup HTTP/1.1\r\n\r\n', body: { read: async () => null }, bodyLength: 10 });
    await settle();
    await expect(exchange.response).rejects.toThrow('the upload ended at 0 of 10 bytes');
  });
});

describe('framing (RFC 9112 section 6.3)', () => {
  it('chooses chunks, a length or the close', () => {
    expect(framingOf('GET', 200, { 'transfer-encoding': 'gzip, chunked', 'content-length': '5' })).toEqual({ kind: 'chunked' });
    expect(framingOf('GET', 200, { 'transfer-encoding': 'gzip' })).toEqual({ kind: 'close' });
    expect(framingOf('GET', 200, { 'content-length': '7, 7' })).toEqual({ kind: 'length', bytes: 7 });
    expect(framingOf('GET', 304, { 'content-length': '7' })).toEqual({ kind: 'length', bytes: 0 });
    expect(framingOf('GET', 200, {})).toEqual({ kind: 'close' });
    expect(() => framingOf('GET', 200, { 'content-length': '+5' })).toThrow(/not a byte count/);
  });
});
