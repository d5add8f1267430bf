// POST/GET/DELETE /devices/{uuid}/backup: every check of spec 5.1 and every status of spec 7, the
// signature format of ../shared/vectors/device-crypto.json, replay protection, the 512 KB limit while
// the body streams, and ETag/304. Over real sockets.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { ffceBlob, startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { vectors } from '../helpers/vectors.ts';

const sig = vectors.device_signature;
const VECTOR_TIME = Date.parse(sig.timestamp);
const UUID = 'dev-vector-0001';
let clock = VECTOR_TIME;
let cloud: TestCloud;
let vectorKey: KeyObject;

function b64url(hex: string): string {
  return Buffer.from(hex, 'hex').toString('base64url');
}

async function post(uuid: string, headers: Record<string, string>, body: Buffer | string) {
  return fetch(`${cloud.url}/devices/${uuid}/backup`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', ...headers },
    body,
  });
}

function signed(o: Parameters<TestCloud['signed']>[2] = {}, uuid = UUID, key = vectorKey) {
  return cloud.signed(key, uuid, { nowMs: clock, ...o });
}

beforeAll(async () => {
  cloud = await startTestCloud({ now: () => clock });
  const pub = sig.public_key_uncompressed_hex;
  vectorKey = createPrivateKey({
    key: { kty: 'EC', crv: 'P-256', d: b64url(sig.private_key_hex), x: b64url(pub.slice(2, 66)), y: b64url(pub.slice(66)) },
    format: 'jwk',
  });
  const res = await cloud.admin('PUT', `/admin/devices/${UUID}`, { public_key: sig.public_key_spki_pem });
  expect(res.status).toBe(201);
});
afterAll(() => cloud.close());

describe('the vector signature', () => {
  it('is accepted, the blob stored and last_backup_date recorded', async () => {
    const blob = Buffer.from(vectors.ffce_blob.blob_hex, 'hex');
    const res = await post(
      UUID,
      {
        'x-device-uuid': UUID,
        'x-device-nonce': sig.nonce_base64,
        'x-device-timestamp': sig.timestamp,
        'x-device-signature': sig.signature_der_base64,
        etag: vectors.ffce_blob.etag_sha256_hex,
      },
      blob,
    );
    expect(res.status).toBe(200);
    expect(await res.json() as any).toEqual({ message: 'Backup stored', last_backup_date: new Date(VECTOR_TIME).toISOString() });
    const got = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: signed() });
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe(`"${vectors.ffce_blob.etag_sha256_hex}"`);
    expect(got.headers.get('content-type')).toBe('application/octet-stream');
    expect(got.headers.get('last-modified')).toBe(new Date(VECTOR_TIME).toUTCString());
    expect(Buffer.from(await got.arrayBuffer()).equals(blob)).toBe(true);
  });

  it('replayed (same nonce) is refused with 401 and writes nothing', async () => {
    const before = await cloud.store.getBackupMeta(UUID);
    const res = await post(
      UUID,
      { 'x-device-uuid': UUID, 'x-device-nonce': sig.nonce_base64, 'x-device-timestamp': sig.timestamp, 'x-device-signature': sig.signature_der_base64 },
      ffceBlob(100, 1),
    );
    expect(res.status).toBe(401);
    expect(await res.json() as any).toMatchObject({ error: 'nonce_replayed' });
    expect(await cloud.store.getBackupMeta(UUID)).toEqual(before);
  });

  it('with one byte of the timestamp changed does not verify', async () => {
    const res = await post(
      UUID,
      { 'x-device-uuid': UUID, 'x-device-nonce': Buffer.alloc(32, 9).toString('base64'), 'x-device-timestamp': '2026-11-21T12:00:01Z', 'x-device-signature': sig.signature_der_base64 },
      ffceBlob(),
    );
    expect(res.status).toBe(401);
    expect((await res.json() as any).error).toBe('invalid_signature');
  });
});

