// Upload bodies reused (cloud/body-pool.ts): a body is a view of a buffer of its size class; a buffer
// given back is handed out again, never while a body still uses it; bounded in bytes; a body moved
// to another thread, or not allocated here, is not kept. And under concurrent uploads every device's
// stored backup is the one it sent, with the SQLite writes inline and on the writer thread.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BodyPool } from '../../cloud/body-pool.ts';
import { PostgresStore } from '../../cloud/store/postgres.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { CloudStore } from '../../cloud/store/types.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { startTestCloud } from '../helpers/cloud.ts';
import { backupBlob, sha256 } from '../helpers/serve.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('BodyPool', () => {
  it('hands out views of its size class, reuses what is given back, and only that', () => {
    const pool = new BodyPool(1024 * 1024);
    const a = pool.take(65536);
    const b = pool.take(60000);
    expect([a.length, a.buffer.byteLength, b.length, b.buffer.byteLength]).toEqual([65536, 65536, 60000, 65536]);
    expect(a.buffer).not.toBe(b.buffer);
    pool.give(a);
    expect(pool.bytes).toBe(65536);
    const c = pool.take(65000);
    expect(c.buffer).toBe(a.buffer);
    expect(pool.bytes).toBe(0);
    // Given twice, it is kept once; small bodies come from node's slab and are not kept.
    pool.give(b);
    pool.give(b);
    expect(pool.bytes).toBe(65536);
    const small = pool.take(100);
    pool.give(small);
    expect(pool.bytes).toBe(65536);
    // Not allocated here (a view into another buffer), or moved away (detached): not kept.
    pool.give(Buffer.alloc(200_000).subarray(10, 70_000));
    const moved = pool.take(65536);
    structuredClone(moved.buffer, { transfer: [moved.buffer as ArrayBuffer] });
    pool.give(moved);
    expect(pool.bytes).toBe(0); // `moved` took b's buffer and gave nothing back
  });

  it('holds at most maxBytes', () => {
    const pool = new BodyPool(128 * 1024);
    const bodies = [pool.take(65536), pool.take(65536), pool.take(65536)];
    for (const body of bodies) pool.give(body);
    expect(pool.bytes).toBe(128 * 1024);
  });
});

describe.each([
  ['SQLite, writes inline', 'inline'],
  ['SQLite, the writer thread', 'worker'],
  ['PostgreSQL (the write is asynchronous: a body given back early would be overwritten)', 'postgres'],
])('concurrent uploads, %s', (_name, kind) => {
  it('every device stores exactly the blob it sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-pool-'));
    dirs.push(dir);
    const store: CloudStore = kind === 'postgres' ? await PostgresStore.connect(await freshDatabase()) : new SqliteStore(join(dir, 'cloud.sqlite'), { writer: kind as 'inline' | 'worker' });
    const cloud = await startTestCloud({ store });
    try {
      const devices = await Promise.all(Array.from({ length: 16 }, (_, i) => cloud.enroll(`pool-${i}`).then((k) => ({ uuid: `pool-${i}`, ...k }))));
      const last = new Map<string, string>();
      await Promise.all(
        devices.map(async (d) => {
          for (let n = 1; n <= 12; n++) {
            // Sizes around the 64 KB class, and a few that take a class of their own.
            const blob = backupBlob(d.uuid, n, [65536, 60000, 40000, 130000][n % 4]);
            const res = await fetch(`${cloud.url}/devices/${d.uuid}/backup`, { method: 'POST', headers: { ...cloud.signed(d.privateKey, d.uuid), 'content-type': 'application/octet-stream' }, body: blob });
            expect(res.status).toBe(200);
            last.set(d.uuid, sha256(blob));
          }
        }),
      );
      for (const d of devices) expect(sha256((await store.getBackup(d.uuid))!.blob), d.uuid).toBe(last.get(d.uuid));
    } finally {
      await cloud.close();
      await store.close();
    }
  });
});
