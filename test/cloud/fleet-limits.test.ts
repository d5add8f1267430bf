// The limits the cloud keeps under a boot storm (docs/fleet-scale.md): a saturated store or upload gate
// answers 503 store_saturated with Retry-After instead of queueing without bound; the health check
// still answers; log output at DEBUG is bounded in records per second and in buffered bytes. The
// Retry-After spreads the refused over the gate's measured drain rate; a push that will be a 304
// takes no upload slot; SQLite's WAL checkpoints run off the request path; an upload whose device
// left while it waited gives its slot back at once; enrollment hands its parsed key to the signature
// check.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Admission } from '../../cloud/admission.ts';
import { cachedDeviceKey } from '../../cloud/auth/device-signature.ts';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { loadConfig } from '../../cloud/config.ts';
import { jsonLineSink, LogLevels, LogRegistry, type LogRecord } from '../../cloud/logging.ts';
import type { HttpLimits } from '../../cloud/limits.ts';
import { startCloudServer, type RunningCloud } from '../../cloud/server.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { CloudStore } from '../../cloud/store/types.ts';
import { signDeviceRequest } from '../../tools/device-signer.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { ffceBlob } from '../helpers/cloud.ts';

const running: RunningCloud[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.close();
});

/**
 * A store whose getDevice waits while `hold` is set: a networked store that is slow to answer (the
 * kind the store gate bounds: PostgreSQL), made of an in-memory SQLite store.
 */
function slowStore(): { store: CloudStore; hold(): void; release(): void; raw: SqliteStore } {
  const raw = new SqliteStore(':memory:');
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const store = new Proxy(raw, {
    get(target, prop, receiver) {
      if (prop === 'kind') return 'postgres';
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'getDevice') {
        return async (uuid: string) => {
          if (gate) await gate;
          return target.getDevice(uuid);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    store,
    raw,
    hold() {
      gate = new Promise((r) => (open = r));
    },
    release() {
      gate = undefined;
      open?.();
    },
  };
}

async function start(store: CloudStore, limits: Partial<HttpLimits>): Promise<RunningCloud> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: ':memory:', JWT_SECRET: 'test-secret-0123456789abcdef' });
  const r = await startCloudServer(config, { store, sink: () => undefined, limits });
  running.push(r);
  return r;
}

async function enroll(store: CloudStore, uuid: string): Promise<KeyObject> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  await store.putDevice(uuid, publicKey.export({ type: 'spki', format: 'pem' }).toString(), new Date().toISOString());
  return privateKey;
}

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never happened: ${what}`);
}

describe('store saturation', () => {
  it('past the store gate’s queue a request gets 503 store_saturated with Retry-After; queued ones are answered once the store is back', async () => {
    const slow = slowStore();
    const key = await enroll(slow.raw, 'dev-1');
    const cloud = await start(slow.store, { storeMaxActive: 1, storeMaxQueued: 1, storeMaxWaitMs: 60_000, retryAfterSeconds: 3 });
    slow.hold();
    const get = () => fetch(`${cloud.url}/devices/dev-1/backup`, { headers: { ...signDeviceRequest(key, 'dev-1') } });
    const first = get();
    await until('one store call at work', () => cloud.cloud.gates().store.active === 1);
    const second = get();
    await until('one store call queued', () => cloud.cloud.gates().store.queued === 1);
    const third = await get();
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('3');
    expect(await third.json()).toMatchObject({ error: 'store_saturated', details: { gate: 'store', reason: 'queue_full', retry_after_seconds: 3 } });
    // The health check does not queue behind the store gate.
    const health = await fetch(`${cloud.url}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { store: { state: string } }).store.state).toBe('ok');
    slow.release();
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([404, 404]);
    expect(((await a.json()) as { error: string }).error).toBe('backup_not_found');
    expect(cloud.cloud.gates().store).toMatchObject({ active: 0, queued: 0, refusedFull: 1, peakActive: 1, peakQueued: 1 });
  });

  it('a request that waits longer than storeMaxWaitMs for the store gets 503 (wait_too_long), and the gate recovers', async () => {
    const slow = slowStore();
    const key = await enroll(slow.raw, 'dev-1');
    const cloud = await start(slow.store, { storeMaxActive: 1, storeMaxQueued: 10, storeMaxWaitMs: 100, retryAfterSeconds: 1 });
    slow.hold();
    const get = () => fetch(`${cloud.url}/devices/dev-1/backup`, { headers: { ...signDeviceRequest(key, 'dev-1') } });
    const first = get();
    await until('one store call at work', () => cloud.cloud.gates().store.active === 1);
    const waited = await get();
    expect(waited.status).toBe(503);
    expect(waited.headers.get('retry-after')).toBe('1');
    expect(await waited.json()).toMatchObject({ error: 'store_saturated', details: { reason: 'wait_too_long' } });
    slow.release();
    expect((await first).status).toBe(404);
    expect((await get()).status).toBe(404);
    expect(cloud.cloud.gates().store).toMatchObject({ active: 0, queued: 0, refusedWait: 1 });
  });
});