describe('authentication (401)', () => {
  it('refuses an unknown device', async () => {
    const res = await post('dev-unknown', signed({}, 'dev-unknown'), ffceBlob());
    expect(res.status).toBe(401);
    expect((await res.json() as any).error).toBe('unknown_device');
  });

  it('refuses a signature by another key', async () => {
    const other = await cloud.enroll('dev-other');
    const res = await post(UUID, signed({}, UUID, other.privateKey), ffceBlob());
    expect(res.status).toBe(401);
    expect((await res.json() as any).error).toBe('invalid_signature');
  });

  it('refuses a signature that is valid Base64 but not DER', async () => {
    const h = signed();
    h['x-device-signature'] = Buffer.alloc(70, 1).toString('base64');
    const res = await post(UUID, h, ffceBlob());
    expect(res.status).toBe(401);
    expect((await res.json() as any).error).toBe('invalid_signature');
  });

  it.each([
    ['301 s in the past', -301_000, 401],
    ['301 s in the future', 301_000, 401],
    ['300 s in the past', -300_000, 200],
    ['300 s in the future', 300_000, 200],
  ])('a timestamp %s gives %i (window ±300 s)', async (_label, offset, status) => {
    const res = await post(UUID, signed({ nowMs: clock + offset }), ffceBlob());
    expect(res.status).toBe(status);
    if (status === 401) expect((await res.json() as any).error).toBe('timestamp_out_of_window');
  });

  it('accepts fractional seconds in the timestamp', async () => {
    const res = await post(UUID, signed({ timestamp: new Date(clock).toISOString() }), ffceBlob());
    expect(res.status).toBe(200);
  });

  it('keeps refusing a replayed nonce until the window has passed, across requests of any method', async () => {
    const h = signed();
    expect((await post(UUID, h, ffceBlob())).status).toBe(200);
    expect((await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: h })).status).toBe(401);
    expect((await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'DELETE', headers: h })).status).toBe(401);
  });
});

describe('header and body checks (400) and the UUID check (403)', () => {
  it.each(['x-device-uuid', 'x-device-nonce', 'x-device-timestamp', 'x-device-signature'])('a missing %s gives 400', async (name) => {
    const h: Record<string, string> = signed();
    delete h[name];
    const res = await post(UUID, h, ffceBlob());
    expect(res.status).toBe(400);
    expect(await res.json() as any).toMatchObject({ error: 'missing_header', details: { header: name } });
  });

  it('a nonce that is not Base64 gives 400', async () => {
    const res = await post(UUID, { ...signed(), 'x-device-nonce': '!!not base64!!' }, ffceBlob());
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_base64');
  });

  it('a signature that is not Base64 gives 400', async () => {
    const res = await post(UUID, { ...signed(), 'x-device-signature': 'MEUC*ICT' }, ffceBlob());
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_base64');
  });

  it('a nonce of 16 bytes gives 400', async () => {
    const res = await post(UUID, { ...signed(), 'x-device-nonce': Buffer.alloc(16).toString('base64') }, ffceBlob());
    expect(res.status).toBe(400);
    expect(await res.json() as any).toMatchObject({ error: 'invalid_header', details: { header: 'x-device-nonce' } });
  });

  it.each(['2026-11-21 12:00:00', '2026-11-21T12:00:00+00:00', '1700000000', '2026-02-31T12:00:00Z'])(
    'a timestamp %j gives 400',
    async (ts) => {
      const res = await post(UUID, { ...signed(), 'x-device-timestamp': ts }, ffceBlob());
      expect(res.status).toBe(400);
      expect(await res.json() as any).toMatchObject({ error: 'invalid_header', details: { header: 'x-device-timestamp' } });
    },
  );

  it('another Content-Type gives 400', async () => {
    const res = await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'POST', headers: { ...signed(), 'content-type': 'application/json' }, body: ffceBlob() });
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_content_type');
  });

  it('a body without the FFCE magic gives 400 and leaves the stored backup as it was', async () => {
    const before = await cloud.store.getBackup(UUID);
    const bad = Buffer.concat([Buffer.from('FFCD'), Buffer.alloc(60)]);
    const res = await post(UUID, signed(), bad);
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_backup_format');
    expect(await cloud.store.getBackup(UUID)).toEqual(before);
  });

  it('an FFCE body shorter than magic + IV + tag (32 bytes) gives 400', async () => {
    expect((await post(UUID, signed(), ffceBlob(27))).status).toBe(400);
    expect((await post(UUID, signed(), ffceBlob(28))).status).toBe(200);
  });

  it('an empty body gives 400', async () => {
    const res = await post(UUID, signed(), Buffer.alloc(0));
    expect(res.status).toBe(400);
  });

  it('an ETag that is not a SHA-256 hex digest gives 400', async () => {
    const res = await post(UUID, { ...signed(), etag: '"abc"' }, ffceBlob());
    expect(res.status).toBe(400);
    expect(await res.json() as any).toMatchObject({ error: 'invalid_header', details: { header: 'etag' } });
  });

  it('X-Device-UUID different from the path gives 403', async () => {
    const res = await post('dev-other', signed({}, UUID), ffceBlob());
    expect(res.status).toBe(403);
    expect((await res.json() as any).error).toBe('device_uuid_mismatch');
  });
});

