// POST/GET/DELETE /devices/{uuid}/backup: every check of spec 5.1 and every status of spec 7, the
// signature format of the known-answer vectors (test/vectors/device-crypto.json), replay protection, the 512 KB limit while
// the body streams, and ETag/304. Over real sockets.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { ffceBlob, startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { streamedPost } from '../helpers/streamed-post.ts';
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

/** Every nonce and signature this file sends, for the check that none of them reaches a log line. */
const secretsSent = new Set<string>([sig.nonce_base64, sig.signature_der_base64]);

function signed(o: Parameters<TestCloud['signed']>[2] = {}, uuid = UUID, key = vectorKey) {
  const h = cloud.signed(key, uuid, { nowMs: clock, ...o });
  secretsSent.add(h['x-device-nonce']!);
  secretsSent.add(h['x-device-signature']!);
  return h;
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
  // The backup function logs at DEBUG for this whole file, so that the log check at the end has every
  // line the function can write to inspect (at the default WARNING a success writes none).
  for (const fn of ['svc-func-backup', 'svc-func-admin']) {
    expect((await cloud.admin('PATCH', `/appconfig/${fn}`, { logging: 'DEBUG' })).status).toBe(200);
    expect((await cloud.admin('POST', `/appconfig/${fn}/deploy`)).status).toBe(202);
  }
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
    const start = clock;
    const h = signed();
    expect((await post(UUID, h, ffceBlob())).status).toBe(200);
    try {
      // The clock moves inside the window: the timestamp is still acceptable, so only the nonce
      // memory refuses the replay, at 2 s, at half the window and at its last second.
      for (const later of [2_000, 150_000, 299_000]) {
        clock = start + later;
        const get = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: h });
        expect(get.status, `GET ${later} ms later`).toBe(401);
        expect((await get.json() as any).error, `GET ${later} ms later`).toBe('nonce_replayed');
        const del = await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'DELETE', headers: h });
        expect(del.status, `DELETE ${later} ms later`).toBe(401);
        expect((await del.json() as any).error, `DELETE ${later} ms later`).toBe('nonce_replayed');
      }
      // Past the window the timestamp itself is refused: the nonce need not be remembered longer.
      clock = start + 301_000;
      expect((await (await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: h })).json() as any).error).toBe('timestamp_out_of_window');
    } finally {
      clock = start;
    }
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

/**
 * Sends the signed headers and the given chunks, then waits for the answer WITHOUT ending the
 * request: the answer can only come from a server that decided before the body was complete.
 */
function partialUpload(headers: Record<string, string>, chunks: Buffer[]): Promise<{ status: number; body: string }> {
  return streamedPost(`${cloud.url}/devices/${UUID}/backup`, { ...signed(), 'content-type': 'application/octet-stream', ...headers }, chunks);
}

