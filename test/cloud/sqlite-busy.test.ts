// SQLITE_BUSY (docs/cloud-workers.md): another process's connection holds the write lock of the same
// WAL file, as the workers of one `fleet serve` do. A store call waits for it off the event loop
// (retried from a timer, counted), reads go on meanwhile, and past the busy wait the call is refused
// as 503 store_saturated with nothing written.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../cloud/errors.ts';
import { Worker } from 'node:worker_threads';
import { SQLITE_MIGRATIONS } from '../../cloud/store/schema.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';

const dirs: string[] = [];
const open: { close(): unknown }[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-busy-'));
  dirs.push(dir);
  return join(dir, 'cloud.sqlite');
}
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Another connection to the file (standing for another worker process) that takes the write lock. */
function lockHolder(path: string): Database.Database {
  const other = new Database(path);
  open.push(other);
  other.exec('BEGIN IMMEDIATE');
  return other;
}

const settled = <T>(p: Promise<T>) => {
  const state = { done: false };
  p.then(() => (state.done = true), () => (state.done = true));
  return state;
};

/** A store on a new file with one device, and another connection holding the file's write lock. */
async function storeWhileLocked(uuid: string): Promise<{ store: SqliteStore; other: Database.Database }> {
  const path = tempDb();
  const store = new SqliteStore(path);
  open.push(store);
  await store.putDevice(uuid, 'PEM', 't');
  return { store, other: lockHolder(path) };
}

describe('SqliteStore under another writer', () => {
  it('waits for the write lock off the event loop, serves reads meanwhile, then writes, counting the busy answers', async () => {
    const { store, other } = await storeWhileLocked('d-1');
    const write = store.recordNonce('d-1', 'n-1', 10_000, 0);
    const state = settled(write);
    // While it waits: timers fire (the event loop is free) and reads answer.
    let ticks = 0;
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(() => r(ticks++), 10));
    expect(ticks).toBe(5);
    expect((await store.getDevice('d-1'))?.uuid).toBe('d-1');
    expect(state.done).toBe(false);
    other.exec('COMMIT');
    expect(await write).toBe(true);
    expect(await store.recordNonce('d-1', 'n-1', 10_000, 1)).toBe(false); // written once
    const stats = store.stats();
    expect(stats.busy).toBeGreaterThanOrEqual(2);
    expect([stats.calls, stats.batches, stats.gaveUp]).toEqual([1, 1, 0]);
    expect(stats.maxWaitMs).toBeGreaterThan(0);
  });

  it('writes that wait wait in one line: one transaction runs them all once the lock is free, in order, each failing alone', async () => {
    const { store, other } = await storeWhileLocked('d-4');
    const writes = [
      store.recordNonce('d-4', 'n-1', 10_000, 0),
      store.putBackup('d-4', Buffer.from('FFCE-one'), null, 't1'),
      store.recordNonce('d-4', 'n-1', 10_000, 0), // the same nonce, later in the line: a replay
      store.putBackup('d-4', Buffer.from('FFCE-two'), null, 't2'),
      store.createRelease({ class: 'c', productHex: '0x00000001', application: 'c', version: '2026.01.01', status: 'RELEASED', releasedAt: 't' }),
      store.createRelease({ class: 'c', productHex: '0x00000001', application: 'c', version: '2026.01.01', status: 'RELEASED', releasedAt: 't' }),
    ];
    const staged = store.stageConfig('svc-func-ota', { logging: 'DEBUG' }, 't');
    // A write whose statement fails (a row the schema refuses) fails alone.
    const refused = store.putRollout({ class: 'c', productHex: '0x00000001', application: 'c', version: '2026.01.01', percent: 10, groups: [], stepPercent: null, stepEverySeconds: null, errorThresholdPercent: 20, minReports: 5, healthMargin: null, healthMinDeviceHours: 100, state: 'nonsense' as 'active', anchorAtMs: 0, pausedReason: null, createdAt: 't', updatedAt: 't' });
    await new Promise((r) => setTimeout(r, 30));
    other.exec('COMMIT');
    const [first, , replay, , created, again] = await Promise.all(writes);
    expect([first, replay]).toEqual([true, false]);
    expect(created).toMatchObject({ version: '2026.01.01' });
    expect(again).toBeNull();
    expect((await staged).latest?.configuration).toEqual({ logging: 'DEBUG' });
    await expect(refused).rejects.toThrow(/CHECK constraint failed/);
    expect((await store.getBackup('d-4'))?.blob.toString()).toBe('FFCE-two');
    expect(await store.listRollouts({ class: 'c', productHex: '0x00000001', application: 'c' })).toEqual([]);
    const stats = store.stats();
    expect([stats.calls, stats.batches, stats.gaveUp]).toEqual([8, 1, 0]);
  });

  it('a transaction that reads first (enrollment) waits too, and runs whole once the lock is free', async () => {
    const path = tempDb();
    const store = new SqliteStore(path);
    open.push(store);
    const other = lockHolder(path);
    other.prepare(`INSERT INTO devices (uuid, public_key_pem, enrolled_at, updated_at) VALUES ('d-2', 'OLD', 't0', 't0')`).run();
    const put = store.putDevice('d-2', 'NEW', 't1');
    await new Promise((r) => setTimeout(r, 30));
    other.exec('COMMIT');
    // The other connection created it first: this enrollment is a re-enrollment, not a second row.
    expect(await put).toMatchObject({ created: false, device: { uuid: 'd-2', publicKeyPem: 'NEW', enrolledAt: 't0' } });
  });

  it('past the busy wait, refuses with 503 store_saturated and writes nothing', async () => {
    const path = tempDb();
    const store = new SqliteStore(path, { busyWaitMs: 100 });
    open.push(store);
    const other = lockHolder(path);
    const err = await store.putBackup('d-3', Buffer.from('FFCE-blob'), null, 't').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('store_saturated');
    expect((err as ApiError).status).toBe(503);
    expect((err as ApiError).details).toMatchObject({ gate: 'sqlite', reason: 'busy' });
    other.exec('ROLLBACK');
    expect(await store.getBackup('d-3')).toBeNull();
    expect(store.stats().gaveUp).toBe(1);
  });

  it('opens a new file that another process is migrating (the workers of a serve start together): migrated once, no error', async () => {
    const path = tempDb();
    // A thread of its own migrates the file and holds the lock a while: the constructor waits for it
    // (as SQLite does, synchronously: opening is not on a request's path), sees the schema there, and
    // does not create the tables a second time.
    const holder = new Worker(new URL('../fixtures/sqlite-lock-holder.mjs', import.meta.url), { workerData: { path, holdMs: 150, migrations: SQLITE_MIGRATIONS } });
    await new Promise<void>((resolve, reject) => {
      holder.once('message', () => resolve());
      holder.once('error', reject);
    });
    const store = new SqliteStore(path);
    open.push(store);
    expect(store.schemaVersion()).toBe(SQLITE_MIGRATIONS.length);
    await holder.terminate();
  });
});
