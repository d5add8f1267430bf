// The embedded default store: SQLite through better-sqlite3, WAL journal, numbered schema migrations.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ApiError } from '../errors.ts';
import { deploymentFromRow, deviceFromRow, releaseFromRow, type DeploymentRow, type DeviceRow, type ReleaseRow } from './rows.ts';
import { SqliteFleetTables } from './sqlite-fleet.ts';
import type {
  AuditEntry,
  BackupMeta,
  CloudStore,
  ConfigVersion,
  DeleteConfigResult,
  DeployResult,
  Deployment,
  DeviceRecord,
  FirmwareRelease,
  FunctionConfigState,
  HostedImage,
  InventoryFilter,
  InventoryRecord,
  OtaCheckState,
  OtaCheckWrite,
  OutcomeCounts,
  ReleaseTrack,
  Rollout,
  RolloutState,
  StoredBackup,
  TrackSigning,
  TrackSummary,
} from './types.ts';

/** Each entry runs once, in order, inside a transaction; `PRAGMA user_version` records how far. */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `CREATE TABLE firmware_releases (
     class TEXT NOT NULL,
     product_hex TEXT NOT NULL,
     application TEXT NOT NULL,
     version TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('RELEASED', 'REVOKED')),
     released_at TEXT NOT NULL,
     revoked_at TEXT,
     url TEXT,
     size INTEGER,
     sha256 TEXT,
     PRIMARY KEY (class, product_hex, application, version)
   ) WITHOUT ROWID;
   CREATE TABLE devices (
     uuid TEXT PRIMARY KEY,
     public_key_pem TEXT NOT NULL,
     enrolled_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE device_nonces (
     uuid TEXT NOT NULL,
     nonce TEXT NOT NULL,
     expires_at_ms INTEGER NOT NULL,
     PRIMARY KEY (uuid, nonce)
   ) WITHOUT ROWID;
   CREATE INDEX device_nonces_expiry ON device_nonces (expires_at_ms);
   CREATE TABLE backups (
     uuid TEXT PRIMARY KEY,
     blob BLOB NOT NULL,
     etag TEXT,
     size INTEGER NOT NULL,
     last_backup_date TEXT NOT NULL
   );
   CREATE TABLE appconfig_versions (
     function_name TEXT NOT NULL,
     version INTEGER NOT NULL,
     configuration TEXT NOT NULL,
     created_at TEXT NOT NULL,
     PRIMARY KEY (function_name, version)
   ) WITHOUT ROWID;
   CREATE TABLE appconfig_deployments (
     function_name TEXT PRIMARY KEY,
     version INTEGER NOT NULL,
     configuration TEXT NOT NULL,
     started_at_ms INTEGER NOT NULL,
     ends_at_ms INTEGER NOT NULL
   );`,
  // Fleet operations (issue 21): hosted images, staged rollouts and their outcomes, the device
  // inventory and groups, the audit log (cloud/store/fleet-rows.ts).
  `ALTER TABLE firmware_releases ADD COLUMN hosted INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE firmware_releases ADD COLUMN chip TEXT;
   ALTER TABLE firmware_releases ADD COLUMN project TEXT;
   ALTER TABLE devices ADD COLUMN label TEXT;
   CREATE TABLE firmware_images (
     class TEXT NOT NULL,
     product_hex TEXT NOT NULL,
     application TEXT NOT NULL,
     version TEXT NOT NULL,
     sha256 TEXT NOT NULL,
     size INTEGER NOT NULL,
     bytes BLOB NOT NULL,
     PRIMARY KEY (class, product_hex, application, version),
     FOREIGN KEY (class, product_hex, application, version) REFERENCES firmware_releases ON DELETE CASCADE
   ) WITHOUT ROWID;
   CREATE TABLE rollouts (
     class TEXT NOT NULL,
     product_hex TEXT NOT NULL,
     application TEXT NOT NULL,
     version TEXT NOT NULL,
     percent INTEGER NOT NULL,
     groups TEXT NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('active', 'paused')),
     step_percent INTEGER,
     step_every_seconds INTEGER,
     error_threshold_percent INTEGER NOT NULL,
     min_reports INTEGER NOT NULL,
     anchor_at_ms INTEGER NOT NULL,
     paused_reason TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     PRIMARY KEY (class, product_hex, application, version),
     FOREIGN KEY (class, product_hex, application, version) REFERENCES firmware_releases ON DELETE CASCADE
   ) WITHOUT ROWID;
   CREATE TABLE rollout_outcomes (
     class TEXT NOT NULL,
     product_hex TEXT NOT NULL,
     application TEXT NOT NULL,
     version TEXT NOT NULL,
     uuid TEXT NOT NULL,
     outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'succeeded', 'failed')),
     from_version TEXT NOT NULL,
     offered_at TEXT NOT NULL,
     settled_at TEXT,
     attempts INTEGER NOT NULL,
     PRIMARY KEY (class, product_hex, application, version, uuid)
   ) WITHOUT ROWID;
   CREATE TABLE device_inventory (
     uuid TEXT PRIMARY KEY REFERENCES devices (uuid) ON DELETE CASCADE,
     last_check_at TEXT NOT NULL,
     last_check_version TEXT NOT NULL,
     last_check_class TEXT NOT NULL,
     last_check_product_hex TEXT NOT NULL,
     last_check_application TEXT NOT NULL,
     offered_version TEXT,
     offered_from TEXT,
     offered_at TEXT
   );
   CREATE INDEX device_inventory_last_check ON device_inventory (last_check_at);
   CREATE TABLE device_groups (
     uuid TEXT NOT NULL REFERENCES devices (uuid) ON DELETE CASCADE,
     group_name TEXT NOT NULL,
     PRIMARY KEY (uuid, group_name)
   ) WITHOUT ROWID;
   CREATE INDEX device_groups_name ON device_groups (group_name, uuid);
   CREATE TABLE audit_log (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at TEXT NOT NULL,
     actor TEXT NOT NULL,
     via TEXT NOT NULL,
     action TEXT NOT NULL,
     method TEXT NOT NULL,
     path TEXT NOT NULL,
     status INTEGER NOT NULL,
     details TEXT
   );`,
  // Signed images (docs/secure-boot.md): which key signed a hosted image, and each track's signing setting.
  `ALTER TABLE firmware_releases ADD COLUMN signed_block INTEGER;
   ALTER TABLE firmware_releases ADD COLUMN signed_key_digest TEXT;
   CREATE TABLE track_signing (
     class TEXT NOT NULL,
     product_hex TEXT NOT NULL,
     application TEXT NOT NULL,
     required INTEGER NOT NULL CHECK (required IN (0, 1)),
     keys TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     PRIMARY KEY (class, product_hex, application)
   ) WITHOUT ROWID;`,
];

