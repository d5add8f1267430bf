// The embedded default store: SQLite through better-sqlite3, WAL journal, numbered schema migrations
// (schema.ts, applied by migrate.ts).
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Worker } from 'node:worker_threads';
import {
  CONSOLE_SESSION_COLUMNS,
  consoleSessionFromRow,
  consoleSessionValues,
  deploymentFromRow,
  deviceFromRow,
  releaseFromRow,
  type ConsoleSessionRow,
  type DeploymentRow,
  type DeviceRow,
  type ReleaseRow,
} from './rows.ts';
import { isBusy, SqliteBusyLine } from './sqlite-busy.ts';
import { SqliteFleetTables } from './sqlite-fleet.ts';
import { migrate, sqliteBook } from './migrate.ts';
import { SQLITE_MIGRATIONS } from './schema.ts';
import { startCheckpointerThread, startWriterThread, type WriterCall, type WriterReply } from './sqlite-threads.ts';
import type {
  AuditEntry,
  BackupMeta,
  CloudStore,
  ConfigVersion,
  ConsoleSessionRecord,
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
  StoreStats,
  TrackSigning,
  TrackSummary,
} from './types.ts';

/** How many nonce inserts between two purges of expired nonces. */
const NONCE_PURGE_EVERY = 256;

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
 * The writer thread (docs/fleet-scale.md; its program is sqlite-writer.js): a file database's nonce
 * inserts and backup writes (the store's work on every upload, ~300 µs of synchronous SQLite per
 * upload) run on a worker thread with its own connection instead of the event loop. One message per
 * call, answered after the commit, in order; the backup's bytes are moved (its ArrayBuffer
 * transferred), not copied. The writer is the only connection that writes these two tables during a
 * storm; SQLite's write lock serialises it with the main connection's rare writes (enrollment,
 * deletes), so a nonce stays admitted once.
 *
 * Below TRANSFER_MIN_BYTES a blob is copied to the writer thread, not transferred (it may be a slice
 * of node's shared pool).
 */
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
  /**
   * How long a store call waits for another process's write lock before it is refused (default
   * BUSY_WAIT_MS, sqlite-busy.ts).
   */
  busyWaitMs?: number;
}

