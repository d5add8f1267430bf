// The SQLite store's waits for another process's write lock (every call of the domains' SQLite halves
// goes through it, by sqlite-connection.ts).
import type Database from 'better-sqlite3';
import { ApiError } from '../errors.ts';
import type { StoreStats } from './stats.ts';

/**
 * SQLITE_BUSY (docs/cloud-workers.md): the workers of one `fleet serve` are processes with their own
 * connections to one WAL file, and only one may write at a time. SQLite's own busy handler would wait
 * for the lock by sleeping the thread (1, 2, 5, 10 ms …): the event loop, and every request of the
 * worker with it. So the connection's busy_timeout is 0 once opened, and a write refused with
 * SQLITE_BUSY waits in this process's line of writes: the line tries again from a timer
 * (BUSY_BACKOFF_MS, with jitter) while the event loop serves other requests, and once it has the lock
 * it runs every write waiting in it in one transaction (each in its own savepoint, so one failing
 * fails alone): one process polls for the lock however many writes wait, and takes it once for all of
 * them. A write arriving while the line waits joins it. Past BUSY_WAIT_MS the waiting writes are
 * refused as 503 store_saturated (nothing written: the device retries). Reads are not blocked by a
 * writer in WAL mode; one refused all the same (a WAL being recovered) is retried alone. Every
 * refusal is counted (the store's stats()). Write transactions that read first are BEGIN
 * IMMEDIATE, so a write never fails half-way on a stale snapshot.
 */
const BUSY_WAIT_MS = 5_000;
const BUSY_BACKOFF_MS = [1, 1, 2, 2, 4, 4, 8, 8, 16] as const;

/** A write waiting in the line for another process's write lock. */
interface WaitingWrite {
  op: () => unknown;
  since: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

const backoff = (attempt: number) => {
  const base = BUSY_BACKOFF_MS[Math.min(attempt, BUSY_BACKOFF_MS.length - 1)]!;
  return new Promise((r) => setTimeout(r, base / 2 + Math.random() * base));
};

export function isBusy(err: unknown): boolean {
  return typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('SQLITE_BUSY');
}

/** One connection's waits for the write lock: its reads retried, its writes in line (see above). */
export class SqliteBusyLine {
  private readonly counts: StoreStats = { busy: 0, calls: 0, maxWaitMs: 0, batches: 0, gaveUp: 0 };
  /** Writes waiting for another process's write lock, in order; undefined while none waits. */
  private writeLine: WaitingWrite[] | undefined;
  private lineTransaction: Database.Transaction<(line: WaitingWrite[]) => { ok: boolean; value: unknown }[]> | undefined;
  private readonly db: Database.Database;
  private readonly busyWaitMs: number;

  constructor(db: Database.Database, busyWaitMs = BUSY_WAIT_MS) {
    this.db = db;
    this.busyWaitMs = busyWaitMs;
  }

  /**
   * A read: when SQLite answers SQLITE_BUSY (rare in WAL mode: a WAL being recovered), runs it again
   * from a timer, up to busyWaitMs, then refuses it as 503 store_saturated.
   */
  retrying<T>(op: () => T): T | Promise<T> {
    try {
      return op();
    } catch (err) {
      if (!isBusy(err)) throw err;
    }
    const counts = this.counts;
    counts.busy++;
    counts.calls++;
    const t0 = performance.now();
    return (async () => {
      for (let attempt = 0; ; attempt++) {
        await backoff(attempt);
        try {
          const value = op();
          counts.maxWaitMs = Math.max(counts.maxWaitMs, performance.now() - t0);
          return value;
        } catch (err) {
          if (!isBusy(err)) throw err;
          counts.busy++;
          if (performance.now() - t0 >= this.busyWaitMs) {
            counts.gaveUp++;
            throw this.busyRefusal();
          }
        }
      }
    })();
  }

  private busyRefusal(): ApiError {
    return new ApiError('store_saturated', { gate: 'sqlite', reason: 'busy', retry_after_seconds: 1 });
  }

  /**
   * A write (one statement or one transaction: a refused one has written nothing): at once when no
   * write of this process waits for the lock and SQLite takes it; otherwise in the line.
   */
  writing<T>(op: () => T): T | Promise<T> {
    if (!this.writeLine) {
      try {
        return op();
      } catch (err) {
        if (!isBusy(err)) throw err;
      }
      this.counts.busy++;
      this.writeLine = [];
      const waiting = this.join<T>(op);
      void this.drainLine();
      return waiting;
    }
    return this.join(op);
  }

  /**
   * The line's transaction, each write in its own savepoint (nested, better-sqlite3 makes it one),
   * made once: better-sqlite3 builds a transaction function's wrappers on each db.transaction().
   */
  private get runLine(): Database.Transaction<(line: WaitingWrite[]) => { ok: boolean; value: unknown }[]> {
    if (!this.lineTransaction) {
      const savepoint = this.db.transaction((op: () => unknown) => op());
      this.lineTransaction = this.db.transaction((line: WaitingWrite[]) =>
        line.map((w) => {
          try {
            return { ok: true, value: savepoint(w.op) };
          } catch (err) {
            if (isBusy(err)) throw err;
            return { ok: false, value: err };
          }
        }),
      );
    }
    return this.lineTransaction;
  }

  private join<T>(op: () => T): Promise<T> {
    this.counts.calls++;
    return new Promise<T>((resolve, reject) => this.writeLine!.push({ op, since: performance.now(), resolve: resolve as (v: unknown) => void, reject }));
  }

  /** Tries the line's writes together until the lock is had (or the busy wait is over for the oldest). */
  private async drainLine(): Promise<void> {
    const counts = this.counts;
    for (let attempt = 0; ; attempt++) {
      await backoff(attempt);
      const line = this.writeLine!;
      if (!this.db.open) {
        this.writeLine = undefined;
        for (const w of line) w.reject(new Error('the store is closed'));
        return;
      }
      let outcomes: { ok: boolean; value: unknown }[];
      try {
        // Synchronous: no write joins the line while it runs.
        outcomes = this.runLine.immediate(line);
      } catch (err) {
        if (!isBusy(err)) {
          this.writeLine = undefined;
          for (const w of line) w.reject(err);
          return;
        }
        counts.busy++;
        if (performance.now() - line[0]!.since >= this.busyWaitMs) {
          this.writeLine = undefined;
          counts.gaveUp += line.length;
          counts.maxWaitMs = Math.max(counts.maxWaitMs, performance.now() - line[0]!.since);
          for (const w of line) w.reject(this.busyRefusal());
          return;
        }
        continue;
      }
      this.writeLine = undefined;
      counts.batches++;
      const now = performance.now();
      counts.maxWaitMs = Math.max(counts.maxWaitMs, now - line[0]!.since);
      line.forEach((w, i) => (outcomes[i]!.ok ? w.resolve(outcomes[i]!.value) : w.reject(outcomes[i]!.value)));
      return;
    }
  }

  /** A statement refused as busy and left to its next run, counted all the same. */
  countBusy(): void {
    this.counts.busy++;
  }

  stats(): StoreStats {
    return { ...this.counts };
  }
}