/** How many nonce inserts between two purges of expired nonces. */
const NONCE_PURGE_EVERY = 256;

/**
 * WAL checkpoints off the request path (docs/fleet-scale.md). SQLite checkpoints inside the commit
 * that takes the WAL past `wal_autocheckpoint` pages: it copies the WAL into the database file and
 * fsyncs, on the event loop, in the middle of some request (profiled: a nonce insert plus a 64 KB
 * backup write cost ~430 µs with it, ~180 µs without). So a file database gets a checkpointer: a
 * worker thread with its own connection running a PASSIVE checkpoint (never blocks the writer) every
 * CHECKPOINT_EVERY_MS. The main connection's own automatic checkpoint stays as a bound, at
 * CHECKPOINT_FALLBACK_PAGES, should the worker ever fall behind or be gone.
 */
const CHECKPOINT_EVERY_MS = 200;
const CHECKPOINT_FALLBACK_PAGES = 16_384;

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
 * refusal is counted (busyStats()). Write transactions that read first are BEGIN IMMEDIATE, so a
 * write never fails half-way on a stale snapshot.
 */
const BUSY_WAIT_MS = 5_000;
const BUSY_BACKOFF_MS = [1, 1, 2, 2, 4, 4, 8, 8, 16] as const;
/** While opening (pragmas, migrations) the connection waits for the lock as SQLite does. */
const OPEN_BUSY_TIMEOUT_MS = 5_000;

