// https downloads keep TCP's flow control (hal/tls-stream.ts), on Node over stand-ins written from the
// SDK's source: the TCP socket with lwIP's semantics (fixtures/lwip-socket.ts), and SecureSocket as
// modules/crypt/securesocket/securesocket.js behaves: on each "readable" report it takes everything
// the TCP socket holds, decrypts whole records (16 KB here, the largest TLS allows), and hands the
// plaintext to its callback 1 KB at a time, forgetting what the callback does not read.
import { describe, expect, it, vi } from 'vitest';
import type { BodyReader, ClientResponse } from '../../firmware/src/hal/network.ts';
import { LwipSocket } from './fixtures/lwip-socket.ts';

const RECORD = 16 * 1024;

const stand = vi.hoisted(() => ({ sockets: [] as unknown[], secure: [] as { queuedMost: number }[], timers: [] as (() => void)[] }));

vi.mock('timer', () => ({
  default: {
    // Only the timers due at once run (the held report's delivery); time-outs never come in this test.
    set: (callback: () => void, ms = 0) => (ms === 0 ? stand.timers.push(callback) : 0),
    clear: () => {},
  },
}));
vi.mock('socket', async () => {
  const { LwipSocket: Base } = await import('./fixtures/lwip-socket.ts');
  class Socket extends Base {
    constructor() {
      super();
      stand.sockets.push(this);
    }
  }
  return { Socket };
});
vi.mock('securesocket', () => {
  class SecureSocket {
    callback: ((message: number, value?: number) => void) | undefined;
    private cipher: Uint8Array[] = [];
    private data: Uint8Array | undefined;
    constructor(dict: { sock: LwipSocket }) {
      const sock = dict.sock;
      sock.callback = (message: number) => {
        if (message === 1) return this.callback?.(1);
        if (message !== 2) return this.callback?.(message);
        for (let n = sock.read(); n > 0; n = sock.read()) this.cipher.push(new Uint8Array(sock.read(ArrayBuffer, n)));
        let held = Buffer.concat(this.cipher);
        while (held.length >= RECORD) {
          const record = held.subarray(0, RECORD);
          held = held.subarray(RECORD);
          for (let at = 0; at < record.length; at += 1024) {
            this.data = record.subarray(at, at + 1024);
            this.callback?.(2, this.data.length);
          }
          this.data = undefined;
        }
        this.cipher = [new Uint8Array(held)];
      };
      this.sock = sock;
    }
    sock: LwipSocket;
    read(type?: unknown, count?: number): number | ArrayBuffer {
      if (type === undefined) return this.data?.length ?? 0;
      const n = Math.min(count ?? Infinity, this.data!.length);
      const piece = new Uint8Array(this.data!.subarray(0, n)); // a copy (a Buffer's slice is a view)
      this.data = this.data!.subarray(n);
      return piece.buffer;
    }
    write(...data: unknown[]): number | void {
      if (data.length === 0) return this.sock.write() - 128;
      this.sock.write(...(data as string[]));
    }
    close(): void {
      this.sock.close();
    }
  }
  return { default: SecureSocket };
});

interface Exchange {
  what: string;
  method: string;
  head: string;
  body?: Uint8Array | BodyReader;
  bodyLength: number;
  timeoutMs: number;
}
const { TlsStream, HIGH_WATER_BYTES } = (await import('../../firmware/src/platform/moddable/hal/tls-stream.ts' as string)) as {
  TlsStream: new (o: { host: string; port: number; secure: Record<string, unknown> }) => { read(): number };
  HIGH_WATER_BYTES: number;
};
const { ClientExchange } = (await import('../../firmware/src/platform/moddable/hal/http-exchange.ts' as string)) as {
  ClientExchange: new (socket: unknown, exchange: Exchange) => { response: Promise<ClientResponse> };
};

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('an https download the core reads slowly', () => {
  it('arrives whole while the plaintext queue stays under the mark plus one record, and lwIP holds the rest', async () => {
    const body = new Uint8Array(300 * 1024).map((_, i) => (i * 7) & 0xff);
    const wire = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n`), body]);
    // Whole records on the wire: pad the stream to a record boundary, as a server's last record would end it.
    const padded = Buffer.concat([wire, Buffer.alloc((RECORD - (wire.length % RECORD)) % RECORD)]);
    const stream = new TlsStream({ host: 'cloud.example', port: 443, secure: {} });
    const raw = stand.sockets.at(-1) as LwipSocket;
    const exchange = new ClientExchange(stream, { what: 'GET https://cloud.example/image', method: 'GET', head: 'GET /image HTTP/1.1\r\n\r\n', bodyLength: 0, timeoutMs: 30_000 });
    raw.connect();
    raw.send(padded);
    let queuedMost = 0;
    const turn = async () => {
      raw.pump();
      for (const t of stand.timers.splice(0)) t();
      queuedMost = Math.max(queuedMost, stream.read());
      await settle();
    };
    let answer: ClientResponse | undefined;
    void exchange.response.then((r) => (answer = r));
    for (let i = 0; i < 200 && !answer; i++) await turn();
    const pieces: Uint8Array[] = [];
    for (let guard = 0; guard < 5000; guard++) {
      let got: Uint8Array | null | undefined;
      void answer!.body.read().then((c) => (got = c));
      while (got === undefined) await turn();
      if (got === null) break;
      pieces.push(got);
      for (let i = 0; i < 16; i++) await turn(); // the core works on it meanwhile: the network is several times faster
    }
    expect(Buffer.compare(Buffer.concat(pieces), body)).toBe(0);
    expect(queuedMost).toBeLessThanOrEqual(HIGH_WATER_BYTES + RECORD);
    expect(queuedMost).toBeGreaterThanOrEqual(HIGH_WATER_BYTES); // the mark was reached: the pause was what bounded it
  });
});
