// The buffers between Moddable's synchronous `http` Request callbacks and the core's asynchronous
// body readers (hal/http-transfer.ts), and the request-target and response-head text of the board's
// listeners (hal/http-text.ts): pure code, checked on Node.
import { describe, expect, it } from 'vitest';
import { DownloadQueue, UploadPump } from '../../firmware/src/platform/moddable/hal/http-transfer.ts';
import { parseTarget, responseHead } from '../../firmware/src/platform/moddable/hal/http-text.ts';
import { macBytes, macList, macText } from '../../firmware/src/platform/moddable/hal/buffers.ts';

const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function readerOf(chunks: Uint8Array[]) {
  let i = 0;
  return { read: async () => chunks[i++] ?? null };
}

describe('an upload pump (requestFragment)', () => {
  it('hands out the body as the socket has room, one chunk read ahead, then ends', async () => {
    const pump = new UploadPump(readerOf([new Uint8Array([1, 2, 3, 4, 5]), new Uint8Array([6, 7])]), 7);
    const fail = (err: Error) => {
      throw err;
    };
    expect(pump.next(4, fail)!.byteLength).toBe(0); // the first chunk is still being read
    await settle();
    expect([...new Uint8Array(pump.next(4, fail)!)]).toEqual([1, 2, 3, 4]);
    expect([...new Uint8Array(pump.next(4, fail)!)]).toEqual([5]);
    await settle();
    expect([...new Uint8Array(pump.next(4, fail)!)]).toEqual([6, 7]);
    expect(pump.next(4, fail)).toBeUndefined();
  });

  it('fails the request when the reader ends short or throws', async () => {
    const errors: string[] = [];
    const short = new UploadPump(readerOf([new Uint8Array(3)]), 10);
    await settle();
    short.next(100, (e) => errors.push(e.message));
    await settle();
    short.next(100, (e) => errors.push(e.message));
    const broken = new UploadPump({ read: async () => Promise.reject(new Error('flash')) }, 10);
    await settle();
    broken.next(100, (e) => errors.push(e.message));
    expect(errors).toEqual(['the upload ended at 3 of 10 bytes', 'flash']);
  });
});

describe('a download queue (responseFragment)', () => {
  it('gives fragments to the reader in order, then null', async () => {
    const queue = new DownloadQueue(100);
    const first = queue.read();
    queue.push(new Uint8Array([1]).buffer);
    queue.push(new Uint8Array([2, 3]).buffer);
    queue.end();
    expect([...(await first)!]).toEqual([1]);
    expect([...(await queue.read())!]).toEqual([2, 3]);
    expect(await queue.read()).toBeNull();
  });

  it('calls onOverflow past its bound and rejects reads once failed', async () => {
    const queue = new DownloadQueue(4);
    let overflowed = false;
    queue.onOverflow = () => (overflowed = true);
    queue.push(new ArrayBuffer(3));
    queue.push(new ArrayBuffer(3));
    expect(overflowed).toBe(true);
    queue.fail(new Error('cut'));
    await expect(queue.read()).rejects.toThrow('cut');
  });
});

describe('request targets and response heads', () => {
  it('takes origin-form and absolute-form targets, keeps the path encoded, decodes the query', () => {
    expect(parseTarget('/api/controllers/a%2Fb?x=%41+b&y')).toEqual({ path: '/api/controllers/a%2Fb', query: { x: 'A b', y: '' } });
    expect(parseTarget('http://192.168.4.1/backup?z=1')).toEqual({ path: '/backup', query: { z: '1' } });
    expect(parseTarget('http://host')).toEqual({ path: '/', query: {} });
    expect(parseTarget('/?bad=%zz')).toEqual({ path: '/', query: { bad: '%zz' } });
    expect(() => parseTarget('*')).toThrow(/origin-form/);
  });

  it('writes one connection: close and refuses line breaks in headers', () => {
    const head = new TextDecoder().decode(responseHead(404, { 'content-length': '0', Connection: 'keep-alive' }));
    expect(head).toBe('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    expect(() => responseHead(200, { x: 'a\r\nb' })).toThrow(/line break/);
  });
});

describe('MAC spellings', () => {
  it('converts between bytes and the core spelling', () => {
    expect(macText(new Uint8Array([0x24, 0x0a, 0xc4, 0x12, 0x34, 0x56]))).toBe('24:0A:C4:12:34:56');
    expect([...macBytes('24-0a-c4-12-34-56')]).toEqual([0x24, 0x0a, 0xc4, 0x12, 0x34, 0x56]);
    expect(macList(new Uint8Array(12).fill(1).buffer)).toEqual(['01:01:01:01:01:01', '01:01:01:01:01:01']);
    expect(() => macBytes('nope')).toThrow(/not a MAC/);
  });
});

describe('a download queue and a TLS record', () => {
  it('hands a 16 KB fragment out as 4 KB views of it, without copying', async () => {
    const queue = new DownloadQueue(32 * 1024, 4096);
    const record = new ArrayBuffer(16 * 1024);
    queue.push(record);
    queue.end();
    const pieces: Uint8Array[] = [];
    for (let p = await queue.read(); p; p = await queue.read()) pieces.push(p);
    expect(pieces.map((p) => p.length)).toEqual([4096, 4096, 4096, 4096]);
    expect(pieces.every((p) => p.buffer === record)).toBe(true);
  });
});