interface PendingWrite {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
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
  /** SQLITE_BUSY waited out off the event loop (sqlite-busy.ts). */
  private readonly busy: SqliteBusyLine;

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
      insertSession: db.prepare(`INSERT INTO console_sessions (${CONSOLE_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`),
      pruneSessions: db.prepare(`DELETE FROM console_sessions WHERE expires_at_ms <= ?`),
      getSession: db.prepare<[string, number], ConsoleSessionRow>(`SELECT * FROM console_sessions WHERE id_hash = ? AND expires_at_ms > ?`),
      deleteSession: db.prepare(`DELETE FROM console_sessions WHERE id_hash = ?`),
      ping: db.prepare(`SELECT 1`),
    };
    this.fleet = new SqliteFleetTables(db);
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

  private startWriter(path: string): void {
    let worker: Worker;
    try {
      worker = startWriterThread({
        path,
        autocheckpointPages: this.checkpointer ? CHECKPOINT_FALLBACK_PAGES : 1000,
        purgeEvery: NONCE_PURGE_EVERY,
        sql: { recordNonce: RECORD_NONCE_SQL, purgeNonces: PURGE_NONCES_SQL, putBackup: PUT_BACKUP_SQL },
      });
    } catch {
      return; // no thread: the writes stay on this connection
    }
    // Held (ref) only while a write is pending: an idle writer does not keep the process up, a
    // pending one does (an awaited write must not be cut short by the process exiting).
    worker.unref();
    worker.on('message', (m: WriterReply) => {
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
  private write<T>(message: WriterCall, transfer: ArrayBuffer[] = []): Promise<T> {
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

  /** SQLITE_BUSY met and waited out since the store opened (docs/cloud-workers.md). */
  stats(): StoreStats {
    return this.busy.stats();
  }

  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  async listReleases(track: ReleaseTrack): Promise<FirmwareRelease[]> {
    return this.busy.retrying(() => this.stmts.listReleases.all(track.class, track.productHex, track.application).map(releaseFromRow));
  }

  async listTracks(): Promise<TrackSummary[]> {
    return this.busy.retrying(() => this.fleet.listTracks());
  }

  /** A write in one IMMEDIATE transaction, through the line that waits out SQLITE_BUSY (sqlite-busy.ts). */
  private writeTx<T>(fn: () => T): T | Promise<T> {
    return this.busy.writing(() => this.db.transaction(fn).immediate());
  }

  async createRelease(r: FirmwareRelease, extras: { image?: Buffer; rollout?: Rollout } = {}): Promise<FirmwareRelease | null> {
    return this.writeTx(() => {
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
    });
  }

  async getImage(track: ReleaseTrack, version: string): Promise<HostedImage | null> {
    return this.busy.retrying(() => this.fleet.getImage(track, version));
  }

  async getTrackSigning(track: ReleaseTrack): Promise<TrackSigning | null> {
    return this.busy.retrying(() => this.fleet.getTrackSigning(track));
  }

  async putTrackSigning(track: ReleaseTrack, signing: TrackSigning): Promise<TrackSigning> {
    return this.busy.writing(() => this.fleet.putTrackSigning(track, signing));
  }

  async listRollouts(track?: ReleaseTrack): Promise<Rollout[]> {
    return this.busy.retrying(() => this.fleet.listRollouts(track));
  }

  async putRollout(rollout: Rollout): Promise<Rollout | null> {
    return this.busy.writing(() => this.fleet.putRollout(rollout));
  }

  async updateRollout(track: ReleaseTrack, version: string, change: Parameters<CloudStore['updateRollout']>[2], from?: RolloutState): Promise<Rollout | null> {
    return this.busy.writing(() => this.fleet.updateRollout(track, version, change, from));
  }

  async deleteRollout(track: ReleaseTrack, version: string): Promise<boolean> {
    return this.busy.writing(() => this.fleet.deleteRollout(track, version));
  }

  async outcomeCounts(track: ReleaseTrack, version: string): Promise<OutcomeCounts> {
    return this.busy.retrying(() => this.fleet.outcomeCounts(track, version));
  }

  async setDeviceGroups(uuid: string, groups: string[]): Promise<boolean> {
    return this.busy.writing(() => this.fleet.setDeviceGroups(uuid, groups));
  }

  async devicesInGroups(groups: string[]): Promise<Set<string>> {
    return this.busy.retrying(() => this.fleet.devicesInGroups(groups));
  }

  async getOtaCheckStates(uuids: string[]): Promise<Map<string, OtaCheckState>> {
    return this.busy.retrying(() => this.fleet.getOtaCheckStates(uuids));
  }

  async recordOtaChecks(writes: OtaCheckWrite[]): Promise<void> {
    return this.busy.writing(() => this.fleet.recordOtaChecks(writes));
  }

  async listInventory(filter: InventoryFilter): Promise<InventoryRecord[]> {
    return this.busy.retrying(() => this.fleet.listInventory(filter));
  }

  async appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void> {
    return this.busy.writing(() => this.fleet.appendAudit(entry));
  }

  async listAudit(o: { limit: number; beforeId?: number }): Promise<AuditEntry[]> {
    return this.busy.retrying(() => this.fleet.listAudit(o));
  }

  async revokeRelease(track: ReleaseTrack, version: string, at: string): Promise<FirmwareRelease | null> {
    return this.writeTx(() => {
      const info = this.stmts.revokeRelease.run(at, track.class, track.productHex, track.application, version);
      if (info.changes === 0) return null;
      const row = this.stmts.getRelease.get(track.class, track.productHex, track.application, version);
      return row ? releaseFromRow(row) : null;
    });
  }

  async getDevice(uuid: string): Promise<DeviceRecord | null> {
    return this.busy.retrying(() => {
      const r = this.stmts.getDevice.get(uuid);
      return r ? deviceFromRow(r) : null;
    });
  }

  async listDevices(): Promise<DeviceRecord[]> {
    return this.busy.retrying(() => this.stmts.listDevices.all().map(deviceFromRow));
  }

  async putDevice(uuid: string, publicKeyPem: string, at: string, label?: string): Promise<{ device: DeviceRecord; created: boolean }> {
    return this.writeTx(() => {
      let created = false;
      if (this.stmts.getDevice.get(uuid)) this.stmts.updateDevice.run(publicKeyPem, at, label ?? null, uuid);
      else {
        this.stmts.insertDevice.run(uuid, publicKeyPem, at, at, label ?? null);
        created = true;
      }
      return { device: deviceFromRow(this.stmts.getDevice.get(uuid)!), created };
    });
  }

  async deleteDevice(uuid: string): Promise<boolean> {
    return this.writeTx(() => {
      this.stmts.deleteDeviceNonces.run(uuid);
      return this.stmts.deleteDevice.run(uuid).changes > 0;
    });
  }

  async createConsoleSession(session: ConsoleSessionRecord, nowMs: number): Promise<void> {
    return this.writeTx(() => {
      this.stmts.pruneSessions.run(nowMs);
      this.stmts.insertSession.run(...consoleSessionValues(session));
    });
  }

  async getConsoleSession(idHash: string, nowMs: number): Promise<ConsoleSessionRecord | null> {
    return this.busy.retrying(() => {
      const r = this.stmts.getSession.get(idHash, nowMs);
      return r ? consoleSessionFromRow(r) : null;
    });
  }

  async deleteConsoleSession(idHash: string): Promise<boolean> {
    return this.busy.writing(() => this.stmts.deleteSession.run(idHash).changes > 0);
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
        this.busy.countBusy();
      }
    }
    return this.busy.writing(() => this.stmts.recordNonce.run(uuid, nonce, expiresAtMs, nowMs).changes > 0);
  }

  async getBackupMeta(uuid: string): Promise<BackupMeta | null> {
    return this.busy.retrying(() => {
      const r = this.stmts.getBackupMeta.get(uuid);
      return r ? { uuid: r.uuid, etag: r.etag, size: r.size, lastBackupDate: r.last_backup_date } : null;
    });
  }

  async getBackup(uuid: string): Promise<StoredBackup | null> {
    return this.busy.retrying(() => {
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
      await this.busy.writing(() => this.stmts.putBackup.run(uuid, blob, etag, size, at));
    }
    return { uuid, etag, size, lastBackupDate: at };
  }

  async deleteBackup(uuid: string): Promise<boolean> {
    return this.busy.writing(() => this.stmts.deleteBackup.run(uuid).changes > 0);
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
    return this.busy.retrying(() => this.db.transaction(() => this.configState(functionName))());
  }

  async stageConfig(
    functionName: string,
    configuration: Record<string, unknown>,
    at: string,
  ): Promise<FunctionConfigState> {
    return this.writeTx(() => {
      const latest = this.stmts.latestVersion.get(functionName);
      this.stmts.insertVersion.run(functionName, (latest?.version ?? 0) + 1, JSON.stringify(configuration), at);
      return this.configState(functionName);
    });
  }

  async startDeployment(functionName: string, nowMs: number, durationMs: number): Promise<DeployResult> {
    return this.writeTx((): DeployResult => {
      const dep = this.stmts.getDeployment.get(functionName);
      if (dep && Number(dep.ends_at_ms) > nowMs) return { ok: false, reason: 'in_progress', state: this.configState(functionName) };
      const latest = this.stmts.latestVersion.get(functionName);
      // Only a version newer than the deployed one is staged (spec 3.4: staged -> deployed).
      if (!latest || (dep && dep.version >= latest.version)) {
        return { ok: false, reason: 'nothing_staged', state: this.configState(functionName) };
      }
      this.stmts.upsertDeployment.run(functionName, latest.version, latest.configuration, nowMs, nowMs + durationMs);
      return { ok: true, state: this.configState(functionName) };
    });
  }

  async deleteConfig(functionName: string, nowMs: number): Promise<DeleteConfigResult> {
    return this.writeTx((): DeleteConfigResult => {
      const dep = this.stmts.getDeployment.get(functionName);
      if (dep && Number(dep.ends_at_ms) > nowMs) return { ok: false, reason: 'in_progress' };
      const removedVersions = this.stmts.deleteVersions.run(functionName).changes;
      const removedDeployment = this.stmts.deleteDeployment.run(functionName).changes;
      if (removedVersions + removedDeployment === 0) return { ok: false, reason: 'not_found' };
      return { ok: true };
    });
  }

  async listDeployments(): Promise<Map<string, Deployment>> {
    return this.busy.retrying(() => new Map(this.stmts.listDeployments.all().map((r) => [r.function_name, deploymentFromRow(r)])));
  }

  async ping(): Promise<void> {
    return this.busy.retrying(() => {
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
