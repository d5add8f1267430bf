// The CloudStore contract, run against both stores: SQLite (embedded default) and PostgreSQL (a real
// server started for the test run). Same behaviour, including atomic transitions under concurrency.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../cloud/store/postgres.ts';
import { POSTGRES_MIGRATIONS } from '../../cloud/store/schema.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { CloudStore, ConsoleSessionRecord } from '../../cloud/store/types.ts';
import { openStore } from '../../cloud/store/index.ts';
import { guardStore } from '../../cloud/store/guard.ts';
import { freshDatabase } from '../helpers/postgres.ts';

const track = { class: 'ctl', productHex: '0x00000001', application: 'ctl' };
const rel = (version: string) => ({ ...track, version, status: 'RELEASED' as const, releasedAt: '2026-01-01T00:00:00.000Z' });

/** A file database: its nonce inserts and backup writes run on the store's writer thread. */
const fileDirs: string[] = [];
function sqliteFile(writer: 'worker' | 'inline'): CloudStore {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-contract-'));
  fileDirs.push(dir);
  const store = new SqliteStore(join(dir, 'cloud.sqlite'), { writer });
  expect(store.writesOffThread).toBe(writer === 'worker');
  return store;
}
afterAll(() => {
  for (const d of fileDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.each([
  ['SQLite', async () => new SqliteStore(':memory:') as CloudStore],
  ['SQLite file, writer thread', async () => sqliteFile('worker')],
  ['SQLite file, inline writes', async () => sqliteFile('inline')],
  ['PostgreSQL', async () => (await PostgresStore.connect(await freshDatabase())) as CloudStore],
])('%s store', (_name, open) => {
  let store: CloudStore;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(() => store.close());

  it('releases: string order, no duplicates, idempotent revoke keeping the first revoked_at', async () => {
    for (const v of ['2026.04.10', '2026.04.02', '2026.04.09', '2025.12.01']) expect(await store.createRelease(rel(v))).toMatchObject({ version: v, status: 'RELEASED' });
    expect(await store.createRelease(rel('2026.04.02'))).toBeNull();
    expect((await store.listReleases(track)).map((r) => r.version)).toEqual(['2025.12.01', '2026.04.02', '2026.04.09', '2026.04.10']);
    const a = await store.revokeRelease(track, '2026.04.09', '2026-02-01T00:00:00.000Z');
    const b = await store.revokeRelease(track, '2026.04.09', '2026-03-01T00:00:00.000Z');
    expect(a).toMatchObject({ status: 'REVOKED', revokedAt: '2026-02-01T00:00:00.000Z' });
    expect(b?.revokedAt).toBe('2026-02-01T00:00:00.000Z');
    expect(await store.revokeRelease(track, '2030.01.01', 'x')).toBeNull();
    expect(await store.listReleases({ ...track, application: 'other' })).toEqual([]);
    const withMeta = await store.createRelease({ ...rel('2027.01.01'), url: 'https://x/y', size: 5_000_000_000, sha256: 'ab'.repeat(32) });
    expect(withMeta).toMatchObject({ url: 'https://x/y', size: 5_000_000_000, sha256: 'ab'.repeat(32) });
  });

  it('devices: created then updated, listed in order, removed with their nonces', async () => {
    expect((await store.putDevice('d-2', 'PEM-A', 't1')).created).toBe(true);
    const again = await store.putDevice('d-2', 'PEM-B', 't2');
    expect(again).toMatchObject({ created: false, device: { uuid: 'd-2', publicKeyPem: 'PEM-B', enrolledAt: 't1', updatedAt: 't2' } });
    await store.putDevice('d-1', 'PEM-C', 't3');
    expect((await store.listDevices()).map((d) => d.uuid)).toEqual(['d-1', 'd-2']);
    expect(await store.recordNonce('d-2', 'n', 10_000, 0)).toBe(true);
    expect(await store.deleteDevice('d-2')).toBe(true);
    expect(await store.deleteDevice('d-2')).toBe(false);
    expect(await store.recordNonce('d-2', 'n', 10_000, 0)).toBe(true); // its nonces went with it
  });

  it('nonces: once per device until expiry; concurrent inserts of one nonce admit exactly one', async () => {
    expect(await store.recordNonce('d', 'n1', 1000, 0)).toBe(true);
    expect(await store.recordNonce('d', 'n1', 1000, 500)).toBe(false);
    expect(await store.recordNonce('e', 'n1', 1000, 500)).toBe(true);
    expect(await store.recordNonce('d', 'n1', 3000, 1001)).toBe(true);
    const results = await Promise.all(Array.from({ length: 8 }, () => store.recordNonce('d', 'race', 9000, 0)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('backups: stored with ETag and date, replaced, read back byte for byte, deleted', async () => {
    const blob = Buffer.concat([Buffer.from('FFCE'), Buffer.alloc(1000, 0xab)]);
    expect(await store.getBackup('d')).toBeNull();
    await store.putBackup('d', blob, 'e'.repeat(64), '2026-01-01T00:00:00.000Z');
    await store.putBackup('d', blob.subarray(0, 100), null, '2026-01-02T00:00:00.000Z');
    expect(await store.getBackupMeta('d')).toEqual({ uuid: 'd', etag: null, size: 100, lastBackupDate: '2026-01-02T00:00:00.000Z' });
    expect((await store.getBackup('d'))?.blob.equals(blob.subarray(0, 100))).toBe(true);
    expect(await store.deleteBackup('d')).toBe(true);
    expect(await store.deleteBackup('d')).toBe(false);
  });

  it('backups: a 64 KB body given up by the caller is stored byte for byte; concurrent writes of many devices all land', async () => {
    const expected = Array.from({ length: 16 }, (_, i) => Buffer.concat([Buffer.from('FFCE'), Buffer.alloc(64 * 1024 - 4, i)]));
    // Each call gets a buffer of its own (Buffer.alloc: a whole ArrayBuffer, which a store may take).
    const given = expected.map((b) => Buffer.from(Uint8Array.prototype.slice.call(b)));
    const metas = await Promise.all(given.map((b, i) => store.putBackup(`big-${i}`, b, null, '2026-01-03T00:00:00.000Z')));
    expect(metas.map((m) => m.size)).toEqual(expected.map((b) => b.length));
    for (const [i, b] of expected.entries()) expect((await store.getBackup(`big-${i}`))?.blob.equals(b)).toBe(true);
    for (let i = 0; i < 16; i++) await store.deleteBackup(`big-${i}`);
  });

  it('appconfig: staged versions, deployments that bake, delete; concurrent deploys admit exactly one', async () => {
    const fn = 'svc-func-ota';
    expect(await store.startDeployment(fn, 0, 5000)).toMatchObject({ ok: false, reason: 'nothing_staged' });
    await store.stageConfig(fn, { logging: 'DEBUG' }, 't');
    const staged = await store.stageConfig(fn, { logging: 'INFO' }, 't');
    expect(staged.latest).toMatchObject({ version: 2, configuration: { logging: 'INFO' } });
    const deploys = await Promise.all(Array.from({ length: 6 }, () => store.startDeployment(fn, 1000, 5000)));
    expect(deploys.filter((d) => d.ok)).toHaveLength(1);
    expect(deploys.filter((d) => !d.ok).every((d) => !d.ok && d.reason === 'in_progress')).toBe(true);
    expect((await store.listDeployments()).get(fn)).toMatchObject({ version: 2, configuration: { logging: 'INFO' }, endsAt: new Date(6000).toISOString() });
    expect(await store.deleteConfig(fn, 5999)).toEqual({ ok: false, reason: 'in_progress' });
    expect(await store.startDeployment(fn, 6000, 5000)).toMatchObject({ ok: false, reason: 'nothing_staged' });
    expect(await store.deleteConfig(fn, 6000)).toEqual({ ok: true });
    expect(await store.getFunctionConfig(fn)).toEqual({ functionName: fn, latest: null, deployment: null });
    expect(await store.deleteConfig(fn, 6000)).toEqual({ ok: false, reason: 'not_found' });
  });

  it('console sessions: found by the hash of their id until they expire, ended by delete, expired ones pruned at the next log-in', async () => {
    const session = (n: number, o: Partial<ConsoleSessionRecord> = {}): ConsoleSessionRecord => ({
      idHash: String(n).repeat(64).slice(0, 64),
      subject: `ops-${n} <b>ünïcode</b>`,
      groups: ['superuser', 'staff'],
      csrfHash: 'c'.repeat(64),
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAtMs: 10_000,
      ...o,
    });
    await store.createConsoleSession(session(1), 0);
    await store.createConsoleSession(session(2, { subject: null, groups: [], expiresAtMs: 5_000_000_000_000 }), 0);
    expect(await store.getConsoleSession(session(1).idHash, 9_999)).toEqual(session(1));
    expect(await store.getConsoleSession(session(2).idHash, 9_999)).toEqual(session(2, { subject: null, groups: [], expiresAtMs: 5_000_000_000_000 }));
    expect(await store.getConsoleSession(session(1).idHash, 10_000)).toBeNull(); // expired: refused
    expect(await store.getConsoleSession('f'.repeat(64), 0)).toBeNull();
    // The same id again is refused, and the first one is kept as it was.
    await expect(store.createConsoleSession(session(1, { subject: 'intruder' }), 0)).rejects.toThrow();
    expect(await store.getConsoleSession(session(1).idHash, 0)).toEqual(session(1));
    // A log-in at 10 000 removes what expired by then (looked up with an earlier clock: gone, not hidden).
    await store.createConsoleSession(session(3), 10_000);
    expect(await store.getConsoleSession(session(1).idHash, 0)).toBeNull();
    expect(await store.getConsoleSession(session(3).idHash, 0)).toEqual(session(3));
    expect(await store.deleteConsoleSession(session(2).idHash)).toBe(true);
    expect(await store.deleteConsoleSession(session(2).idHash)).toBe(false);
    expect(await store.getConsoleSession(session(2).idHash, 0)).toBeNull();
    expect(await store.deleteConsoleSession(session(3).idHash)).toBe(true);
  });

  it('answers ping; counts no lock waits with no other process writing, also through the gate (stats are not an operation)', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
    const none = { busy: 0, calls: 0, maxWaitMs: 0, batches: 0, gaveUp: 0 };
    expect(store.stats()).toEqual(none);
    expect(guardStore(store, { maxActive: 1, maxQueued: 0, maxWaitMs: 1, retryAfterSeconds: 1 }).store.stats()).toEqual(none);
  });
});

describe('PostgreSQL migrations', () => {
  it('migrate once however many instances start; refuse a newer schema; openStore picks PostgreSQL', async () => {
    const url = await freshDatabase();
    const stores = await Promise.all([PostgresStore.connect(url), PostgresStore.connect(url), PostgresStore.connect(url)]);
    expect(await stores[0]!.schemaVersion()).toBe(POSTGRES_MIGRATIONS.length);
    await Promise.all(stores.map((s) => s.close()));
    const viaUrl = await openStore(url);
    expect(viaUrl.kind).toBe('postgres');
    await viaUrl.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query('INSERT INTO schema_migrations (version) VALUES ($1)', [POSTGRES_MIGRATIONS.length + 1]);
    await c.end();
    await expect(PostgresStore.connect(url)).rejects.toThrow(/newer than this program knows/);
  });
});
