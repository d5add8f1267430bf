// A device that starts a backup upload and goes away (reset or FIN mid-body) is not an error of the
// service: it used to be logged as ERROR "unhandled exception" with a stack trace. It is logged at
// INFO as "client aborted upload", without a stack, and nothing is stored. Over a raw socket.
import type { KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunked, httpRequest, rawExchange } from '../../tools/fuzz/raw-http.ts';
import { ffceBlob, startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const UUID = 'dev-abort';
const STORED = ffceBlob(256, 1);
let cloud: TestCloud;
let key: KeyObject;
let target: { host: string; port: number };

beforeAll(async () => {
  cloud = await startTestCloud();
  target = { host: '127.0.0.1', port: Number(new URL(cloud.url).port) };
  key = (await cloud.enroll(UUID)).privateKey;
  expect((await cloud.admin('PATCH', '/appconfig/svc-func-backup', { logging: 'INFO' })).status).toBe(200);
  expect((await cloud.admin('POST', '/appconfig/svc-func-backup/deploy')).status).toBe(202);
  const res = await fetch(`${cloud.url}/devices/${UUID}/backup`, {
    method: 'POST',
    headers: { ...cloud.signed(key, UUID), 'content-type': 'application/octet-stream' },
    body: STORED,
  });
  expect(res.status).toBe(200);
});
afterAll(() => cloud.close());

function uploadHead(extra: [string, string][]): [string, string][] {
  return [...Object.entries(cloud.signed(key, UUID)), ['Content-Type', 'application/octet-stream'], ...extra];
}

async function waitForLog(msg: string, count: number): Promise<void> {
  for (let i = 0; i < 100 && cloud.logs.filter((l) => l.msg === msg).length < count; i++) await new Promise((r) => setTimeout(r, 20));
}

async function storedBackup(): Promise<Buffer> {
  const res = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: cloud.signed(key, UUID) });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('an upload the client abandons mid-body', () => {
  it.each([
    ['reset after part of a Content-Length body', () => [{ write: httpRequest('POST', `/devices/${UUID}/backup`, uploadHead([['Content-Length', '4096']])), delayMs: 50 }, { write: ffceBlob(1000), delayMs: 50, destroy: true }]],
    ['FIN after part of a Content-Length body', () => [{ write: httpRequest('POST', `/devices/${UUID}/backup`, uploadHead([['Content-Length', '4096']])), delayMs: 50 }, { write: ffceBlob(1000), delayMs: 50, end: true }]],
    [
      'reset inside a chunked body',
      () => [
        { write: httpRequest('POST', `/devices/${UUID}/backup`, uploadHead([['Transfer-Encoding', 'chunked']])), delayMs: 50 },
        { write: chunked([ffceBlob(1000)]).subarray(0, 600), delayMs: 50, destroy: true },
      ],
    ],
  ])('%s: logged at INFO without a stack, nothing stored', async (_label, steps) => {
    const aborts = cloud.logs.filter((l) => l.msg === 'client aborted upload').length;
    const result = await rawExchange(target, steps(), { methods: ['POST'], timeoutMs: 3000 });
    await waitForLog('client aborted upload', aborts + 1);
    // Nobody is there to read an answer after a reset; after a FIN the cloud may still say 400, as JSON.
    for (const r of result.responses) {
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body.toString())).toMatchObject({ error: 'bad_request', message: expect.any(String) });
    }
    const records = cloud.logs.filter((l) => l.msg === 'client aborted upload');
    expect(records).toHaveLength(aborts + 1);
    const record = records.at(-1)!;
    expect(record).toMatchObject({ level: 'INFO', function: 'svc-func-backup', method: 'POST', path: `/devices/${UUID}/backup` });
    expect(record).not.toHaveProperty('stack');
    expect(cloud.logs.filter((l) => l.level === 'ERROR' || l.level === 'CRITICAL')).toEqual([]);
    expect((await storedBackup()).equals(STORED)).toBe(true);
  });
});
