// The PostgreSQL store: the same CloudStore as SQLite, for a cloud that outgrows one machine (several
// instances share it). Atomic transitions are one transaction each, serialized per function with an
// advisory lock; the nonce replay cache is one upsert.
import pg from 'pg';
import {
  CONSOLE_SESSION_COLUMNS,
  consoleSessionFromRow,
  consoleSessionValues,
  deploymentFromRow as deployment,
  deviceFromRow as device,
  releaseFromRow as release,
  type ConsoleSessionRow,
  type DeploymentRow,
  type ReleaseRow,
} from './rows.ts';
import { PostgresFleetTables } from './postgres-fleet.ts';
import { migrate, postgresBook } from './migrate.ts';
import { inTransaction, POOL_SIZE } from './postgres-pool.ts';
import { POSTGRES_MIGRATIONS } from './schema.ts';
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

const NONCE_PURGE_EVERY = 256;
export { POOL_SIZE };

export class PostgresStore implements CloudStore {
  readonly kind = 'postgres' as const;
  private noncesSincePurge = 0;
  private readonly fleet: PostgresFleetTables;

  private constructor(private readonly pool: pg.Pool) {
    this.fleet = new PostgresFleetTables(pool, (fn) => this.tx(fn));
  }

  /**
   * Connects, and migrates the schema (one instance at a time, under an advisory lock). `poolSize`:
   * connections of this process (POOL_SIZE; a worker of a serve takes its share, docs/cloud-workers.md).
   */
  static async connect(url: string, opts: { poolSize?: number } = {}): Promise<PostgresStore> {
    const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? POOL_SIZE });
    const store = new PostgresStore(pool);
    try {
      await migrate(postgresBook(pool), POSTGRES_MIGRATIONS);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return store;
  }

  private tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, fn);
  }

  schemaVersion(): Promise<number> {
    return postgresBook(this.pool).read();
  }

  async listReleases(t: ReleaseTrack): Promise<FirmwareRelease[]> {
    const { rows } = await this.pool.query<ReleaseRow>(
      'SELECT * FROM firmware_releases WHERE class = $1 AND product_hex = $2 AND application = $3 ORDER BY version COLLATE "C"',
      [t.class, t.productHex, t.application],
    );
    return rows.map(release);
  }

  async listTracks(): Promise<TrackSummary[]> {
    return this.fleet.listTracks();
  }

  async createRelease(r: FirmwareRelease, extras: { image?: Buffer; rollout?: Rollout } = {}): Promise<FirmwareRelease | null> {
    return this.tx(async (c) => {
      const { rows } = await c.query<ReleaseRow>(
        `INSERT INTO firmware_releases (class, product_hex, application, version, status, released_at, revoked_at, url, size, sha256, hosted, chip, project, signed_block, signed_key_digest)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT DO NOTHING RETURNING *`,
        [r.class, r.productHex, r.application, r.version, r.status, r.releasedAt, r.revokedAt ?? null, r.url ?? null, r.size ?? null, r.sha256 ?? null, extras.image !== undefined, r.chip ?? null, r.project ?? null, r.signedBy?.block ?? null, r.signedBy?.keyDigest ?? null],
      );
      if (!rows[0]) return null;
      if (extras.image) await this.fleet.insertImage(c, r, r.version, extras.image, r.sha256!);
      if (extras.rollout) await this.fleet.insertRollout(c, extras.rollout);
      return release(rows[0]);
    });
  }

  getImage(track: ReleaseTrack, version: string): Promise<HostedImage | null> {
    return this.fleet.getImage(track, version);
  }

  getTrackSigning(track: ReleaseTrack): Promise<TrackSigning | null> {
    return this.fleet.getTrackSigning(track);
  }

  putTrackSigning(track: ReleaseTrack, signing: TrackSigning): Promise<TrackSigning> {
    return this.fleet.putTrackSigning(track, signing);
  }

  listRollouts(track?: ReleaseTrack): Promise<Rollout[]> {
    return this.fleet.listRollouts(track);
  }

  putRollout(rollout: Rollout): Promise<Rollout | null> {
    return this.fleet.putRollout(rollout);
  }

  updateRollout(track: ReleaseTrack, version: string, change: Parameters<CloudStore['updateRollout']>[2], from?: RolloutState): Promise<Rollout | null> {
    return this.fleet.updateRollout(track, version, change, from);
  }

  deleteRollout(track: ReleaseTrack, version: string): Promise<boolean> {
    return this.fleet.deleteRollout(track, version);
  }

  outcomeCounts(track: ReleaseTrack, version: string): Promise<OutcomeCounts> {
    return this.fleet.outcomeCounts(track, version);
  }

  setDeviceGroups(uuid: string, groups: string[]): Promise<boolean> {
    return this.fleet.setDeviceGroups(uuid, groups);
  }

  devicesInGroups(groups: string[]): Promise<Set<string>> {
    return this.fleet.devicesInGroups(groups);
  }

  getOtaCheckStates(uuids: string[]): Promise<Map<string, OtaCheckState>> {
    return this.fleet.getOtaCheckStates(uuids);
  }

  recordOtaChecks(writes: OtaCheckWrite[]): Promise<void> {
    return this.fleet.recordOtaChecks(writes);
  }

  listInventory(filter: InventoryFilter): Promise<InventoryRecord[]> {
    return this.fleet.listInventory(filter);
  }

  appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void> {
    return this.fleet.appendAudit(entry);
  }

  listAudit(o: { limit: number; beforeId?: number }): Promise<AuditEntry[]> {
    return this.fleet.listAudit(o);
  }

  async revokeRelease(t: ReleaseTrack, version: string, at: string): Promise<FirmwareRelease | null> {
    const { rows } = await this.pool.query<ReleaseRow>(
      `UPDATE firmware_releases SET status = 'REVOKED', revoked_at = COALESCE(revoked_at, $1)
       WHERE class = $2 AND product_hex = $3 AND application = $4 AND version = $5 RETURNING *`,
      [at, t.class, t.productHex, t.application, version],
    );
    return rows[0] ? release(rows[0]) : null;
  }

  async getDevice(uuid: string): Promise<DeviceRecord | null> {
    const { rows } = await this.pool.query('SELECT * FROM devices WHERE uuid = $1', [uuid]);
    return rows[0] ? device(rows[0]) : null;
  }

  async listDevices(): Promise<DeviceRecord[]> {
    const { rows } = await this.pool.query('SELECT * FROM devices ORDER BY uuid COLLATE "C"');
    return rows.map(device);
  }

  async putDevice(uuid: string, publicKeyPem: string, at: string, label?: string): Promise<{ device: DeviceRecord; created: boolean }> {
    const { rows } = await this.pool.query(
      `INSERT INTO devices (uuid, public_key_pem, enrolled_at, updated_at, label) VALUES ($1, $2, $3, $3, $4)
       ON CONFLICT (uuid) DO UPDATE SET public_key_pem = EXCLUDED.public_key_pem, updated_at = EXCLUDED.updated_at,
         label = COALESCE(EXCLUDED.label, devices.label)
       RETURNING *, (xmax = 0) AS created`,
      [uuid, publicKeyPem, at, label ?? null],
    );
    return { device: device(rows[0]), created: rows[0].created as boolean };
  }

  async deleteDevice(uuid: string): Promise<boolean> {
    return this.tx(async (c) => {
      await c.query('DELETE FROM device_nonces WHERE uuid = $1', [uuid]);
      return ((await c.query('DELETE FROM devices WHERE uuid = $1', [uuid])).rowCount ?? 0) > 0;
    });
  }

  async createConsoleSession(session: ConsoleSessionRecord, nowMs: number): Promise<void> {
    await this.tx(async (c) => {
      await c.query('DELETE FROM console_sessions WHERE expires_at_ms <= $1', [nowMs]);
      await c.query(`INSERT INTO console_sessions (${CONSOLE_SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`, consoleSessionValues(session));
    });
  }

  async getConsoleSession(idHash: string, nowMs: number): Promise<ConsoleSessionRecord | null> {
    const { rows } = await this.pool.query<ConsoleSessionRow>('SELECT * FROM console_sessions WHERE id_hash = $1 AND expires_at_ms > $2', [idHash, nowMs]);
    return rows[0] ? consoleSessionFromRow(rows[0]) : null;
  }

  async deleteConsoleSession(idHash: string): Promise<boolean> {
    return ((await this.pool.query('DELETE FROM console_sessions WHERE id_hash = $1', [idHash])).rowCount ?? 0) > 0;
  }

  async recordNonce(uuid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<boolean> {
    if (++this.noncesSincePurge >= NONCE_PURGE_EVERY) {
      this.noncesSincePurge = 0;
      await this.pool.query('DELETE FROM device_nonces WHERE expires_at_ms <= $1', [nowMs]);
    }
    // A new nonce is inserted; an expired one not purged yet is revived; a live one is a replay.
    const { rowCount } = await this.pool.query(
      `INSERT INTO device_nonces (uuid, nonce, expires_at_ms) VALUES ($1, $2, $3)
       ON CONFLICT (uuid, nonce) DO UPDATE SET expires_at_ms = EXCLUDED.expires_at_ms WHERE device_nonces.expires_at_ms <= $4`,
      [uuid, nonce, expiresAtMs, nowMs],
    );
    return (rowCount ?? 0) > 0;
  }

  async getBackupMeta(uuid: string): Promise<BackupMeta | null> {
    const { rows } = await this.pool.query('SELECT uuid, etag, size, last_backup_date FROM backups WHERE uuid = $1', [uuid]);
    const r = rows[0];
    return r ? { uuid: r.uuid, etag: r.etag, size: r.size, lastBackupDate: r.last_backup_date } : null;
  }

  async getBackup(uuid: string): Promise<StoredBackup | null> {
    const { rows } = await this.pool.query('SELECT * FROM backups WHERE uuid = $1', [uuid]);
    const r = rows[0];
    return r ? { uuid: r.uuid, blob: r.blob as Buffer, etag: r.etag, size: r.size, lastBackupDate: r.last_backup_date } : null;
  }

  async putBackup(uuid: string, blob: Buffer, etag: string | null, at: string): Promise<BackupMeta> {
    await this.pool.query(
      `INSERT INTO backups (uuid, blob, etag, size, last_backup_date) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (uuid) DO UPDATE SET blob = EXCLUDED.blob, etag = EXCLUDED.etag, size = EXCLUDED.size, last_backup_date = EXCLUDED.last_backup_date`,
      [uuid, blob, etag, blob.length, at],
    );
    return { uuid, etag, size: blob.length, lastBackupDate: at };
  }

  async deleteBackup(uuid: string): Promise<boolean> {
    return ((await this.pool.query('DELETE FROM backups WHERE uuid = $1', [uuid])).rowCount ?? 0) > 0;
  }

  private async configState(c: pg.ClientBase, functionName: string): Promise<FunctionConfigState> {
    const latest = (
      await c.query<{ version: number; configuration: string; created_at: string }>(
        'SELECT version, configuration, created_at FROM appconfig_versions WHERE function_name = $1 ORDER BY version DESC LIMIT 1',
        [functionName],
      )
    ).rows[0];
    const dep = (await c.query<DeploymentRow>('SELECT * FROM appconfig_deployments WHERE function_name = $1', [functionName])).rows[0];
    const latestVersion: ConfigVersion | null = latest
      ? { version: latest.version, configuration: JSON.parse(latest.configuration) as Record<string, unknown>, createdAt: latest.created_at }
      : null;
    return { functionName, latest: latestVersion, deployment: dep ? deployment(dep) : null };
  }

  /** A transaction holding the function's advisory lock: its transitions never interleave. */
  private locked<T>(functionName: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.tx(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`appconfig:${functionName}`]);
      return fn(c);
    });
  }

  async getFunctionConfig(functionName: string): Promise<FunctionConfigState> {
    const client = await this.pool.connect();
    try {
      return await this.configState(client, functionName);
    } finally {
      client.release();
    }
  }

  async stageConfig(functionName: string, configuration: Record<string, unknown>, at: string): Promise<FunctionConfigState> {
    return this.locked(functionName, async (c) => {
      await c.query(
        `INSERT INTO appconfig_versions (function_name, version, configuration, created_at)
         SELECT $1, COALESCE(max(version), 0) + 1, $2, $3 FROM appconfig_versions WHERE function_name = $1`,
        [functionName, JSON.stringify(configuration), at],
      );
      return this.configState(c, functionName);
    });
  }

  async startDeployment(functionName: string, nowMs: number, durationMs: number): Promise<DeployResult> {
    return this.locked(functionName, async (c): Promise<DeployResult> => {
      const state = await this.configState(c, functionName);
      const dep = state.deployment;
      if (dep && Date.parse(dep.endsAt) > nowMs) return { ok: false, reason: 'in_progress', state };
      if (!state.latest || (dep && dep.version >= state.latest.version)) return { ok: false, reason: 'nothing_staged', state };
      await c.query(
        `INSERT INTO appconfig_deployments (function_name, version, configuration, started_at_ms, ends_at_ms) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (function_name) DO UPDATE SET version = EXCLUDED.version, configuration = EXCLUDED.configuration,
           started_at_ms = EXCLUDED.started_at_ms, ends_at_ms = EXCLUDED.ends_at_ms`,
        [functionName, state.latest.version, JSON.stringify(state.latest.configuration), nowMs, nowMs + durationMs],
      );
      return { ok: true, state: await this.configState(c, functionName) };
    });
  }

  async deleteConfig(functionName: string, nowMs: number): Promise<DeleteConfigResult> {
    return this.locked(functionName, async (c): Promise<DeleteConfigResult> => {
      const dep = (await c.query<DeploymentRow>('SELECT * FROM appconfig_deployments WHERE function_name = $1', [functionName])).rows[0];
      if (dep && Number(dep.ends_at_ms) > nowMs) return { ok: false, reason: 'in_progress' };
      const versions = (await c.query('DELETE FROM appconfig_versions WHERE function_name = $1', [functionName])).rowCount ?? 0;
      const deployments = (await c.query('DELETE FROM appconfig_deployments WHERE function_name = $1', [functionName])).rowCount ?? 0;
      return versions + deployments === 0 ? { ok: false, reason: 'not_found' } : { ok: true };
    });
  }

  async listDeployments(): Promise<Map<string, Deployment>> {
    const { rows } = await this.pool.query<DeploymentRow>('SELECT * FROM appconfig_deployments');
    return new Map(rows.map((r) => [r.function_name, deployment(r)]));
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** No lock waits of its own to count: the server makes a statement wait for a lock (StoreStats). */
  stats(): StoreStats {
    return { busy: 0, calls: 0, maxWaitMs: 0, batches: 0, gaveUp: 0 };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