describe('size limit (413)', () => {
  it('accepts exactly 524288 bytes', async () => {
    const res = await post(UUID, signed(), ffceBlob(524_288 - 4));
    expect(res.status).toBe(200);
  });

  it('refuses a declared Content-Length over 524288 before reading the body', async () => {
    const res = await post(UUID, signed(), ffceBlob(524_288 - 3));
    expect(res.status).toBe(413);
    expect((await res.json() as any).error).toBe('backup_too_large');
    // The body is never sent: only the headers (and 4 bytes) go out, and the 413 still comes back. A
    // server that read the body before checking the declared length would wait for the rest.
    const early = await partialUpload({ 'content-length': String(524_289) }, [Buffer.from('FFCE')]);
    expect(early.status).toBe(413);
    expect(JSON.parse(early.body)).toMatchObject({ error: 'backup_too_large', details: { limit_bytes: 524_288, content_length: 524_289 } });
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
    // As soon as: 9 chunks of 64 KB (576 KB, past the limit in the 9th) and the request left open.
    // A server that waited for the end of the body would never answer this one.
    const chunk = Buffer.alloc(64 * 1024, 1);
    chunk.write('FFCE');
    const early = await partialUpload({ 'transfer-encoding': 'chunked' }, Array.from({ length: 9 }, () => chunk));
    expect(early.status).toBe(413);
    expect(JSON.parse(early.body)).toMatchObject({ error: 'backup_too_large', details: { limit_bytes: 524_288 } });
    expect(await cloud.store.getBackup(UUID)).toEqual(before);
  }, 15_000);
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

describe('headers of the answers, content type and path', () => {
  it('POST answers the ETag it stored, and none when none was sent; GET is no-store, with the ETag only when there is one', async () => {
    clock += 1000;
    const withEtag = await post(UUID, { ...signed(), etag: 'ef'.repeat(32) }, ffceBlob(40, 8));
    expect(withEtag.headers.get('etag')).toBe(`"${'ef'.repeat(32)}"`);
    const got = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: signed() });
    expect([got.status, got.headers.get('etag'), got.headers.get('cache-control')]).toEqual([200, `"${'ef'.repeat(32)}"`, 'no-store']);
    const without = await post(UUID, signed(), ffceBlob(40, 9));
    expect(without.status).toBe(200);
    expect(without.headers.get('etag')).toBeNull();
    const bare = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: { ...signed(), 'if-none-match': '*' } });
    expect([bare.status, bare.headers.get('etag'), bare.headers.get('cache-control')]).toEqual([200, null, 'no-store']);
    expect(Buffer.from(await bare.arrayBuffer()).equals(ffceBlob(40, 9))).toBe(true);
  });

  it('Content-Type: parameters and case are fine; another type is 400 naming what was sent', async () => {
    const res = await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'POST', headers: { ...signed(), 'content-type': 'Application/Octet-Stream; x=1' }, body: ffceBlob() });
    expect(res.status).toBe(200);
    for (const [type, shown] of [['text/plain', 'text/plain'], ['application/octet-streamx', 'application/octet-streamx']]) {
      const r = await fetch(`${cloud.url}/devices/${UUID}/backup`, { method: 'POST', headers: { ...signed(), 'content-type': type! }, body: ffceBlob() });
      expect(r.status, type).toBe(400);
      expect(await r.json() as any, type).toMatchObject({ error: 'invalid_content_type', details: { content_type: shown } });
    }
  });

  it('a path UUID that is not a device UUID is 400 invalid_uuid on every method', async () => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const r = await fetch(`${cloud.url}/devices/bad%20uuid/backup`, { method, headers: { ...signed({}, 'bad uuid'), 'content-type': 'application/octet-stream' }, ...(method === 'POST' ? { body: ffceBlob() } : {}) });
      expect(r.status, method).toBe(400);
      expect((await r.json() as any).error, method).toBe('invalid_uuid');
    }
  });

  it('a 304 on POST answers the stored ETag, and If-None-Match "*" matches any stored ETag', async () => {
    clock += 1000;
    await post(UUID, { ...signed(), etag: 'ab'.repeat(32) }, ffceBlob(40, 1));
    const r = await post(UUID, { ...signed(), etag: 'cd'.repeat(32), 'if-none-match': '*' }, ffceBlob(40, 2));
    expect([r.status, r.headers.get('etag')]).toEqual([304, `"${'ab'.repeat(32)}"`]);
    expect((await cloud.store.getBackup(UUID))?.blob.equals(ffceBlob(40, 1))).toBe(true);
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
  it('never contain signatures, nonces or tokens, at DEBUG', () => {
    const backupLines = cloud.logs.filter((l) => l.function === 'svc-func-backup');
    // There is something to inspect: the success lines (INFO) and the 304 line (DEBUG) were written.
    expect(backupLines.some((l) => l.level === 'INFO' && l.msg === 'backup stored')).toBe(true);
    expect(backupLines.some((l) => l.level === 'INFO' && l.msg === 'backup retrieved')).toBe(true);
    expect(backupLines.some((l) => l.level === 'DEBUG' && l.msg === 'backup unchanged')).toBe(true);
    const text = JSON.stringify(cloud.logs);
    expect(secretsSent.size).toBeGreaterThan(50);
    for (const secret of secretsSent) {
      expect(text).not.toContain(secret);
      // Nor in another spelling: hex, or Base64 without padding.
      expect(text).not.toContain(Buffer.from(secret, 'base64').toString('hex'));
      expect(text).not.toContain(secret.replace(/=+$/, ''));
    }
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
