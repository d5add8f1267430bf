// The backup blob's storage (cloud/store/schema.ts, docs/fleet-scale.md): encrypted bytes never
// compress, so PostgreSQL stores them out of line without trying (STORAGE EXTERNAL). A database at the
// schema before that step migrates to it with its backups intact, on either store.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, postgresBook, sqliteBook } from '../../cloud/store/migrate.ts';
import { PostgresStore } from '../../cloud/store/postgres.ts';
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from '../../cloud/store/schema.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { freshDatabase } from '../helpers/postgres.ts';

const UUID = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const KEY = '-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n';
/** A blob as a device sends it: FFCE framing, then bytes that do not compress. */
const BLOB = Buffer.concat([Buffer.from('FFCE'), Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 2654435761) >>> 24))]);
const AT = '2026-11-28T12:00:00.000Z';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the backup blob storage step', () => {
  it('PostgreSQL: a database one step behind migrates with its backup intact; the blob column is EXTERNAL', async () => {
    const url = await freshDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await migrate(postgresBook(pool), POSTGRES_MIGRATIONS.slice(0, -1));
      await pool.query('INSERT INTO devices (uuid, public_key_pem, enrolled_at, updated_at) VALUES ($1, $2, $3, $3)', [UUID, KEY, AT]);
      await pool.query('INSERT INTO backups (uuid, blob, etag, size, last_backup_date) VALUES ($1, $2, $3, $4, $5)', [UUID, BLOB, null, BLOB.length, AT]);
      const storage = async () =>
        (await pool.query<{ attstorage: string }>("SELECT attstorage FROM pg_attribute WHERE attrelid = 'backups'::regclass AND attname = 'blob'")).rows[0]!.attstorage;
      expect(await storage()).toBe('x'); // EXTENDED, the bytea default
      const store = await PostgresStore.connect(url);
      try {
        expect(await store.schemaVersion()).toBe(POSTGRES_MIGRATIONS.length);
        expect(await storage()).toBe('e');
        expect((await store.getBackup(UUID))?.blob.equals(BLOB)).toBe(true);
        const again = Buffer.from(BLOB).reverse();
        await store.putBackup(UUID, again, null, AT);
        expect((await store.getBackup(UUID))?.blob.equals(again)).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      await pool.end();
    }
  });

  it('SQLite: a database one step behind migrates with its backup intact (nothing changes there)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'backup-storage-'));
    dirs.push(dir);
    const path = join(dir, 'cloud.sqlite');
    const db = new Database(path);
    migrate(sqliteBook(db), SQLITE_MIGRATIONS.slice(0, -1));
    db.prepare('INSERT INTO devices (uuid, public_key_pem, enrolled_at, updated_at) VALUES (?, ?, ?, ?)').run(UUID, KEY, AT, AT);
    db.prepare('INSERT INTO backups (uuid, blob, etag, size, last_backup_date) VALUES (?, ?, ?, ?, ?)').run(UUID, BLOB, null, BLOB.length, AT);
    db.close();
    const store = new SqliteStore(path);
    try {
      expect(store.schemaVersion()).toBe(SQLITE_MIGRATIONS.length);
      expect((await store.getBackup(UUID))?.blob.equals(BLOB)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
