// The SQLite store: migrations, persistence across restarts (a file, WAL), the nonce replay cache and
// its expiry, and atomic appconfig transitions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, UnsupportedDatabaseError } from '../../cloud/store/index.ts';
import { SQLITE_MIGRATIONS, SqliteStore } from '../../cloud/store/sqlite.ts';

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