describe('upload gate', () => {
  it('bounds the uploads holding a body: past it 503 with Retry-After, nothing stored; the device’s retry succeeds', async () => {
    const store = new SqliteStore(':memory:');
    const key = await enroll(store, 'dev-1');
    const key2 = await enroll(store, 'dev-2');
    const cloud = await start(store, { uploadMaxActive: 1, uploadMaxQueued: 0, retryAfterSeconds: 2 });
    // dev-1 sends its headers and half of its body, then stalls: it holds the only slot.
    const body = ffceBlob(2000);
    const head =
      `POST /devices/dev-1/backup HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n` +
      Object.entries(signDeviceRequest(key, 'dev-1')).map(([k, v]) => `${k}: ${v}\r\n`).join('') +
      '\r\n';
    const stalled = rawRequest(cloud.url, Buffer.concat([Buffer.from(head), body.subarray(0, 1000)]));
    await until('one upload at work', () => cloud.cloud.gates().upload.active === 1);
    const post = (k: KeyObject, uuid: string) =>
      fetch(`${cloud.url}/devices/${uuid}/backup`, {
        method: 'POST',
        headers: { ...signDeviceRequest(k, uuid), 'content-type': 'application/octet-stream' },
        body: ffceBlob(64 * 1024),
      });
    const refused = await post(key2, 'dev-2');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(await refused.json()).toMatchObject({ error: 'store_saturated', details: { gate: 'upload', reason: 'queue_full' } });
    expect(await store.getBackupMeta('dev-2')).toBeNull();
    // The stalled upload completes, the slot frees, the refused device's retry is stored.
    stalled.socket.write(body.subarray(1000));
    expect((await stalled.answer)?.status).toBe(200);
    const retried = await post(key2, 'dev-2');
    expect(retried.status).toBe(200);
    expect((await store.getBackup('dev-2'))?.blob.equals(ffceBlob(64 * 1024))).toBe(true);
    expect((await store.getBackup('dev-1'))?.blob.equals(body)).toBe(true);
    expect(cloud.cloud.gates().upload).toMatchObject({ active: 0, peakActive: 1, refusedFull: 1 });
    await store.close();
  });

  it('Admission grants in order, never more than maxActive at once, and skips waiters that gave up', async () => {
    const gate = new Admission('t', { maxActive: 2, maxQueued: 3, maxWaitMs: 50, retryAfterSeconds: 1 });
    const r1 = await gate.acquire();
    const r2 = await gate.acquire();
    const order: number[] = [];
    const w4 = gate.acquire().then((r) => (order.push(4), r), () => 'refused');
    await expect(w4).resolves.toBe('refused'); // waited past 50 ms; still in the queue, to be skipped
    const w3 = gate.acquire().then((r) => (order.push(3), r));
    const w5 = gate.acquire().then((r) => (order.push(5), r));
    r1();
    const r3 = await w3;
    expect(gate.stats()).toMatchObject({ active: 2, queued: 1 });
    r2();
    const r5 = await w5;
    expect(order).toEqual([3, 5]);
    r3();
    r5();
    r5(); // a second release is ignored
    expect(gate.stats()).toMatchObject({ active: 0, queued: 0, refusedWait: 1, peakActive: 2 });
  });
});

