// DATABASE_URL (README, cloud/config.ts): which store it names, whether an SQLite database is private to
// one process, and an SQLite URL's file and store options. The store factory (index.ts) and the
// configuration read it; it loads neither store.
import type { SqliteStoreOptions } from './sqlite.ts';

/** `postgres://…` (PostgreSQL), another `scheme://…` (no store here), or SQLite: a path or a `sqlite:` URL. */
export function databaseKind(url: string): 'postgres' | 'sqlite' | 'unknown' {
  if (/^postgres(ql)?:\/\//i.test(url)) return 'postgres';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !url.startsWith('sqlite:')) return 'unknown';
  return 'sqlite';
}

/** An SQLite database that lives in one process's memory (or a temporary file of one connection). */
const PRIVATE_SQLITE = /^(sqlite:(\/\/)?)?(:memory:)?(#.*)?$/;

/** Whether the database is private to one process, so that the processes of a serve cannot share it. */
export function isPrivateSqlite(url: string): boolean {
  return PRIVATE_SQLITE.test(url);
}

/** `sqlite:path`, `sqlite::memory:`, `:memory:` or a plain file path. */
function sqlitePathFromUrl(url: string): string {
  if (url.startsWith('sqlite://')) return url.slice('sqlite://'.length);
  if (url.startsWith('sqlite:')) return url.slice('sqlite:'.length);
  return url;
}

/**
 * The store options a `sqlite:` DATABASE_URL may carry after `#`: `sqlite:/var/db/cloud.db#writer=worker`
 * puts the upload writes on a writer thread (SqliteStoreOptions). A `#` is not otherwise part of a path here.
 */
export function sqliteOptionsFromUrl(url: string): { path: string; options: SqliteStoreOptions } {
  const hash = url.startsWith('sqlite:') ? url.lastIndexOf('#') : -1;
  if (hash < 0) return { path: sqlitePathFromUrl(url), options: {} };
  const params = new URLSearchParams(url.slice(hash + 1));
  const writer = params.get('writer');
  if (writer !== null && writer !== 'worker' && writer !== 'inline') {
    throw new Error(`DATABASE_URL: writer must be worker or inline, not ${JSON.stringify(writer)}`);
  }
  return { path: sqlitePathFromUrl(url.slice(0, hash)), options: writer === null ? {} : { writer } };
}
