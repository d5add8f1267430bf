// The backup push answered before Express (cloud/backup/routes.ts, backupFastPath): devices' usual
// target is answered by the fast path, any other spelling by the Express route, with the same
// function, so every answer is the same whichever path takes it; with DEBUG on for svc-func-backup,
// Express answers every push (its per-request DEBUG line).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalPushUuid } from '../../cloud/backup/routes.ts';
import { MAX_BACKUP_BYTES } from '../../cloud/backup/ffce.ts';
import { ffceBlob, startTestCloud, type TestCloud } from '../helpers/cloud.ts';

let cloud: TestCloud;
let key: Awaited<ReturnType<TestCloud['enroll']>>['privateKey'];
let otherKey: typeof key;
const UUID = 'dev-fast-0001';

beforeAll(async () => {
  cloud = await startTestCloud();
  key = (await cloud.enroll(UUID)).privateKey;
  otherKey = (await cloud.enroll('dev-fast-0002')).privateKey;
});
afterAll(() => cloud.close());

describe('canonicalPushUuid', () => {
  it('takes the target devices send, and leaves every other spelling to Express', () => {
    expect(canonicalPushUuid('/devices/dev-1/backup')).toBe('dev-1');
    for (const other of ['/devices/dev-1/backup/', '/devices/dev%2D1/backup', '/devices/dev-1/backup?x=1', '/devices//backup', '/devices/a/b/backup', '/DEVICES/dev-1/backup', '/devices/dev-1/backups']) {
      expect(canonicalPushUuid(other), other).toBeUndefined();
    }
  });
});

/** The same request on the fast path's target and on Express's (a trailing slash). */
async function both(headers: () => Record<string, string>, body: () => Buffer, uuid = UUID) {
  const out = [];
  for (const suffix of ['', '/']) {
    const res = await fetch(`${cloud.url}/devices/${uuid}/backup${suffix}`, { method: 'POST', headers: headers(), body: body() });
    const json = (await res.json().catch(() => null)) as any;
    if (json?.last_backup_date) json.last_backup_date = '…';
    out.push({ status: res.status, etag: res.headers.get('etag'), retryAfter: res.headers.get('retry-after'), json });
  }
  return out;
}

const octets = { 'content-type': 'application/octet-stream' };

describe('the same answers through both paths', () => {
  it.each([
    ['a stored backup (200, its ETag)', () => ({ ...cloud.signed(key, UUID), ...octets, etag: 'ab'.repeat(32) }), () => ffceBlob(100), 200],
    ['an unchanged backup (304)', () => ({ ...cloud.signed(key, UUID), ...octets, etag: 'ab'.repeat(32), 'if-none-match': 'ab'.repeat(32) }), () => ffceBlob(100), 304],
    ['another content type (400)', () => ({ ...cloud.signed(key, UUID), 'content-type': 'text/plain' }), () => ffceBlob(), 400],
    ['not FFCE (400)', () => ({ ...cloud.signed(key, UUID), ...octets }), () => Buffer.from('not a backup at all, not at all'), 400],
    ['a missing signature header (400)', () => octets, () => ffceBlob(), 400],
    ['a signature by another key (401)', () => ({ ...cloud.signed(otherKey, UUID), ...octets }), () => ffceBlob(), 401],
    ['X-Device-UUID not the path\'s (403)', () => ({ ...cloud.signed(key, 'dev-fast-0002'), ...octets }), () => ffceBlob(), 403],
    ['too large, declared (413)', () => ({ ...cloud.signed(key, UUID), ...octets }), () => Buffer.concat([Buffer.from('FFCE'), Buffer.alloc(MAX_BACKUP_BYTES)]), 413],
  ])('%s', async (_name, headers, body, status) => {
    const [fast, express] = await both(headers, body);
    expect(fast!.status).toBe(status);
    expect(fast).toEqual(express);
  });

  it('a replayed nonce (401) and an unknown device (401)', async () => {
    const h = { ...cloud.signed(key, UUID), ...octets };
    expect((await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'POST', headers: h, body: ffceBlob() })).status).toBe(200);
    const [fast, express] = await both(() => h, () => ffceBlob());
    expect([fast!.status, fast!.json.error]).toEqual([401, 'nonce_replayed']);
    expect(fast).toEqual(express);
    const stranger = await both(() => ({ ...cloud.signed(key, 'dev-nobody'), ...octets }), () => ffceBlob(), 'dev-nobody');
    expect([stranger[0]!.status, stranger[0]!.json.error]).toEqual([401, 'unknown_device']);
    expect(stranger[0]).toEqual(stranger[1]);
  });
});

describe('at DEBUG', () => {
  it('Express answers every push and writes its per-request line', async () => {
    expect((await cloud.admin('PATCH', '/appconfig/svc-func-backup', { logging: 'DEBUG' })).status).toBe(200);
    expect((await cloud.admin('POST', '/appconfig/svc-func-backup/deploy')).status).toBe(202);
    const res = await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'POST', headers: { ...cloud.signed(key, UUID), ...octets }, body: ffceBlob(64) });
    expect(res.status).toBe(200);
    expect(cloud.logs.some((l) => l.function === 'svc-func-backup' && l.msg === 'request' && l.path === `/devices/${UUID}/backup` && l.status === 200)).toBe(true);
  });
});