describe('an upload whose device left while it waited', () => {
  it('gives its upload slot back as soon as its turn comes, instead of holding it until the body idle time-out', async () => {
    const store = new SqliteStore(':memory:');
    const key = await enroll(store, 'dev-1');
    const key2 = await enroll(store, 'dev-2');
    // The idle time-out is far longer than the test: only the early abort can free the slot.
    const cloud = await start(store, { uploadMaxActive: 1, uploadMaxQueued: 4, uploadMaxWaitMs: 600_000, bodyIdleTimeoutMs: 600_000 });
    const body = ffceBlob(2000);
    const head = (k: KeyObject, uuid: string) =>
      `POST /devices/${uuid}/backup HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n` +
      Object.entries(signDeviceRequest(k, uuid)).map(([n, v]) => `${n}: ${v}\r\n`).join('') +
      '\r\n';
    // dev-1 holds the only slot (half a body); dev-2 queues behind it, then goes away.
    const stalled = rawRequest(cloud.url, Buffer.concat([Buffer.from(head(key, 'dev-1')), body.subarray(0, 1000)]));
    await until('one upload at work', () => cloud.cloud.gates().upload.active === 1);
    const leaving = rawRequest(cloud.url, Buffer.concat([Buffer.from(head(key2, 'dev-2')), body.subarray(0, 1000)]));
    await until('one upload queued', () => cloud.cloud.gates().upload.queued === 1);
    leaving.socket.destroy();
    await leaving.answer.catch(() => undefined);
    stalled.socket.write(body.subarray(1000));
    expect((await stalled.answer)?.status).toBe(200);
    // dev-2's turn came with nobody left to read from: the slot is free again, nothing was stored.
    await until('no upload at work', () => cloud.cloud.gates().upload.active === 0 && cloud.cloud.gates().upload.queued === 0);
    expect(await store.getBackupMeta('dev-2')).toBeNull();
    const again = await fetch(`${cloud.url}/devices/dev-2/backup`, {
      method: 'POST',
      headers: { ...signDeviceRequest(key2, 'dev-2'), 'content-type': 'application/octet-stream' },
      body,
    });
    expect(again.status).toBe(200);
    await store.close();
  });
});

describe('enrollment hands its parsed key to the signature check', () => {
  it('a device enrolled through the admin API is checked with the key enrollment parsed; re-enrolled, with its new key only', async () => {
    const store = new SqliteStore(':memory:');
    const cloud = await start(store, {});
    const token = await mintToken(new TextEncoder().encode('test-secret-0123456789abcdef'), { subject: 'test', groups: ['superuser'] });
    const put = async (pem: string) =>
      fetch(`${cloud.url}/admin/devices/dev-key-cache`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ public_key: pem }),
      });
    const first = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    expect((await put(first.publicKey.export({ type: 'spki', format: 'pem' }).toString())).status).toBe(201);
    const stored = (await store.getDevice('dev-key-cache'))!.publicKeyPem;
    // In the cache before the device's first request, for the PEM the store holds.
    expect(cachedDeviceKey('dev-key-cache')?.pem).toBe(stored);
    expect(cachedDeviceKey('dev-key-cache')?.key.equals(first.publicKey)).toBe(true);
    const get = (k: KeyObject) => fetch(`${cloud.url}/devices/dev-key-cache/backup`, { headers: { ...signDeviceRequest(k, 'dev-key-cache') } });
    expect(((await (await get(first.privateKey)).json()) as { error: string }).error).toBe('backup_not_found'); // authenticated
    // Re-enrolled with another key: the cached key follows, the old key is refused.
    const second = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    expect((await put(second.publicKey.export({ type: 'spki', format: 'pem' }).toString())).status).toBe(200);
    expect(cachedDeviceKey('dev-key-cache')?.key.equals(second.publicKey)).toBe(true);
    const old = await get(first.privateKey);
    expect(old.status).toBe(401);
    expect(((await old.json()) as { error: string }).error).toBe('invalid_signature');
    expect((await get(second.privateKey)).status).toBe(404);
    await store.close();
  });
});

