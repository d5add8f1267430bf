// What every SQLite half of a domain is given (docs/store-layout.md): the store's one connection and
// the three ways a call uses it, each through the line that waits out another process's write lock
// (sqlite-busy.ts). better-sqlite3 is synchronous; each call is answered as a promise, so that a sync
// throw is a rejection as on PostgreSQL.
import type Database from 'better-sqlite3';
import { isBusy, type SqliteBusyLine } from './sqlite-busy.ts';

/** SQLite's default bound on host parameters is 32766; batches of UUIDs stay well below. */
export const IN_BATCH = 500;

/** `?, ?, ?` for n parameters. */
export const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class SqliteConnection {
  constructor(
    readonly db: Database.Database,
    private readonly busy: SqliteBusyLine,
  ) {}

  /** A read; one refused as busy (rare in WAL mode) is tried again. */
  async read<T>(op: () => T): Promise<T> {
    return this.busy.retrying(op);
  }

  /** One statement that writes (or a transaction `op` makes itself), in the line of writes. */
  async write<T>(op: () => T): Promise<T> {
    return this.busy.writing(op);
  }

  /** A write that reads first: one IMMEDIATE transaction (never failing half-way on a stale snapshot), in the line. */
  async transaction<T>(fn: () => T): Promise<T> {
    return this.busy.writing(() => this.db.transaction(fn).immediate());
  }

  /** A write that can be left to a later call (a purge of expired rows): refused as busy, it is counted and dropped. */
  writeUnlessBusy(op: () => unknown): void {
    try {
      op();
    } catch (err) {
      if (!isBusy(err)) throw err;
      this.busy.countBusy();
    }
  }

  /** `op` for each batch of at most IN_BATCH of `items` (an `IN (…)` list each), the results joined. */
  inBatches<T, R>(items: T[], op: (batch: T[]) => R[]): R[] {
    const out: R[] = [];
    for (let at = 0; at < items.length; at += IN_BATCH) out.push(...op(items.slice(at, at + IN_BATCH)));
    return out;
  }
}
