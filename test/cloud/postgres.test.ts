// The cloud over real sockets on the PostgreSQL store, two instances sharing it: releases made on one
// are served by the other, a nonce used on one is a replay on the other, a deployment on one applies
// on the other, a console session ended on one is refused by the other.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../cloud/store/postgres.ts';
import { ffceBlob, startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { appImage, sha256Hex } from '../helpers/images.ts';
import { freshDatabase } from '../helpers/postgres.ts';

let a: TestCloud;
let b: TestCloud;
let storeA: PostgresStore;
let storeB: PostgresStore;
/** Both instances read this clock, so a replay can be tried later inside the signature window. */
let clock = Date.parse('2026-11-21T12:00:00Z');

beforeAll(async () => {
  const url = await freshDatabase();
  storeA = await PostgresStore.connect(url);
  storeB = await PostgresStore.connect(url);
  a = await startTestCloud({ store: storeA, env: { OTA_CACHE_TTL_MS: '0' }, now: () => clock });
  b = await startTestCloud({ store: storeB, env: { OTA_CACHE_TTL_MS: '0' }, now: () => clock });
});
afterAll(async () => {
  await a.close();
  await b.close();
  await storeA.close();
  await storeB.close();
});

describe('the cloud on PostgreSQL, two instances', () => {
  it('OTA: the next version, revoked skipped, 409 on a revoked version with nothing newer', async () => {
    for (const v of ['2026.01.01', '2026.02.01', '2026.03.01']) expect((await a.admin('PUT', `/admin/firmware/ctl/0x000000ab/ctl/${v}`, { no_image: true })).status).toBe(201);
    expect((await a.admin('POST', '/admin/firmware/ctl/0x000000ab/ctl/2026.02.01/revoke')).status).toBe(200);
    const check = async (cv: string) => {
      const res = await fetch(`${b.url}/ota/ctl/0x000000AB/ctl?current_version=${cv}`);
      return { status: res.status, body: (await res.json()) as any };
    };
    expect((await check('2026.01.01')).body.version).toBe('2026.03.01');
    expect((await check('2026.03.01')).body.version).toBe('2026.03.01');
    expect((await check('2026.02.01')).body.version).toBe('2026.03.01');
    expect((await a.admin('POST', '/admin/firmware/ctl/0x000000ab/ctl/2026.03.01/revoke')).status).toBe(200);
    expect((await check('2026.03.01')).status).toBe(409);
  });

  it('backups: stored through one instance, read through the other; a nonce is a replay on both', async () => {
    const dev = await a.enroll('dev-pg');
    const headers = a.signed(dev.privateKey, 'dev-pg');
    const post = await fetch(`${a.url}/devices/dev-pg/backup`, { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream', etag: 'ab'.repeat(32) }, body: ffceBlob(500) });
    expect(post.status).toBe(200);
    // Replayed on the other instance, later but inside the 300 s window: the timestamp still passes,
    // only the shared nonce memory refuses it.
    const start = clock;
    for (const later of [2_000, 299_000]) {
      clock = start + later;
      const replay = await fetch(`${b.url}/devices/dev-pg/backup`, { headers });
      expect(replay.status, `${later} ms later`).toBe(401);
      expect((await replay.json() as any).error, `${later} ms later`).toBe('nonce_replayed');
    }
    const got = await fetch(`${b.url}/devices/dev-pg/backup`, { headers: b.signed(dev.privateKey, 'dev-pg') });
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe(`"${'ab'.repeat(32)}"`);
    expect(Buffer.from(await got.arrayBuffer()).equals(ffceBlob(500))).toBe(true);
  });

  it('appconfig: a deployment on one instance blocks the other (409) and reaches its log level', async () => {
    expect((await a.admin('PATCH', '/appconfig/svc-func-health', { logging: 'debug' })).status).toBe(200);
    expect((await a.admin('POST', '/appconfig/svc-func-health/deploy')).status).toBe(202);
    expect((await b.admin('DELETE', '/appconfig/svc-func-health')).status).toBe(409);
    await b.cloud.levels.refresh();
    expect(b.cloud.levels.get('svc-func-health')).toBe('DEBUG');
    await fetch(`${b.url}/health`);
    expect(b.logs.some((l) => l.function === 'svc-func-health' && l.level === 'DEBUG')).toBe(true);
    const health = (await (await fetch(`${b.url}/health`)).json()) as any;
    expect(health.store).toEqual({ kind: 'postgres', state: 'ok' });
  });

  it('a hosted image uploaded through one instance is served, whole and by range, by the other', async () => {
    const image = appImage('2026.05.01', { bytes: 150_000 });
    const up = await fetch(`${a.url}/admin/firmware/ctl/0x000000cd/ctl/2026.05.01/image`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await a.token()}`, 'content-type': 'application/octet-stream' },
      body: image,
    });
    expect(up.status).toBe(201);
    const path = new URL(((await up.json()) as any).url).pathname;
    const whole = await fetch(`${b.url}${path}`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('etag')).toBe(`"${sha256Hex(image)}"`);
    expect(Buffer.from(await whole.arrayBuffer()).equals(image)).toBe(true);
    const rest = await fetch(`${b.url}${path}`, { headers: { range: 'bytes=100000-', 'if-range': `"${sha256Hex(image)}"` } });
    expect(rest.status).toBe(206);
    expect(Buffer.from(await rest.arrayBuffer()).equals(image.subarray(100_000))).toBe(true);
  });

  it('a console session opened on one instance works on the other; logged out on the other, it is refused by both', async () => {
    clock = Date.now(); // the session's expiry comes from the token, minted on the real clock
    const login = await fetch(`${a.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: await a.token() }) });
    expect(login.status).toBe(201);
    const cookies = Object.fromEntries(login.headers.getSetCookie().map((c) => c.split(';', 1)[0]!.split('=') as [string, string]));
    const headers = { cookie: `fleet_session=${cookies.fleet_session}; fleet_csrf=${cookies.fleet_csrf}`, 'x-csrf-token': cookies.fleet_csrf!, 'content-type': 'application/json' };
    const enroll = (on: TestCloud, uuid: string) =>
      fetch(`${on.url}/admin/devices/${uuid}`, { method: 'PUT', headers, body: JSON.stringify({ public_key: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString() }) });
    expect((await fetch(`${b.url}/admin/devices`, { headers })).status).toBe(200);
    expect((await enroll(b, 'pg-console-1')).status).toBe(201);

    expect((await fetch(`${b.url}/console/session`, { method: 'DELETE', headers })).status).toBe(204);
    for (const instance of [a, b]) {
      const read = await fetch(`${instance.url}/admin/devices`, { headers });
      expect([read.status, ((await read.json()) as any).error]).toEqual([401, 'session_expired']);
      const put = await enroll(instance, 'pg-console-2');
      expect([put.status, ((await put.json()) as any).error]).toEqual([401, 'session_expired']);
    }
    expect((await a.admin('GET', '/admin/devices/pg-console-2')).status).toBe(404);
  });
});
