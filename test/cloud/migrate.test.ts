// The one migration runner (cloud/store/migrate.ts) on both books: steps applied from where the
// database is, in one transaction; a database newer than the steps refused; one already up to date
// opened without the migration lock (SQLite's write lock, PostgreSQL's advisory lock), which is taken
// when there is something to apply.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, MIGRATION_LOCK, postgresBook, sqliteBook } from '../../cloud/store/migrate.ts';
import { freshDatabase } from '../helpers/postgres.ts';

const STEPS = ['CREATE TABLE a (x INTEGER)', 'CREATE TABLE b (y TEXT)', 'CREATE INDEX b_y ON b (y)'];
const tables = (db: Database.Database) => (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

function memory(): Database.Database {
  const db = new Database(':memory:');
  open.push(db);
  return db;
}

describe('migrate on SQLite (PRAGMA user_version)', () => {
  it('applies every step to a new database, then only the steps a database has not had', () => {
    const db = memory();
    expect(migrate(sqliteBook(db), STEPS.slice(0, 1))).toBe(1);
    db.exec('INSERT INTO a VALUES (7)');
    // Step 1 again would fail (the table exists): only steps 2 and 3 run.
    expect(migrate(sqliteBook(db), STEPS)).toBe(3);
    expect(db.pragma('user_version', { simple: true })).toBe(3);
    expect(tables(db)).toEqual(['a', 'b']);
    expect(db.prepare('SELECT x FROM a').pluck().get()).toBe(7);
    expect(migrate(sqliteBook(db), STEPS)).toBe(3);
  });

  it('runs the pending steps in one transaction: a step that fails leaves the database as it was', () => {
    const db = memory();
    expect(() => migrate(sqliteBook(db), [...STEPS, 'CREATE TABLE a (z TEXT)'])).toThrow(/table a already exists/);
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    expect(tables(db)).toEqual([]);
  });

  it('refuses a database newer than its steps, in the cloud\'s words or the caller\'s', () => {
    const db = memory();
    db.pragma('user_version = 5');
    expect(() => migrate(sqliteBook(db), STEPS)).toThrow('the database schema is version 5, newer than this program knows (3)');
    expect(() => migrate(sqliteBook(db), STEPS, { tooNew: (found, known) => `site ${found} > ${known}` })).toThrow('site 5 > 3');
    expect(tables(db)).toEqual([]);
  });

  it('writes the application id with each step when asked', () => {
    const db = memory();
    migrate(sqliteBook(db, { applicationId: 0x46_43_53_31 }), STEPS);
    expect(db.pragma('application_id', { simple: true })).toBe(0x46_43_53_31);
    const other = memory();
    migrate(sqliteBook(other), STEPS);
    expect(other.pragma('application_id', { simple: true })).toBe(0);
  });

  it('opens a database at the latest schema while another connection holds the write lock; takes the lock only to migrate', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-migrate-'));
    open.push({ close: () => rmSync(dir, { recursive: true, force: true }) });
    const path = join(dir, 'db.sqlite');
    const first = new Database(path);
    open.push(first);
    first.pragma('journal_mode = WAL');
    migrate(sqliteBook(first), STEPS.slice(0, 2));
    const holder = new Database(path);
    open.push(holder);
    holder.exec('BEGIN IMMEDIATE');
    // No busy wait on this connection: taking the write lock would fail at once with SQLITE_BUSY.
    const db = new Database(path);
    open.push(db);
    db.pragma('busy_timeout = 0');
    expect(migrate(sqliteBook(db), STEPS.slice(0, 2))).toBe(2);
    expect(() => migrate(sqliteBook(db), STEPS)).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
    holder.exec('COMMIT');
    expect(migrate(sqliteBook(db), STEPS)).toBe(3);
  });
});

describe('migrate on PostgreSQL (schema_migrations, an advisory lock)', () => {
  it('migrates a new database, then only the missing steps; refuses a newer one', async () => {
    const pool = new pg.Pool({ connectionString: await freshDatabase(), max: 2 });
    open.push({ close: () => pool.end() });
    expect(await postgresBook(pool).read()).toBe(0);
    expect(await migrate(postgresBook(pool), STEPS.slice(0, 1))).toBe(1);
    expect(await migrate(postgresBook(pool), STEPS)).toBe(3);
    const { rows } = await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual([1, 2, 3]);
    await expect(migrate(postgresBook(pool), STEPS.slice(0, 2))).rejects.toThrow('the database schema is version 3, newer than this program knows (2)');
  });

  it('opens a database at the latest schema while another session holds the migration lock', async () => {
    const url = await freshDatabase();
    // Any wait for the lock ends in PostgreSQL's lock time-out: an open that takes the lock fails
    // rather than hanging; one that does not never waits, whatever the time-out.
    const pool = new pg.Pool({ connectionString: url, max: 2, options: '-c lock_timeout=500' });
    open.push({ close: () => pool.end() });
    await migrate(postgresBook(pool), STEPS);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    open.push({ close: () => holder.end() });
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    expect(await migrate(postgresBook(pool), STEPS)).toBe(3);
    await expect(migrate(postgresBook(pool), [...STEPS, 'CREATE TABLE c (z TEXT)'])).rejects.toThrow(/lock timeout/);
  });
});
