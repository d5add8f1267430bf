// The emulated `http` Server and `socket` (firmware/sim/xs/modules/http.ts, socket.ts) inside XS:
// the Server's callback protocol as http.js has it, "connection: close" after every response, no
// chunked request bodies, detach; and lwIP-like flow control: reads never span a segment of more
// than one MSS, at most one window of unread bytes is held, and a slow client stalls only itself.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TCP_MSS, TCP_WND } from '../../firmware/sim/host/tcp.ts';
import { SimEngine } from '../helpers/sim-engine.ts';

let engine: SimEngine;

/** Sends raw bytes on a new connection to the listener; resolves with all the bytes answered. */
function exchange(url: string, parts: (string | Buffer)[], o: { keepOpen?: boolean } = {}): { socket: Socket; answer: Promise<string> } {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  const chunks: Buffer[] = [];
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', () => undefined);
  });
  socket.on('connect', () => {
    for (const p of parts) socket.write(p);
    if (!o.keepOpen) return;
  });
  return { socket, answer };
}

beforeAll(async () => {
  engine = await SimEngine.start();
  await engine.run(`
    const { Server } = sdk.http;
    globalThis.server = new Server({ port: 80, address: '127.0.0.2' });
    server.callback = function (message, value, etc) {
      switch (message) {
        case Server.connection: report({ m: 'connection' }); break;
        case Server.status: report({ m: 'status', path: value, method: etc }); if (value === '/detach') { globalThis.detached = server.detach(this); detached.callback = (msg, n) => report({ m: 'socket', msg, n }); report({ m: 'detached', available: detached.read() }); } break;
        case Server.header: report({ m: 'header', name: value, value: etc }); break;
        case Server.headersComplete: this.received = 0; return true;
        case Server.requestFragment: { const b = this.read(ArrayBuffer); this.received += b.byteLength; report({ m: 'fragment', n: b.byteLength }); break; }
        case Server.requestComplete: report({ m: 'requestComplete', received: this.received }); break;
        case Server.prepareResponse: return { headers: ['content-type', 'text/plain', 'content-length', 11], body: true };
        case Server.responseFragment: { this.part = (this.part ?? 0) + 1; return this.part === 1 ? 'hello ' : this.part === 2 ? 'world' : undefined; }
        case Server.responseComplete: report({ m: 'responseComplete' }); break;
        case Server.error: report({ m: 'error' }); break;
      }
    };
  `);
}, 120_000);
afterAll(async () => {
  await engine?.close();
});

describe('the emulated http Server', () => {
  it('reports status, lower-case headers, the body in fragments of at most one MSS, then asks for the response synchronously and closes', async () => {
    await engine.reports();
    const body = Buffer.alloc(10_000, 0x61);
    const { answer } = exchange(engine.urls.ethernet!, [`POST /upload?x=1 HTTP/1.1\r\nHost: b\r\nX-Thing: Yes\r\nContent-Length: ${body.length}\r\n\r\n`, body]);
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toMatch(/\r\nconnection: close\r\n/i);
    expect(text.endsWith('\r\n\r\nhello world')).toBe(true);
    const reports = await engine.waitFor((r) => r.some((x) => x.m === 'responseComplete'));
    expect(reports.find((r) => r.m === 'status')).toEqual({ m: 'status', path: '/upload?x=1', method: 'POST' });
    expect(reports).toContainEqual({ m: 'header', name: 'x-thing', value: 'Yes' });
    const fragments = reports.filter((r) => r.m === 'fragment').map((r) => r.n);
    expect(fragments.reduce((a, b) => a + b, 0)).toBe(body.length);
    expect(Math.max(...fragments)).toBeLessThanOrEqual(TCP_MSS);
    expect(reports).toContainEqual({ m: 'requestComplete', received: body.length });
  });

  it('drops a chunked request body without an answer (http.js: chunked request bodies are not implemented)', async () => {
    await engine.reports();
    const { answer } = exchange(engine.urls.ethernet!, ['POST /c HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n']);
    expect(await answer).toBe('');
    const reports = await engine.waitFor((r) => r.some((x) => x.m === 'error'));
    expect(reports.some((r) => r.m === 'requestComplete')).toBe(false);
  });

  it('detach hands over the socket at the status line: the rest of the request is read on it', async () => {
    await engine.reports();
    const { socket } = exchange(engine.urls.ethernet!, ['GET /detach HTTP/1.1\r\n'], { keepOpen: true });
    await engine.waitFor((r) => r.some((x) => x.m === 'detached'));
    socket.write('Host: b\r\n\r\n');
    const reports = await engine.waitFor((r) => r.some((x) => x.m === 'socket' && x.msg === 2));
    expect(reports.find((r) => r.m === 'socket')).toEqual({ m: 'socket', msg: 2, n: 11 });
    expect(reports.some((r) => r.m === 'header')).toBe(false); // the server no longer reads it
    await engine.run(`report({ m: 'line', text: detached.read(String, '\\n') }); detached.write('HTTP/1.1 204 No Content\\r\\n\\r\\n'); detached.close();`);
    expect(await engine.reports()).toContainEqual({ m: 'line', text: 'Host: b\r\n' });
    socket.destroy();
  });

  it('serves a second client while a first one has sent only part of its head', async () => {
    await engine.reports();
    const slow = exchange(engine.urls.ethernet!, ['GET /slow HTTP/1.1\r\nHost: b\r\n'], { keepOpen: true });
    await engine.waitFor((r) => r.some((x) => x.m === 'status' && x.path === '/slow'));
    const fast = exchange(engine.urls.ethernet!, ['GET /fast HTTP/1.1\r\nHost: b\r\n\r\n']);
    expect(await fast.answer).toMatch(/hello world$/);
    slow.socket.destroy();
  });
});

describe('flow control on an emulated socket', () => {
  it('holds at most one TCP window of what a peer sends while the firmware does not read it', async () => {
    await engine.reports();
    const { socket } = exchange(engine.urls.ethernet!, ['GET /detach HTTP/1.1\r\n', Buffer.alloc(1 << 20, 0x62)], { keepOpen: true });
    await engine.waitFor((r) => r.some((x) => x.m === 'detached'));
    await new Promise((r) => setTimeout(r, 200));
    expect(engine.host.tcp.heldBytes).toBeGreaterThan(0);
    expect(engine.host.tcp.heldBytes).toBeLessThanOrEqual(TCP_WND);
    // Reading one segment opens the window: more arrives, still within one window.
    await engine.run(`report({ m: 'read', n: detached.read(ArrayBuffer).byteLength })`);
    const [read] = await engine.reports();
    expect(read.n).toBeLessThanOrEqual(TCP_MSS);
    await new Promise((r) => setTimeout(r, 100));
    expect(engine.host.tcp.heldBytes).toBeLessThanOrEqual(TCP_WND);
    await engine.run(`detached.close()`);
    socket.destroy();
  });
});
