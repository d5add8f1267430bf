// The SQLite store: migrations, persistence across restarts (a file, WAL), the nonce replay cache and
// its expiry, and atomic appconfig transitions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, UnsupportedDatabaseError } from '../../cloud/store/index.ts';
import { SQLITE_MIGRATIONS } from '../../cloud/store/schema.ts';
import { sqliteOptionsFromUrl } from '../../cloud/store/database-url.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { Worker } from 'node:worker_threads';

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-store-'));
  dirs.push(dir);
  return join(dir, 'nested', 'cloud.sqlite');
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('SqliteStore', () => {
  it('creates its folder, migrates to the latest schema in WAL mode, and keeps data across reopen', async () => {
    const path = tempDb();
    const a = new SqliteStore(path);
    expect(a.schemaVersion()).toBe(SQLITE_MIGRATIONS.length);
    await a.createRelease({ class: 'c', productHex: '0x00000001', application: 'c', version: '2026.01.01', status: 'RELEASED', releasedAt: '2026-01-01T00:00:00.000Z' });
    await a.putBackup('dev', Buffer.from('FFCE0123'), 'e'.repeat(64), '2026-01-01T00:00:00.000Z');
    await a.close();
    const raw = new Database(path);
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
    const b = new SqliteStore(path);
    expect((await b.listReleases({ class: 'c', productHex: '0x00000001', application: 'c' })).map((r) => r.version)).toEqual(['2026.01.01']);
    expect((await b.getBackup('dev'))?.blob.toString()).toBe('FFCE0123');
    await b.close();
  });

  it('refuses a database whose schema is newer than it knows', async () => {
    const path = tempDb();
    new SqliteStore(path).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`);
    raw.close();
    expect(() => new SqliteStore(path)).toThrow(/newer than this program knows/);
  });

  it('records a nonce once; a replay is refused until it expires', async () => {
    const s = new SqliteStore(':memory:');
    expect(await s.recordNonce('d', 'n1', 1000, 0)).toBe(true);
    expect(await s.recordNonce('d', 'n1', 1000, 500)).toBe(false);
    expect(await s.recordNonce('other', 'n1', 1000, 500)).toBe(true); // per device
    expect(await s.recordNonce('d', 'n1', 3000, 1001)).toBe(true); // expired entry, not yet purged
    expect(await s.recordNonce('d', 'n1', 3000, 1002)).toBe(false);
    await s.close();
  });

  it('purges expired nonces as it goes', async () => {
    const path = tempDb();
    const s = new SqliteStore(path);
    for (let i = 0; i < 600; i++) await s.recordNonce('d', `n${i}`, i < 300 ? 10 : 10_000, 100);
    await s.close();
    const raw = new Database(path);
    const { n } = raw.prepare('SELECT COUNT(*) AS n FROM device_nonces').get() as { n: number };
    raw.close();
    expect(n).toBeLessThan(600);
    expect(n).toBeGreaterThanOrEqual(300);
  });

  it('a deployment in progress blocks deploy and delete atomically', async () => {
    const s = new SqliteStore(':memory:');
    await s.stageConfig('svc-func-ota', { logging: 'DEBUG' }, 't');
    expect((await s.startDeployment('svc-func-ota', 1000, 5000)).ok).toBe(true);
    await s.stageConfig('svc-func-ota', { logging: 'INFO' }, 't');
    expect(await s.startDeployment('svc-func-ota', 5999, 5000)).toMatchObject({ ok: false, reason: 'in_progress' });
    expect(await s.deleteConfig('svc-func-ota', 5999)).toEqual({ ok: false, reason: 'in_progress' });
    expect((await s.startDeployment('svc-func-ota', 6000, 5000)).ok).toBe(true);
    expect(await s.startDeployment('svc-func-ota', 20_000, 5000)).toMatchObject({ ok: false, reason: 'nothing_staged' });
    expect(await s.deleteConfig('svc-func-ota', 20_000)).toEqual({ ok: true });
    expect(await s.deleteConfig('svc-func-ota', 20_000)).toEqual({ ok: false, reason: 'not_found' });
    await s.close();
  });
});

describe('openStore', () => {
  it('opens SQLite from a path or a sqlite: URL', async () => {
    const s = await openStore('sqlite::memory:');
    expect(s.kind).toBe('sqlite');
    await s.close();
  });

  it('refuses unknown schemes', async () => {
    await expect(openStore('mysql://u@127.0.0.1/db')).rejects.toBeInstanceOf(UnsupportedDatabaseError);
    await expect(openStore('mysql://u@127.0.0.1/db')).rejects.toThrow(/unknown scheme/);
  });
});

describe('SqliteStore with a writer thread (docs/fleet-scale.md)', () => {
  const big = (fill: number) => Buffer.concat([Buffer.from('FFCE'), Buffer.alloc(64 * 1024 - 4, fill)]);

  it('is chosen by the options or by DATABASE_URL (`#writer=worker`); `:memory:` and the default write inline', async () => {
    expect(sqliteOptionsFromUrl('sqlite:/var/db/c.db#writer=worker')).toEqual({ path: '/var/db/c.db', options: { writer: 'worker' } });
    expect(sqliteOptionsFromUrl('sqlite:/var/db/c.db')).toEqual({ path: '/var/db/c.db', options: {} });
    expect(sqliteOptionsFromUrl('/plain/path#x.db')).toEqual({ path: '/plain/path#x.db', options: {} });
    expect(() => sqliteOptionsFromUrl('sqlite:/var/db/c.db#writer=threads')).toThrow(/worker or inline/);
    const path = tempDb();
    const viaUrl = (await openStore(`sqlite:${path}#writer=worker`)) as SqliteStore;
    expect(viaUrl.writesOffThread).toBe(true);
    await viaUrl.close();
    const byDefault = new SqliteStore(path);
    expect(byDefault.writesOffThread).toBe(false);
    await byDefault.close();
    const memory = new SqliteStore(':memory:', { writer: 'worker' });
    expect(memory.writesOffThread).toBe(false);
    await memory.close();
  });

  it('moves a whole 64 KB body to the writer (the caller’s buffer reads as empty after) and stores it byte for byte; a small one is copied', async () => {
    const s = new SqliteStore(tempDb(), { writer: 'worker' });
    const given = big(3);
    const meta = await s.putBackup('dev', given, 'e'.repeat(64), '2026-01-01T00:00:00.000Z');
    expect(meta).toEqual({ uuid: 'dev', etag: 'e'.repeat(64), size: 64 * 1024, lastBackupDate: '2026-01-01T00:00:00.000Z' });
    expect(given.buffer.byteLength).toBe(0); // transferred, not copied
    expect((await s.getBackup('dev'))?.blob.equals(big(3))).toBe(true);
    const small = Buffer.from('FFCE0123');
    await s.putBackup('small', small, null, '2026-01-01T00:00:00.000Z');
    expect(small.toString()).toBe('FFCE0123');
    expect((await s.getBackup('small'))?.blob.toString()).toBe('FFCE0123');
    await s.close();
  });

  it('refuses a replayed nonce across its connections: the writer’s and the main connection’s after the writer is gone', async () => {
    const s = new SqliteStore(tempDb(), { writer: 'worker' });
    expect(await s.recordNonce('d', 'n1', 10_000, 0)).toBe(true);
    const raced = await Promise.all(Array.from({ length: 8 }, () => s.recordNonce('d', 'race', 10_000, 0)));
    expect(raced.filter(Boolean)).toHaveLength(1);
    // The writer thread dies: what was pending is refused, what follows runs on the main connection.
    const pending = s.putBackup('lost-or-not', big(1), null, 't');
    await (s as unknown as { writer: { worker: Worker } }).writer.worker.terminate();
    await pending.then(
      () => undefined,
      (err: Error) => expect(err.message).toMatch(/writer thread/),
    );
    for (let i = 0; i < 500 && s.writesOffThread; i++) await new Promise((r) => setTimeout(r, 10));
    expect(s.writesOffThread).toBe(false);
    expect(await s.recordNonce('d', 'n1', 10_000, 500)).toBe(false); // written by the writer, refused here
    expect(await s.recordNonce('d', 'n2', 10_000, 500)).toBe(true);
    await s.putBackup('dev', big(2), null, 't');
    expect((await s.getBackup('dev'))?.blob.equals(big(2))).toBe(true);
    await s.close();
  });

  it('close lets the writes already sent commit first; a reopened store reads them all', async () => {
    const path = tempDb();
    const s = new SqliteStore(path, { writer: 'worker' });
    const writes = Array.from({ length: 20 }, (_, i) => s.putBackup(`dev-${i}`, big(i), null, 't'));
    const closed = s.close();
    await Promise.all(writes);
    await closed;
    const reopened = new SqliteStore(path);
    for (let i = 0; i < 20; i++) expect((await reopened.getBackup(`dev-${i}`))?.blob.equals(big(i))).toBe(true);
    await reopened.close();
  });
});