export interface SqliteBusyStats {
  /** Statements or transactions refused with SQLITE_BUSY, each tried again. */
  busy: number;
  /** Store calls that waited for another process's write lock, and the longest time one waited, ms. */
  calls: number;
  maxWaitMs: number;
  /** Transactions that ran a line of waiting writes together, once the lock was had. */
  batches: number;
  /** Store calls refused after BUSY_WAIT_MS (answered 503). */
  gaveUp: number;
}

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

function isBusy(err: unknown): boolean {
  return typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('SQLITE_BUSY');
}

/**
 * The two writes of every upload, shared by the main connection (inline mode) and the writer thread.
 * A nonce in one statement, as on PostgreSQL: a new nonce is inserted, an expired one not purged yet
 * is revived, a live one changes nothing (a replay). No transaction wrapper per request.
 */
const RECORD_NONCE_SQL = `INSERT INTO device_nonces (uuid, nonce, expires_at_ms) VALUES (?, ?, ?)
  ON CONFLICT (uuid, nonce) DO UPDATE SET expires_at_ms = excluded.expires_at_ms WHERE device_nonces.expires_at_ms <= ?`;
const PURGE_NONCES_SQL = `DELETE FROM device_nonces WHERE expires_at_ms <= ?`;
const PUT_BACKUP_SQL = `INSERT INTO backups (uuid, blob, etag, size, last_backup_date) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (uuid) DO UPDATE SET blob = excluded.blob, etag = excluded.etag, size = excluded.size,
    last_backup_date = excluded.last_backup_date`;

/**
 * The writer thread (docs/fleet-scale.md): a file database's nonce inserts and backup writes (the
 * store's work on every upload, ~300 µs of synchronous SQLite per upload) run on a worker thread with
 * its own connection instead of the event loop. One message per call, answered after the commit, in
 * order; the backup's bytes are moved (its ArrayBuffer transferred), not copied. The writer is the
 * only connection that writes these two tables during a storm; SQLite's write lock serialises it
 * with the main connection's rare writes (enrollment, deletes), so a nonce stays admitted once.
 */
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path);
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
db.pragma('wal_autocheckpoint = ' + workerData.autocheckpointPages);
const recordNonce = db.prepare(workerData.sql.recordNonce);
const purgeNonces = db.prepare(workerData.sql.purgeNonces);
const putBackup = db.prepare(workerData.sql.putBackup);
let sincePurge = 0;
parentPort.on('message', (m) => {
  if (m.op === 'close') { db.close(); process.exit(0); }
  try {
    if (m.op === 'nonce') {
      if (++sincePurge >= workerData.purgeEvery) { sincePurge = 0; purgeNonces.run(m.nowMs); }
      parentPort.postMessage({ id: m.id, value: recordNonce.run(m.uuid, m.nonce, m.expiresAtMs, m.nowMs).changes > 0 });
    } else if (m.op === 'putBackup') {
      putBackup.run(m.uuid, Buffer.from(m.blob.buffer, m.blob.byteOffset, m.blob.byteLength), m.etag, m.blob.byteLength, m.at);
      parentPort.postMessage({ id: m.id, value: true });
    } else {
      parentPort.postMessage({ id: m.id, error: { message: 'unknown writer operation ' + m.op } });
    }
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: { message: String(err && err.message), code: err && err.code } });
  }
});
`;

/** Below this a blob is copied to the writer thread, not transferred (it may be a slice of node's shared pool). */
const TRANSFER_MIN_BYTES = 4096;

export interface SqliteStoreOptions {
  /**
   * Where a file database's nonce inserts and backup writes run: `inline` (default), on the event
   * loop's connection; `worker`, on a writer thread with its own connection. `:memory:` is always
   * inline. Measured on the 2-core bench machine (docs/fleet-scale.md): the writer thread takes the
   * writes off the event loop but costs ~60–90 µs more CPU per upload (messages, thread wake-ups), and
   * with no idle core it did not raise the ingest rate; `worker` is for a host with a core to spare.
   */
  writer?: 'worker' | 'inline';
  /** How long a store call waits for another process's write lock before it is refused (default BUSY_WAIT_MS). */
  busyWaitMs?: number;
}

interface PendingWrite {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 100');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or closing: next time */ }
}, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} db.close(); process.exit(0); });
`;