describe('size limit (413)', () => {
  it('accepts exactly 524288 bytes', async () => {
    const res = await post(UUID, signed(), ffceBlob(524_288 - 4));
    expect(res.status).toBe(200);
  });

  it('refuses a declared Content-Length over 524288 before reading the body', async () => {
    const res = await post(UUID, signed(), ffceBlob(524_288 - 3));
    expect(res.status).toBe(413);
    expect((await res.json() as any).error).toBe('backup_too_large');
  });

  it('with Expect: 100-continue, refuses an oversized body before it is sent, and accepts a fitting one', async () => {
    const attempt = (length: number) =>
      new Promise<{ status: number; continued: boolean; body: string }>((resolve, reject) => {
        let continued = false;
        const req = request(`${cloud.url}/devices/${UUID}/backup`, {
          method: 'POST',
          headers: { ...signed(), 'content-type': 'application/octet-stream', 'content-length': String(length), expect: '100-continue' },
        });
        req.on('continue', () => {
          continued = true;
          req.end(ffceBlob(length - 4));
        });
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, continued, body: text }));
        });
        req.on('error', reject);
        req.flushHeaders();
      });
    const big = await attempt(600_000);
    expect(big).toMatchObject({ status: 413, continued: false });
    expect(JSON.parse(big.body).error).toBe('backup_too_large');
    const small = await attempt(1000);
    expect(small).toMatchObject({ status: 200, continued: true });
  });

  it('refuses a chunked body as soon as it streams past the limit, keeping the stored backup', async () => {
    const before = await cloud.store.getBackup(UUID);
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${cloud.url}/devices/${UUID}/backup`, {
        method: 'POST',
        headers: { ...signed(), 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(64 * 1024, 1);
      chunk.write('FFCE');
      // 640 KB in 10 chunks: over the limit after the 9th.
      let sent = 0;
      const pump = () => {
        while (sent < 10) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(status).toBe(413);
    expect(JSON.parse(body).error).toBe('backup_too_large');
    expect(await cloud.store.getBackup(UUID)).toEqual(before);
  });
});

describe('ETag and 304', () => {
  const etag = 'c0ffee'.padEnd(64, '0');

  it('stores the ETag; ETag + equal If-None-Match gives 304 and writes nothing', async () => {
    clock += 1000;
    const first = await post(UUID, { ...signed(), etag }, ffceBlob(80, 3));
    expect(first.status).toBe(200);
    const firstDate = (await first.json() as any).last_backup_date;
    clock += 1000;
    const second = await post(UUID, { ...signed(), etag: `"${etag}"`, 'if-none-match': `"${etag}"` }, ffceBlob(90, 4));
    expect(second.status).toBe(304);
    expect(await second.text()).toBe('');
    const stored = await cloud.store.getBackup(UUID);
    expect(stored?.lastBackupDate).toBe(firstDate);
    expect(stored?.blob.equals(ffceBlob(80, 3))).toBe(true);
  });

  it('If-None-Match without ETag is not evaluated: the backup is written', async () => {
    clock += 1000;
    const res = await post(UUID, { ...signed(), 'if-none-match': etag }, ffceBlob(70, 5));
    expect(res.status).toBe(200);
    const stored = await cloud.store.getBackup(UUID);
    expect(stored?.etag).toBeNull();
    expect(stored?.blob.equals(ffceBlob(70, 5))).toBe(true);
  });

  it('If-None-Match different from the stored ETag: written, new ETag returned on GET', async () => {
    const other = 'ab'.repeat(32);
    await post(UUID, { ...signed(), etag }, ffceBlob(80, 3));
    const res = await post(UUID, { ...signed(), etag: other, 'if-none-match': etag.toUpperCase() === etag ? other : 'cd'.repeat(32) }, ffceBlob(50, 6));
    expect(res.status).toBe(200);
    const got = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: signed() });
    expect(got.headers.get('etag')).toBe(`"${other}"`);
  });

  it('GET with If-None-Match equal to the stored ETag gives 304', async () => {
    const res = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: { ...signed(), 'if-none-match': `"${'ab'.repeat(32)}"` } });
    expect(res.status).toBe(304);
  });
});

describe('GET and DELETE', () => {
  it('GET and DELETE need the signature too', async () => {
    expect((await fetch(`${cloud.url}/devices/${UUID}/backup`)).status).toBe(400);
    expect((await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'DELETE' })).status).toBe(400);
    const other = await cloud.enroll('dev-thief');
    expect((await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: signed({}, UUID, other.privateKey) })).status).toBe(401);
  });

  it('DELETE answers 204, then GET and DELETE answer 404', async () => {
    expect((await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'DELETE', headers: signed() })).status).toBe(204);
    const get = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: signed() });
    expect(get.status).toBe(404);
    expect((await get.json() as any).error).toBe('backup_not_found');
    expect((await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'DELETE', headers: signed() })).status).toBe(404);
  });
});

describe('logs', () => {
  it('never contain signatures, nonces or tokens', () => {
    const text = JSON.stringify(cloud.logs);
    expect(text).not.toContain(sig.signature_der_base64);
    expect(text).not.toContain(sig.nonce_base64);
    expect(text).not.toMatch(/eyJhbGci/);
  });
});

describe('an unhandled exception (500)', () => {
  it('answers 500 internal_error without a stack trace and logs it at ERROR', async () => {
    class BrokenStore extends SqliteStore {
      override async putBackup(): Promise<never> {
        throw new Error('disk on fire');
      }
    }
    const store = new BrokenStore(':memory:');
    const broken = await startTestCloud({ store });
    try {
      const dev = await broken.enroll('dev-500');
      const res = await fetch(`${broken.url}/devices/dev-500/backup`, {
        method: 'POST',
        headers: { ...broken.signed(dev.privateKey, 'dev-500'), 'content-type': 'application/octet-stream' },
        body: ffceBlob(),
      });
      expect(res.status).toBe(500);
      const body = await res.json() as any;
      expect(body).toEqual({ error: 'internal_error', message: 'Internal server error' });
      expect(broken.logs.some((l) => l.level === 'ERROR' && l.function === 'svc-func-backup' && l.error === 'disk on fire')).toBe(true);
    } finally {
      await broken.close();
      await store.close();
    }
  });
});