describe('a Retry-After that spreads the herd (cloud/admission.ts)', () => {
  it('before the drain rate is known: the fixed Retry-After; once known: the refused get successive return slots after the queue, between the least and the longest', async () => {
    let now = 1_000_000;
    const gate = new Admission('t', { maxActive: 2, maxQueued: 2, maxWaitMs: 60_000, retryAfterSeconds: 1, retryAfterMaxSeconds: 8 }, () => now);
    const held = [await gate.acquire(), await gate.acquire()];
    const queued = [gate.acquire(), gate.acquire()];
    await expect(gate.acquire()).rejects.toMatchObject({ status: 503, details: { reason: 'queue_full', retry_after_seconds: 1 } });
    // 4 grants per 500 ms bucket for 3 s: 8 a second.
    held.forEach((r) => r());
    for (const r of await Promise.all(queued)) r();
    for (let t = 0; t < 6; t++) {
      now += 500;
      for (let i = 0; i < 4; i++) (await gate.acquire())();
    }
    now += 1;
    expect(gate.stats().drainPerSecond).toBeCloseTo(8, 5);
    const busy = [await gate.acquire(), await gate.acquire()];
    const waiting = [gate.acquire(), gate.acquire()];
    const given: number[] = [];
    for (let i = 0; i < 80; i++) {
      const err = await gate.acquire().then(
        () => undefined,
        (e: { details: { retry_after_seconds: number } }) => e,
      );
      given.push(err!.details.retry_after_seconds);
    }
    // One return slot each 1/8 s (a grant frees a place in the queue): the first 8 are told 1 s, the
    // next 8 2 s, ...; never past 8 s.
    expect(given[0]).toBe(1);
    expect(given.slice(0, 60)).toEqual([...given.slice(0, 60)].sort((a, b) => a - b));
    expect(new Set(given).size).toBe(8);
    expect(given.filter((g) => g === 1)).toHaveLength(8);
    expect(given.filter((g) => g === 3)).toHaveLength(8);
    expect(Math.max(...given)).toBe(8);
    expect(gate.stats().maxRetryAfterSeconds).toBe(8);
    busy.forEach((r) => r());
    for (const r of await Promise.all(waiting)) r();
  });
});

describe('the drain rate of a gate that has just started granting', () => {
  it('is what it granted since its first grant in the window, not that spread over the whole window', async () => {
    let now = 2_000_000;
    const gate = new Admission('t', { maxActive: 4, maxQueued: 4, maxWaitMs: 60_000, retryAfterSeconds: 1, retryAfterMaxSeconds: 30 }, () => now);
    // Idle for the whole window, then 20 grants in one 500 ms bucket: 40 a second, not 8.
    now += 3_000;
    for (let i = 0; i < 20; i++) (await gate.acquire())();
    now += 500;
    expect(gate.stats().drainPerSecond).toBeCloseTo(40, 5);
    // Then 20 more in the next bucket: 40 a second over the two.
    for (let i = 0; i < 20; i++) (await gate.acquire())();
    now += 500;
    expect(gate.stats().drainPerSecond).toBeCloseTo(40, 5);
  });
});

describe('a conditional push needs no upload slot', () => {
  it('while every upload slot is taken, a push whose If-None-Match is the stored ETag still gets its 304 (and a body that is not FFCE still its 400); a changed backup is refused 503', async () => {
    const store = new SqliteStore(':memory:');
    const key = await enroll(store, 'dev-1');
    const key2 = await enroll(store, 'dev-2');
    const etag = 'ab'.repeat(32);
    await store.putBackup('dev-2', ffceBlob(1000), etag, new Date().toISOString());
    const cloud = await start(store, { uploadMaxActive: 1, uploadMaxQueued: 0 });
    const body = ffceBlob(2000);
    const head =
      `POST /devices/dev-1/backup HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n` +
      Object.entries(signDeviceRequest(key, 'dev-1')).map(([k, v]) => `${k}: ${v}\r\n`).join('') +
      '\r\n';
    const stalled = rawRequest(cloud.url, Buffer.concat([Buffer.from(head), body.subarray(0, 1000)]));
    await until('one upload at work', () => cloud.cloud.gates().upload.active === 1);
    const push = (blob: Buffer, headers: Record<string, string>) =>
      fetch(`${cloud.url}/devices/dev-2/backup`, {
        method: 'POST',
        headers: { ...signDeviceRequest(key2, 'dev-2'), 'content-type': 'application/octet-stream', etag: `"${etag}"`, ...headers },
        body: blob,
      });
    const unchanged = await push(ffceBlob(64 * 1024), { 'if-none-match': `"${etag}"` });
    expect([unchanged.status, unchanged.headers.get('etag')]).toEqual([304, `"${etag}"`]);
    const notFfce = await push(Buffer.alloc(64 * 1024, 7), { 'if-none-match': `"${etag}"` });
    expect(notFfce.status).toBe(400);
    expect(((await notFfce.json()) as { error: string }).error).toBe('invalid_backup_format');
    const changed = await push(ffceBlob(64 * 1024), { 'if-none-match': `"${'cd'.repeat(32)}"` });
    expect(changed.status).toBe(503);
    expect(await changed.json()).toMatchObject({ error: 'store_saturated', details: { gate: 'upload' } });
    // A bad signature on a would-be 304 is still a 401: the peek at the stored ETag decides nothing.
    const forged = await fetch(`${cloud.url}/devices/dev-2/backup`, {
      method: 'POST',
      headers: { ...signDeviceRequest(key, 'dev-2'), 'content-type': 'application/octet-stream', etag: `"${etag}"`, 'if-none-match': `"${etag}"` },
      body: ffceBlob(1000),
    });
    expect(forged.status).toBe(401);
    expect(cloud.cloud.gates().upload).toMatchObject({ peakActive: 1, refusedFull: 1 });
    stalled.socket.write(body.subarray(1000));
    expect((await stalled.answer)?.status).toBe(200);
    expect((await store.getBackupMeta('dev-2'))?.etag).toBe(etag);
    await store.close();
  });
});