/** `sqlite:path`, `sqlite::memory:`, `:memory:` or a plain file path. */
export function sqlitePathFromUrl(url: string): string {
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

export class SqliteStore implements CloudStore {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private noncesSincePurge = 0;
  private readonly stmts;
  private readonly fleet: SqliteFleetTables;
  private checkpointer: Worker | undefined;
  private writer: Worker | undefined;
  private readonly pending = new Map<number, PendingWrite>();
  private nextId = 0;
  private readonly busyCounts: SqliteBusyStats = { busy: 0, calls: 0, maxWaitMs: 0, batches: 0, gaveUp: 0 };
  /** Writes waiting for another process's write lock, in order; undefined while none waits. */
  private writeLine: WaitingWrite[] | undefined;
  private lineTransaction: Database.Transaction<(line: WaitingWrite[]) => { ok: boolean; value: unknown }[]> | undefined;
  private readonly busyWaitMs: number;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.busyWaitMs = options.busyWaitMs ?? BUSY_WAIT_MS;
    this.db = new Database(path);
    // First, so that the pragmas and the migration wait for another process's write lock.
    this.db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.migrate();
    // From now on a busy lock is waited for off the event loop (retrying()).
    this.db.pragma('busy_timeout = 0');
    if (path !== ':memory:' && path !== '') {
      this.startCheckpointer(resolve(path));
      if (options.writer === 'worker') this.startWriter(resolve(path));
    }
    const db = this.db;
    this.stmts = {
      listReleases: db.prepare<[string, string, string], ReleaseRow>(
        `SELECT * FROM firmware_releases WHERE class = ? AND product_hex = ? AND application = ? ORDER BY version`,
      ),
      getRelease: db.prepare<[string, string, string, string], ReleaseRow>(
        `SELECT * FROM firmware_releases WHERE class = ? AND product_hex = ? AND application = ? AND version = ?`,
      ),
      insertRelease: db.prepare(
        `INSERT INTO firmware_releases (class, product_hex, application, version, status, released_at, revoked_at, url, size, sha256, hosted, chip, project, signed_block, signed_key_digest)
         VALUES (@class, @product_hex, @application, @version, @status, @released_at, @revoked_at, @url, @size, @sha256, @hosted, @chip, @project, @signed_block, @signed_key_digest)
         ON CONFLICT DO NOTHING`,
      ),
      revokeRelease: db.prepare(
        `UPDATE firmware_releases SET status = 'REVOKED', revoked_at = COALESCE(revoked_at, ?)
         WHERE class = ? AND product_hex = ? AND application = ? AND version = ?`,
      ),
      getDevice: db.prepare<[string], DeviceRow>(
        `SELECT * FROM devices WHERE uuid = ?`,
      ),
      listDevices: db.prepare<[], DeviceRow>(
        `SELECT * FROM devices ORDER BY uuid`,
      ),
      insertDevice: db.prepare(
        `INSERT INTO devices (uuid, public_key_pem, enrolled_at, updated_at, label) VALUES (?, ?, ?, ?, ?)`,
      ),
      updateDevice: db.prepare(`UPDATE devices SET public_key_pem = ?, updated_at = ?, label = COALESCE(?, label) WHERE uuid = ?`),
      deleteDevice: db.prepare(`DELETE FROM devices WHERE uuid = ?`),
      deleteDeviceNonces: db.prepare(`DELETE FROM device_nonces WHERE uuid = ?`),
      recordNonce: db.prepare(RECORD_NONCE_SQL),
      purgeNonces: db.prepare(PURGE_NONCES_SQL),
      getBackupMeta: db.prepare<[string], { uuid: string; etag: string | null; size: number; last_backup_date: string }>(
        `SELECT uuid, etag, size, last_backup_date FROM backups WHERE uuid = ?`,
      ),
      getBackup: db.prepare<
        [string],
        { uuid: string; blob: Buffer; etag: string | null; size: number; last_backup_date: string }
      >(`SELECT * FROM backups WHERE uuid = ?`),
      putBackup: db.prepare(PUT_BACKUP_SQL),
      deleteBackup: db.prepare(`DELETE FROM backups WHERE uuid = ?`),
      latestVersion: db.prepare<[string], { version: number; configuration: string; created_at: string }>(
        `SELECT version, configuration, created_at FROM appconfig_versions WHERE function_name = ?
         ORDER BY version DESC LIMIT 1`,
      ),
      insertVersion: db.prepare(
        `INSERT INTO appconfig_versions (function_name, version, configuration, created_at) VALUES (?, ?, ?, ?)`,
      ),
      getDeployment: db.prepare<[string], DeploymentRow>(
        `SELECT * FROM appconfig_deployments WHERE function_name = ?`,
      ),
      listDeployments: db.prepare<[], DeploymentRow>(`SELECT * FROM appconfig_deployments`),
      upsertDeployment: db.prepare(
        `INSERT INTO appconfig_deployments (function_name, version, configuration, started_at_ms, ends_at_ms)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (function_name) DO UPDATE SET version = excluded.version, configuration = excluded.configuration,
           started_at_ms = excluded.started_at_ms, ends_at_ms = excluded.ends_at_ms`,
      ),
      deleteVersions: db.prepare(`DELETE FROM appconfig_versions WHERE function_name = ?`),
      deleteDeployment: db.prepare(`DELETE FROM appconfig_deployments WHERE function_name = ?`),
      ping: db.prepare(`SELECT 1`),
    };
    this.fleet = new SqliteFleetTables(db);
  }

  private startCheckpointer(path: string): void {
    try {
      const worker = new Worker(CHECKPOINTER, {
        eval: true,
        workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), path, everyMs: CHECKPOINT_EVERY_MS },
      });
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

  private startWriter(path: string): void {
    let worker: Worker;
    try {
      worker = new Worker(WRITER, {
        eval: true,
        workerData: {
          module: createRequire(import.meta.url).resolve('better-sqlite3'),
          path,
          autocheckpointPages: this.checkpointer ? CHECKPOINT_FALLBACK_PAGES : 1000,
          purgeEvery: NONCE_PURGE_EVERY,
          sql: { recordNonce: RECORD_NONCE_SQL, purgeNonces: PURGE_NONCES_SQL, putBackup: PUT_BACKUP_SQL },
        },
      });
    } catch {
      return; // no thread: the writes stay on this connection
    }
    // Held (ref) only while a write is pending: an idle writer does not keep the process up, a
    // pending one does (an awaited write must not be cut short by the process exiting).
    worker.unref();
    worker.on('message', (m: { id: number; value?: unknown; error?: { message: string; code?: string } }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (m.error) p.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
      else p.resolve(m.value);
    });
    // A writer that fails or exits: its pending writes are refused (their outcome is what SQLite
    // committed, if anything; a device retries with a fresh nonce) and later ones run inline.
    const gone = (why: string) => {
      if (this.writer !== worker) return;
      this.writer = undefined;
      const pending = [...this.pending.values()];
      this.pending.clear();
      for (const p of pending) p.reject(new Error(`the SQLite writer thread ${why}`));
    };
    worker.on('error', (err) => gone(`failed: ${err.message}`));
    worker.on('exit', (code) => gone(`exited (${code})`));
    this.writer = worker;
  }

  /** A write on the writer thread; resolves after its commit. */
  private write<T>(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<T> {
    const worker = this.writer!;
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...message, id }, transfer);
    });
  }

  /** Whether a writer thread does this store's upload writes (tests, the bench). */
  get writesOffThread(): boolean {
    return this.writer !== undefined;
  }

  private migrate(): void {
    const known = SQLITE_MIGRATIONS.length;
    const check = (v: number) => {
      if (v > known) throw new Error(`the database schema is version ${v}, newer than this program knows (${known})`);
    };
    check(this.db.pragma('user_version', { simple: true }) as number);
    // One IMMEDIATE transaction that reads the version again under the write lock: several processes
    // opening a new file at once (the workers of a serve) migrate it once.
    this.db.transaction(() => {
      const current = this.db.pragma('user_version', { simple: true }) as number;
      check(current);
      for (let v = current; v < known; v++) {
        this.db.exec(SQLITE_MIGRATIONS[v]!);
        this.db.pragma(`user_version = ${v + 1}`);
      }
    }).immediate();
  }

  /**
   * A read: when SQLite answers SQLITE_BUSY (rare in WAL mode: a WAL being recovered), runs it again
   * from a timer, up to busyWaitMs, then refuses it as 503 store_saturated.
   */
  private retrying<T>(op: () => T): T | Promise<T> {
    try {
      return op();
    } catch (err) {
      if (!isBusy(err)) throw err;
    }
    const counts = this.busyCounts;
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
  private writing<T>(op: () => T): T | Promise<T> {
    if (!this.writeLine) {
      try {
        return op();
      } catch (err) {
        if (!isBusy(err)) throw err;
      }
      this.busyCounts.busy++;
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
    this.busyCounts.calls++;
    return new Promise<T>((resolve, reject) => this.writeLine!.push({ op, since: performance.now(), resolve: resolve as (v: unknown) => void, reject }));
  }

  /** Tries the line's writes together until the lock is had (or the busy wait is over for the oldest). */
  private async drainLine(): Promise<void> {
    const counts = this.busyCounts;
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

  /** SQLITE_BUSY met and waited out since the store opened (docs/cloud-workers.md). */
  busyStats(): SqliteBusyStats {
    return { ...this.busyCounts };
  }

  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  async listReleases(track: ReleaseTrack): Promise<FirmwareRelease[]> {
    return this.retrying(() => this.stmts.listReleases.all(track.class, track.productHex, track.application).map(releaseFromRow));
  }

  async listTracks(): Promise<TrackSummary[]> {
    return this.retrying(() => this.fleet.listTracks());
  }

  async createRelease(r: FirmwareRelease, extras: { image?: Buffer; rollout?: Rollout } = {}): Promise<FirmwareRelease | null> {
    return this.writing(() =>
      this.db.transaction(() => {
        const info = this.stmts.insertRelease.run({
          class: r.class,
          product_hex: r.productHex,
          application: r.application,
          version: r.version,
          status: r.status,
          released_at: r.releasedAt,
          revoked_at: r.revokedAt ?? null,
          url: r.url ?? null,
          size: r.size ?? null,
          sha256: r.sha256 ?? null,
          hosted: extras.image ? 1 : 0,
          chip: r.chip ?? null,
          project: r.project ?? null,
          signed_block: r.signedBy?.block ?? null,
          signed_key_digest: r.signedBy?.keyDigest ?? null,
        });
        if (info.changes === 0) return null;
        if (extras.image) this.fleet.insertImage(r, r.version, extras.image, r.sha256!);
        if (extras.rollout) this.fleet.insertRollout(extras.rollout);
        const row = this.stmts.getRelease.get(r.class, r.productHex, r.application, r.version);
        return row ? releaseFromRow(row) : null;
      }).immediate(),
    );
  }

  async getImage(track: ReleaseTrack, version: string): Promise<HostedImage | null> {
    return this.retrying(() => this.fleet.getImage(track, version));
  }

  async getTrackSigning(track: ReleaseTrack): Promise<TrackSigning | null> {
    return this.retrying(() => this.fleet.getTrackSigning(track));
  }

  async putTrackSigning(track: ReleaseTrack, signing: TrackSigning): Promise<TrackSigning> {
    return this.writing(() => this.fleet.putTrackSigning(track, signing));
  }

  async listRollouts(track?: ReleaseTrack): Promise<Rollout[]> {
    return this.retrying(() => this.fleet.listRollouts(track));
  }

  async putRollout(rollout: Rollout): Promise<Rollout | null> {
    return this.writing(() => this.fleet.putRollout(rollout));
  }

  async updateRollout(track: ReleaseTrack, version: string, change: Parameters<CloudStore['updateRollout']>[2], from?: RolloutState): Promise<Rollout | null> {
    return this.writing(() => this.fleet.updateRollout(track, version, change, from));
  }

  async deleteRollout(track: ReleaseTrack, version: string): Promise<boolean> {
    return this.writing(() => this.fleet.deleteRollout(track, version));
  }

  async outcomeCounts(track: ReleaseTrack, version: string): Promise<OutcomeCounts> {
    return this.retrying(() => this.fleet.outcomeCounts(track, version));
  }

  async setDeviceGroups(uuid: string, groups: string[]): Promise<boolean> {
    return this.writing(() => this.fleet.setDeviceGroups(uuid, groups));
  }

  async devicesInGroups(groups: string[]): Promise<Set<string>> {
    return this.retrying(() => this.fleet.devicesInGroups(groups));
  }

  async getOtaCheckStates(uuids: string[]): Promise<Map<string, OtaCheckState>> {
    return this.retrying(() => this.fleet.getOtaCheckStates(uuids));
  }

  async recordOtaChecks(writes: OtaCheckWrite[]): Promise<void> {
    return this.writing(() => this.fleet.recordOtaChecks(writes));
  }

  async listInventory(filter: InventoryFilter): Promise<InventoryRecord[]> {
    return this.retrying(() => this.fleet.listInventory(filter));
  }

  async appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void> {
    return this.writing(() => this.fleet.appendAudit(entry));
  }

  async listAudit(o: { limit: number; beforeId?: number }): Promise<AuditEntry[]> {
    return this.retrying(() => this.fleet.listAudit(o));
  }

  async revokeRelease(track: ReleaseTrack, version: string, at: string): Promise<FirmwareRelease | null> {
    return this.writing(() =>
      this.db.transaction(() => {
        const info = this.stmts.revokeRelease.run(at, track.class, track.productHex, track.application, version);
        if (info.changes === 0) return null;
        const row = this.stmts.getRelease.get(track.class, track.productHex, track.application, version);
        return row ? releaseFromRow(row) : null;
      }).immediate(),
    );
  }

  async getDevice(uuid: string): Promise<DeviceRecord | null> {
    return this.retrying(() => {
      const r = this.stmts.getDevice.get(uuid);
      return r ? deviceFromRow(r) : null;
    });
  }

  async listDevices(): Promise<DeviceRecord[]> {
    return this.retrying(() => this.stmts.listDevices.all().map(deviceFromRow));
  }

  async putDevice(uuid: string, publicKeyPem: string, at: string, label?: string): Promise<{ device: DeviceRecord; created: boolean }> {
    return this.writing(() =>
      this.db.transaction(() => {
        let created = false;
        if (this.stmts.getDevice.get(uuid)) this.stmts.updateDevice.run(publicKeyPem, at, label ?? null, uuid);
        else {
          this.stmts.insertDevice.run(uuid, publicKeyPem, at, at, label ?? null);
          created = true;
        }
        return { device: deviceFromRow(this.stmts.getDevice.get(uuid)!), created };
      }).immediate(),
    );
  }

  async deleteDevice(uuid: string): Promise<boolean> {
    return this.writing(() =>
      this.db.transaction(() => {
        this.stmts.deleteDeviceNonces.run(uuid);
        return this.stmts.deleteDevice.run(uuid).changes > 0;
      }).immediate(),
    );
  }

  async recordNonce(uuid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<boolean> {
    if (this.writer) return this.write<boolean>({ op: 'nonce', uuid, nonce, expiresAtMs, nowMs });
    if (++this.noncesSincePurge >= NONCE_PURGE_EVERY) {
      this.noncesSincePurge = 0;
      // A purge refused as busy is left to the next one (it only removes expired rows).
      try {
        this.stmts.purgeNonces.run(nowMs);
      } catch (err) {
        if (!isBusy(err)) throw err;
        this.busyCounts.busy++;
      }
    }
    return this.writing(() => this.stmts.recordNonce.run(uuid, nonce, expiresAtMs, nowMs).changes > 0);
  }

  async getBackupMeta(uuid: string): Promise<BackupMeta | null> {
    return this.retrying(() => {
      const r = this.stmts.getBackupMeta.get(uuid);
      return r ? { uuid: r.uuid, etag: r.etag, size: r.size, lastBackupDate: r.last_backup_date } : null;
    });
  }

  async getBackup(uuid: string): Promise<StoredBackup | null> {
    return this.retrying(() => {
      const r = this.stmts.getBackup.get(uuid);
      return r ? { uuid: r.uuid, blob: r.blob, etag: r.etag, size: r.size, lastBackupDate: r.last_backup_date } : null;
    });
  }

  async putBackup(uuid: string, blob: Buffer, etag: string | null, at: string): Promise<BackupMeta> {
    const size = blob.length;
    if (this.writer) {
      // The caller gave the blob up (CloudStore.putBackup): a buffer that is all of its ArrayBuffer
      // is moved to the writer (it reads as empty here afterwards); a slice of a shared one is copied.
      // The writer thread waits for a busy lock itself (its busy_timeout): blocking it blocks no request.
      const whole = blob.byteOffset === 0 && blob.byteLength === blob.buffer.byteLength && size >= TRANSFER_MIN_BYTES;
      const bytes = whole ? new Uint8Array(blob.buffer) : Uint8Array.prototype.slice.call(blob);
      await this.write({ op: 'putBackup', uuid, blob: bytes, etag, at }, [bytes.buffer as ArrayBuffer]);
    } else {
      await this.writing(() => this.stmts.putBackup.run(uuid, blob, etag, size, at));
    }
    return { uuid, etag, size, lastBackupDate: at };
  }

  async deleteBackup(uuid: string): Promise<boolean> {
    return this.writing(() => this.stmts.deleteBackup.run(uuid).changes > 0);
  }

  private configState(functionName: string): FunctionConfigState {
    const latest = this.stmts.latestVersion.get(functionName);
    const dep = this.stmts.getDeployment.get(functionName);
    const latestVersion: ConfigVersion | null = latest
      ? {
          version: latest.version,
          configuration: JSON.parse(latest.configuration) as Record<string, unknown>,
          createdAt: latest.created_at,
        }
      : null;
    return { functionName, latest: latestVersion, deployment: dep ? deploymentFromRow(dep) : null };
  }

  async getFunctionConfig(functionName: string): Promise<FunctionConfigState> {
    return this.retrying(() => this.db.transaction(() => this.configState(functionName))());
  }

  async stageConfig(
    functionName: string,
    configuration: Record<string, unknown>,
    at: string,
  ): Promise<FunctionConfigState> {
    return this.writing(() =>
      this.db.transaction(() => {
        const latest = this.stmts.latestVersion.get(functionName);
        this.stmts.insertVersion.run(functionName, (latest?.version ?? 0) + 1, JSON.stringify(configuration), at);
        return this.configState(functionName);
      }).immediate(),
    );
  }

  async startDeployment(functionName: string, nowMs: number, durationMs: number): Promise<DeployResult> {
    return this.writing(() =>
      this.db.transaction((): DeployResult => {
        const dep = this.stmts.getDeployment.get(functionName);
        if (dep && Number(dep.ends_at_ms) > nowMs) return { ok: false, reason: 'in_progress', state: this.configState(functionName) };
        const latest = this.stmts.latestVersion.get(functionName);
        // Only a version newer than the deployed one is staged (spec 3.4: staged -> deployed).
        if (!latest || (dep && dep.version >= latest.version)) {
          return { ok: false, reason: 'nothing_staged', state: this.configState(functionName) };
        }
        this.stmts.upsertDeployment.run(functionName, latest.version, latest.configuration, nowMs, nowMs + durationMs);
        return { ok: true, state: this.configState(functionName) };
      }).immediate(),
    );
  }

  async deleteConfig(functionName: string, nowMs: number): Promise<DeleteConfigResult> {
    return this.writing(() =>
      this.db.transaction((): DeleteConfigResult => {
        const dep = this.stmts.getDeployment.get(functionName);
        if (dep && Number(dep.ends_at_ms) > nowMs) return { ok: false, reason: 'in_progress' };
        const removedVersions = this.stmts.deleteVersions.run(functionName).changes;
        const removedDeployment = this.stmts.deleteDeployment.run(functionName).changes;
        if (removedVersions + removedDeployment === 0) return { ok: false, reason: 'not_found' };
        return { ok: true };
      }).immediate(),
    );
  }

  async listDeployments(): Promise<Map<string, Deployment>> {
    return this.retrying(() => new Map(this.stmts.listDeployments.all().map((r) => [r.function_name, deploymentFromRow(r)])));
  }

  async ping(): Promise<void> {
    return this.retrying(() => {
      this.stmts.ping.get();
    });
  }

  async close(): Promise<void> {
    const writer = this.writer;
    if (writer) {
      // Messages are handled in order: the writes already sent commit before the writer closes.
      const exited = new Promise<void>((r) => writer.once('exit', () => r()));
      writer.ref();
      writer.postMessage({ op: 'close' });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, 5000)))]);
      clearTimeout(timer);
      this.writer = undefined;
      await writer.terminate();
    }
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
