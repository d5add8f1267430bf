// The one migration runner of the project (docs/store-layout.md): the cloud's SQLite and PostgreSQL
// stores and the configurator's site file all bring their schema up to date through `migrate`. A schema
// is a list of steps applied in order, never changed once shipped; each database keeps how far it is in
// its own book: SQLite in `PRAGMA user_version`, PostgreSQL in a `schema_migrations` table.
//
// The runner reads the version without a lock first: a database already at the latest schema (a worker
// opening what its supervisor migrated) is opened without taking SQLite's write lock or PostgreSQL's
// advisory lock. Otherwise every pending step runs in one transaction that holds the lock keeping any
// other migrator out, after reading the version again under it: processes starting together migrate once.
//
// better-sqlite3 is synchronous (a store or a site is opened by a constructor), node-postgres is not:
// the runner is written once over values that are either plain or promises, and a synchronous book
// gets a plain answer.
import type Database from 'better-sqlite3';
import type pg from 'pg';
import { inTransaction } from './postgres-pool.ts';

type Mode = 'sync' | 'async';
type Out<M extends Mode, T> = M extends 'sync' ? T : Promise<T>;

/** The book while the migration lock is held. */
export interface LockedBook<M extends Mode> {
  read(): Out<M, number>;
  /** Runs one step and records `version` as reached, in the locked transaction. */
  apply(sql: string, version: number): Out<M, void>;
}

/** Where a database keeps its schema version, and how its migrators keep out of each other's way. */
export interface SchemaBook<M extends Mode> {
  /** The version recorded (0 for a new database), read without taking any lock. */
  read(): Out<M, number>;
  /** `fn` in one transaction holding the lock that keeps every other migrator of the database out. */
  locked<T>(fn: (book: LockedBook<M>) => Out<M, T>): Out<M, T>;
}

export interface MigrateOptions {
  /** Why a database newer than the steps is refused (default: the cloud's wording). */
  tooNew?: (found: number, known: number) => string;
}

const cloudTooNew = (found: number, known: number) => `the database schema is version ${found}, newer than this program knows (${known})`;

type Maybe<T> = T | Promise<T>;
const andThen = <T, U>(value: Maybe<T>, next: (v: T) => Maybe<U>): Maybe<U> => (value instanceof Promise ? value.then(next) : next(value));

/**
 * Brings the database to the latest schema and returns its version; refuses (throws) a database newer
 * than `steps`, rather than guess at it.
 */
export function migrate(book: SchemaBook<'sync'>, steps: readonly string[], opts?: MigrateOptions): number;
export function migrate(book: SchemaBook<'async'>, steps: readonly string[], opts?: MigrateOptions): Promise<number>;
export function migrate(book: SchemaBook<Mode>, steps: readonly string[], opts: MigrateOptions = {}): Maybe<number> {
  const known = steps.length;
  const check = (found: number) => {
    if (found > known) throw new Error((opts.tooNew ?? cloudTooNew)(found, known));
    return found;
  };
  return andThen(book.read(), (seen) => {
    if (check(seen) === known) return known;
    return book.locked((locked: LockedBook<Mode>) => {
      const from = (v: number): Maybe<number> => (v === known ? v : andThen(locked.apply(steps[v]!, v + 1), () => from(v + 1)));
      return andThen(locked.read(), (current) => from(check(current)));
    });
  });
}

/**
 * SQLite's book: `PRAGMA user_version`; the lock is the database's write lock (an IMMEDIATE
 * transaction). `applicationId`, when given, is written with every step (`PRAGMA application_id`: the
 * configurator marks its site files so).
 */
export function sqliteBook(db: Database.Database, opts: { applicationId?: number } = {}): SchemaBook<'sync'> {
  const read = () => db.pragma('user_version', { simple: true }) as number;
  const apply = (sql: string, version: number) => {
    db.exec(sql);
    if (opts.applicationId !== undefined) db.pragma(`application_id = ${opts.applicationId}`);
    db.pragma(`user_version = ${version}`);
  };
  return { read, locked: (fn) => db.transaction(() => fn({ read, apply })).immediate() };
}

/** The advisory-lock key of migrations; appconfig's keys are hashes of `appconfig:<function>`. */
export const MIGRATION_LOCK = 0x464c4545; // "FLEE"
/** PostgreSQL: the table is missing (a new database, version 0). */
const UNDEFINED_TABLE = '42P01';

const maxVersion = async (c: pg.Pool | pg.ClientBase): Promise<number> => {
  const { rows } = await c.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return rows[0]?.v ?? 0;
};

/**
 * PostgreSQL's book: the `schema_migrations` table, one row a step; the lock is a transaction-scoped
 * advisory lock, so several instances (or the workers of several serves) starting at once migrate once.
 */
export function postgresBook(pool: pg.Pool): SchemaBook<'async'> {
  return {
    read: () => maxVersion(pool).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === UNDEFINED_TABLE) return 0;
      throw err;
    }),
    locked: (fn) =>
      inTransaction(pool, async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        await c.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
        return fn({
          read: () => maxVersion(c),
          apply: async (sql, version) => {
            await c.query(sql);
            await c.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
          },
        });
      }),
  };
}