describe('SQLite checkpoints off the request path', () => {
  it('a file store’s WAL is copied into the database by its checkpointer, not by the writes; close ends it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ckpt-'));
    try {
      const path = join(dir, 'cloud.sqlite');
      const store = new SqliteStore(path);
      const before = statSync(path).size;
      // 40 × 64 KB: far below the writer's own automatic checkpoint (16,384 pages).
      for (let i = 0; i < 40; i++) await store.putBackup(`dev-${i}`, ffceBlob(64 * 1024), null, new Date().toISOString());
      await until('the database file holds the backups', () => statSync(path).size > before + 40 * 64 * 1024);
      await store.close();
      const reopened = new SqliteStore(path);
      expect((await reopened.getBackup('dev-39'))?.blob.equals(ffceBlob(64 * 1024))).toBe(true);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('log volume at DEBUG', () => {
  it('records below WARNING past the per-second budget are counted and summarized, never written; WARNING always is', async () => {
    const store = new SqliteStore(':memory:');
    await store.stageConfig('svc-func-backup', { logging: 'DEBUG' }, '2026-11-21T00:00:00.000Z');
    await store.startDeployment('svc-func-backup', 0, 0);
    const levels = new LogLevels(store);
    await levels.refresh();
    const records: LogRecord[] = [];
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const log = new LogRegistry(levels, (r) => records.push(r), () => now, 100).logger('svc-func-backup');
    for (let i = 0; i < 1000; i++) log.debug('request', { i });
    log.warning('still written');
    expect(records).toHaveLength(101);
    expect(records.at(-1)?.msg).toBe('still written');
    now += 1000;
    log.debug('next second');
    expect(records.slice(101).map((r) => [r.level, r.msg, r.suppressed])).toEqual([
      ['WARNING', 'log records suppressed', 900],
      ['DEBUG', 'next second', undefined],
    ]);
    await store.close();
  });

  it('a log stream that does not keep up never holds more than its byte budget; what was dropped is counted', () => {
    let accepted = 0;
    const written: string[] = [];
    let stuck = true;
    const pendingCallbacks: (() => void)[] = [];
    const stream = new Writable({
      highWaterMark: 1024,
      write(chunk, _enc, done) {
        written.push(String(chunk));
        accepted++;
        if (stuck) pendingCallbacks.push(done);
        else done();
      },
    });
    const sink = jsonLineSink(stream, 10_000);
    const record = (i: number): LogRecord => ({ time: 't', level: 'DEBUG', function: 'svc-func-backup', msg: 'request', pad: 'x'.repeat(200), i });
    for (let i = 0; i < 5000; i++) sink(record(i));
    expect(stream.writableLength).toBeLessThanOrEqual(10_000 + 400);
    const kept = stream.writableLength;
    stuck = false;
    for (const cb of pendingCallbacks.splice(0)) cb();
    expect(stream.writableLength).toBe(0);
    sink(record(5000));
    const lines = written.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as LogRecord);
    const summary = lines.find((l) => l.msg === 'log records dropped');
    expect(summary?.level).toBe('WARNING');
    const delivered = lines.filter((l) => l.msg === 'request').length;
    expect(delivered + (summary?.dropped as number)).toBe(5001);
    expect(kept).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(1);
  });
});
