// The embedded default store: SQLite through better-sqlite3, WAL journal, the schema of schema.ts brought
// up to date by migrate.ts. It opens the connection and its threads, and is the SQLite halves of the
// domains side by side (docs/store-layout.md): their methods are its own.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { sqliteAppconfig } from './appconfig/sqlite.ts';
import { sqliteAudit } from './audit/sqlite.ts';
import { sqliteBackups, UPLOAD_WRITES } from './backups/sqlite.ts';
import { NONCE_PURGE_EVERY } from './backups/rows.ts';
import { sqliteConsoleSessions } from './console-sessions/sqlite.ts';
import { sqliteDevices } from './devices/sqlite.ts';
import { adoptDomains } from './domains.ts';
import { sqliteHealth } from './health/sqlite.ts';
import { migrate, sqliteBook } from './migrate.ts';
import { sqliteReleases } from './releases/sqlite.ts';
import { SQLITE_MIGRATIONS } from './schema.ts';
import { SqliteBusyLine } from './sqlite-busy.ts';
import { SqliteConnection } from './sqlite-connection.ts';
import { SqliteWriterThread, startCheckpointerThread } from './sqlite-threads.ts';
import type { CloudStore, DomainStores, StoreStats } from './types.ts';

/**
 * WAL checkpoints off the request path (docs/fleet-scale.md). SQLite checkpoints inside the commit
 * that takes the WAL past `wal_autocheckpoint` pages: it copies the WAL into the database file and
 * fsyncs, on the event loop, in the middle of some request (profiled: a nonce insert plus a 64 KB
 * backup write cost ~430 µs with it, ~180 µs without). So a file database gets a checkpointer: a
 * worker thread (sqlite-checkpointer.js) with its own connection running a PASSIVE checkpoint (never
 * blocks the writer) every CHECKPOINT_EVERY_MS. The main connection's own automatic checkpoint stays
 * as a bound, at CHECKPOINT_FALLBACK_PAGES, should the worker ever fall behind or be gone.
 */
const CHECKPOINT_EVERY_MS = 200;
const CHECKPOINT_FALLBACK_PAGES = 16_384;

/** While opening (pragmas, migrations) the connection waits for the lock as SQLite does. */
const OPEN_BUSY_TIMEOUT_MS = 5_000;

export interface SqliteStoreOptions {
  /**
   * Where a file database's nonce inserts and backup writes run: `inline` (default), on the event
   * loop's connection; `worker`, on a writer thread with its own connection (sqlite-threads.ts).
   * `:memory:` is always inline. Measured on the 2-core bench machine (docs/fleet-scale.md): the writer
   * thread takes the writes off the event loop but costs ~60–90 µs more CPU per upload (messages,
   * thread wake-ups), and with no idle core it did not raise the ingest rate; `worker` is for a host
   * with a core to spare. The writer is the only connection that writes those two tables during a
   * storm; SQLite's write lock serialises it with the main connection's rare writes (enrollment,
   * deletes), so a nonce stays admitted once.
   */
  writer?: 'worker' | 'inline';
  /**
   * How long a store call waits for another process's write lock before it is refused (default
   * BUSY_WAIT_MS, sqlite-busy.ts).
   */
  busyWaitMs?: number;
}

/** The domains' methods, given to each store by its constructor (checked there against DomainStores). */
export interface SqliteStore extends DomainStores {}

export class SqliteStore implements CloudStore {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  /** SQLITE_BUSY waited out off the event loop (sqlite-busy.ts). */
  private readonly busy: SqliteBusyLine;
  private checkpointer: Worker | undefined;
  private readonly writer: SqliteWriterThread | undefined;
  private readonly answers: Database.Statement;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.busy = new SqliteBusyLine(this.db, options.busyWaitMs);
    // First, so that the pragmas and the migration wait for another process's write lock.
    this.db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    migrate(sqliteBook(this.db), SQLITE_MIGRATIONS);
    // From now on a busy lock is waited for off the event loop (SqliteBusyLine).
    this.db.pragma('busy_timeout = 0');
    if (path !== ':memory:' && path !== '') {
      this.startCheckpointer(resolve(path));
      if (options.writer === 'worker') {
        this.writer = SqliteWriterThread.start({
          path: resolve(path),
          autocheckpointPages: this.checkpointer ? CHECKPOINT_FALLBACK_PAGES : 1000,
          purgeEvery: NONCE_PURGE_EVERY,
          sql: UPLOAD_WRITES,
        });
      }
    }
    this.answers = this.db.prepare('SELECT 1');
    const c = new SqliteConnection(this.db, this.busy);
    const domains: DomainStores = {
      ...sqliteReleases(c),
      ...sqliteDevices(c),
      ...sqliteBackups(c, this.writer),
      ...sqliteAppconfig(c),
      ...sqliteAudit(c),
      ...sqliteConsoleSessions(c),
      ...sqliteHealth(c),
    };
    adoptDomains(this, domains);
  }

  private startCheckpointer(path: string): void {
    try {
      const worker = startCheckpointerThread({ path, everyMs: CHECKPOINT_EVERY_MS });
      worker.unref();
      // A checkpointer that fails leaves the main connection's automatic checkpoint, as before.
      worker.on('error', () => {
        this.checkpointer = undefined;
        this.db.pragma('wal_autocheckpoint = 1000');
      });
      this.checkpointer = worker;
      this.db.pragma(`wal_autocheckpoint = ${CHECKPOINT_FALLBACK_PAGES}`);
    } catch {
      this.checkpointer = undefined;
    }
  }

  /** Whether a writer thread does this store's upload writes (tests, the bench). */
  get writesOffThread(): boolean {
    return this.writer?.running ?? false;
  }

  /** SQLITE_BUSY met and waited out since the store opened (docs/cloud-workers.md). */
  stats(): StoreStats {
    return this.busy.stats();
  }

  schemaVersion(): number {
    return sqliteBook(this.db).read();
  }

  async ping(): Promise<void> {
    await this.busy.retrying(() => this.answers.get());
  }

  async close(): Promise<void> {
    await this.writer?.close();
    const worker = this.checkpointer;
    this.checkpointer = undefined;
    if (worker) {
      // The worker checkpoints once more and closes its connection; terminated if it takes too long.
      let timer: NodeJS.Timeout | undefined;
      const exited = new Promise<void>((r) => worker.once('exit', () => r()));
      worker.postMessage('close');
      await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, 2000)))]);
      clearTimeout(timer);
      await worker.terminate();
    }
    if (this.db.open) this.db.close();
  }
}
