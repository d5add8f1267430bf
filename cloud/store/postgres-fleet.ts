// The fleet-operations part of the PostgreSQL store (hosted images, rollouts and outcomes, the device
// inventory and groups, the audit log), as sqlite-fleet.ts is for SQLite: PostgresStore delegates these
// methods here. Every multi-row write is one transaction.
import type pg from 'pg';
import {
  auditFromRow,
  groupsByDevice,
  inventoryFromRow,
  inventoryQuery,
  otaStateFromRow,
  outcomeCountsFromRows,
  ROLLOUT_CHANGES,
  ROLLOUT_COLUMNS,
  rolloutFromRow,
  rolloutValues,
  signingFromRow,
  signingKeysJson,
  trackFromRow,
  type AuditRow,
  type InventoryRow,
  type RolloutRow,
  type TrackRow,
  type TrackSigningRow,
} from './fleet-rows.ts';
import type {
  AuditEntry,
  HostedImage,
  InventoryFilter,
  InventoryRecord,
  OtaCheckState,
  OtaCheckWrite,
  OutcomeCounts,
  ReleaseTrack,
  Rollout,
  RolloutState,
  TrackSigning,
  TrackSummary,
} from './types.ts';

const TRACK = 'class = $1 AND product_hex = $2 AND application = $3';
const trackArgs = (t: ReleaseTrack) => [t.class, t.productHex, t.application];
const UPSERT_ROLLOUT = `INSERT INTO rollouts (${ROLLOUT_COLUMNS.join(', ')}) VALUES (${ROLLOUT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})
  ON CONFLICT (class, product_hex, application, version) DO UPDATE SET
  ${ROLLOUT_COLUMNS.filter((c) => !['class', 'product_hex', 'application', 'version', 'created_at'].includes(c))
    .map((c) => `${c} = EXCLUDED.${c}`)
    .join(', ')}`;

export type Transaction = <T>(fn: (c: pg.PoolClient) => Promise<T>) => Promise<T>;

export class PostgresFleetTables {
  constructor(
    private readonly pool: pg.Pool,
    private readonly tx: Transaction,
  ) {}

  async listTracks(): Promise<TrackSummary[]> {
    const { rows } = await this.pool.query<TrackRow>(
      `SELECT class, product_hex, application,
         count(*) FILTER (WHERE status = 'RELEASED') AS released, count(*) FILTER (WHERE status = 'REVOKED') AS revoked,
         max(version COLLATE "C") FILTER (WHERE status = 'RELEASED') AS latest
       FROM firmware_releases GROUP BY class, product_hex, application
       ORDER BY class COLLATE "C", product_hex COLLATE "C", application COLLATE "C"`,
    );
    return rows.map(trackFromRow);
  }

  /** Inside createRelease's transaction. */
  async insertImage(c: pg.ClientBase, t: ReleaseTrack, version: string, bytes: Buffer, sha256: string): Promise<void> {
    await c.query(`INSERT INTO firmware_images (class, product_hex, application, version, sha256, size, bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
      ...trackArgs(t),
      version,
      sha256,
      bytes.length,
      bytes,
    ]);
  }

  /** Inside createRelease's transaction. */
  async insertRollout(c: pg.ClientBase, r: Rollout): Promise<void> {
    await c.query(UPSERT_ROLLOUT, rolloutValues(r));
  }

  async getTrackSigning(t: ReleaseTrack): Promise<TrackSigning | null> {
    const { rows } = await this.pool.query<TrackSigningRow>(`SELECT required, keys, updated_at FROM track_signing WHERE ${TRACK}`, trackArgs(t));
    return rows[0] ? signingFromRow(rows[0]) : null;
  }

  async putTrackSigning(t: ReleaseTrack, s: TrackSigning): Promise<TrackSigning> {
    const { rows } = await this.pool.query<TrackSigningRow>(
      `INSERT INTO track_signing (class, product_hex, application, required, keys, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (class, product_hex, application) DO UPDATE SET required = EXCLUDED.required, keys = EXCLUDED.keys, updated_at = EXCLUDED.updated_at
       RETURNING required, keys, updated_at`,
      [...trackArgs(t), s.required, signingKeysJson(s), s.updatedAt],
    );
    return signingFromRow(rows[0]!);
  }

  async getImage(t: ReleaseTrack, version: string): Promise<HostedImage | null> {
    const { rows } = await this.pool.query<{ sha256: string; size: number; bytes: Buffer; status: 'RELEASED' | 'REVOKED'; released_at: string }>(
      `SELECT i.sha256, i.size, i.bytes, r.status, r.released_at FROM firmware_images i
       JOIN firmware_releases r USING (class, product_hex, application, version)
       WHERE i.class = $1 AND i.product_hex = $2 AND i.application = $3 AND i.version = $4`,
      [...trackArgs(t), version],
    );
    const r = rows[0];
    return r ? { bytes: r.bytes, sha256: r.sha256, size: r.size, status: r.status, releasedAt: r.released_at } : null;
  }

  async listRollouts(t?: ReleaseTrack): Promise<Rollout[]> {
    const { rows } = t
      ? await this.pool.query<RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} ORDER BY version COLLATE "C"`, trackArgs(t))
      : await this.pool.query<RolloutRow>(`SELECT * FROM rollouts ORDER BY class COLLATE "C", product_hex COLLATE "C", application COLLATE "C", version COLLATE "C"`);
    return rows.map(rolloutFromRow);
  }

  async putRollout(r: Rollout): Promise<Rollout | null> {
    return this.tx(async (c) => {
      // The release row is locked: a rollout never outlives a release deleted meanwhile.
      const exists = await c.query(`SELECT 1 FROM firmware_releases WHERE ${TRACK} AND version = $4 FOR SHARE`, [...trackArgs(r), r.version]);
      if (exists.rowCount === 0) return null;
      await c.query(UPSERT_ROLLOUT, rolloutValues(r));
      const { rows } = await c.query<RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} AND version = $4`, [...trackArgs(r), r.version]);
      return rolloutFromRow(rows[0]!);
    });
  }

  async updateRollout(t: ReleaseTrack, version: string, change: Record<string, unknown>, from?: RolloutState): Promise<Rollout | null> {
    return this.tx(async (c) => {
      const { rows } = await c.query<RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} AND version = $4 FOR UPDATE`, [...trackArgs(t), version]);
      const row = rows[0];
      if (!row || (from !== undefined && row.state !== from)) return null;
      const sets: string[] = [];
      const values: unknown[] = [...trackArgs(t), version];
      for (const [key, value] of Object.entries(change)) {
        const col = ROLLOUT_CHANGES[key];
        if (!col || value === undefined) continue;
        values.push(col.value(value));
        sets.push(`${col.column} = $${values.length}`);
      }
      if (sets.length === 0) return rolloutFromRow(row);
      const updated = await c.query<RolloutRow>(`UPDATE rollouts SET ${sets.join(', ')} WHERE ${TRACK} AND version = $4 RETURNING *`, values);
      return rolloutFromRow(updated.rows[0]!);
    });
  }

  async deleteRollout(t: ReleaseTrack, version: string): Promise<boolean> {
    return ((await this.pool.query(`DELETE FROM rollouts WHERE ${TRACK} AND version = $4`, [...trackArgs(t), version])).rowCount ?? 0) > 0;
  }

  async outcomeCounts(t: ReleaseTrack, version: string): Promise<OutcomeCounts> {
    const { rows } = await this.pool.query<{ outcome: string; n: string }>(
      `SELECT outcome, count(*) AS n FROM rollout_outcomes WHERE ${TRACK} AND version = $4 GROUP BY outcome`,
      [...trackArgs(t), version],
    );
    return outcomeCountsFromRows(rows);
  }

  async setDeviceGroups(uuid: string, groups: string[]): Promise<boolean> {
    return this.tx(async (c) => {
      const exists = await c.query('SELECT 1 FROM devices WHERE uuid = $1 FOR UPDATE', [uuid]);
      if (exists.rowCount === 0) return false;
      await c.query('DELETE FROM device_groups WHERE uuid = $1', [uuid]);
      if (groups.length > 0) await c.query('INSERT INTO device_groups (uuid, group_name) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING', [uuid, groups]);
      return true;
    });
  }

  async devicesInGroups(groups: string[]): Promise<Set<string>> {
    if (groups.length === 0) return new Set();
    const { rows } = await this.pool.query<{ uuid: string }>('SELECT DISTINCT uuid FROM device_groups WHERE group_name = ANY($1::text[])', [groups]);
    return new Set(rows.map((r) => r.uuid));
  }

  async getOtaCheckStates(uuids: string[]): Promise<Map<string, OtaCheckState>> {
    if (uuids.length === 0) return new Map();
    const { rows } = await this.pool.query<InventoryRow>(
      `SELECT d.uuid, i.last_check_at, i.last_check_class, i.last_check_product_hex, i.last_check_application,
         i.offered_version, i.offered_from, i.offered_at
       FROM devices d LEFT JOIN device_inventory i ON i.uuid = d.uuid WHERE d.uuid = ANY($1::text[])`,
      [uuids],
    );
    return new Map(rows.map((r) => [r.uuid, otaStateFromRow(r)]));
  }

  async recordOtaChecks(writes: OtaCheckWrite[]): Promise<void> {
    if (writes.length === 0) return;
    await this.tx(async (c) => {
      for (const w of writes) {
        if (w.outcome) {
          await c.query(
            `UPDATE rollout_outcomes SET outcome = $6, settled_at = $7 WHERE ${TRACK} AND version = $4 AND uuid = $5`,
            [...trackArgs(w.outcome.track), w.outcome.version, w.uuid, w.outcome.result, w.at],
          );
        }
        // An older check flushed after a newer one (by another worker) never replaces it.
        await c.query(
          `INSERT INTO device_inventory (uuid, last_check_at, last_check_version, last_check_class, last_check_product_hex,
             last_check_application, offered_version, offered_from, offered_at)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 WHERE EXISTS (SELECT 1 FROM devices WHERE uuid = $1)
           ON CONFLICT (uuid) DO UPDATE SET last_check_at = EXCLUDED.last_check_at, last_check_version = EXCLUDED.last_check_version,
             last_check_class = EXCLUDED.last_check_class, last_check_product_hex = EXCLUDED.last_check_product_hex,
             last_check_application = EXCLUDED.last_check_application, offered_version = EXCLUDED.offered_version,
             offered_from = EXCLUDED.offered_from, offered_at = EXCLUDED.offered_at
           WHERE EXCLUDED.last_check_at >= device_inventory.last_check_at`,
          [w.uuid, w.at, w.version, ...trackArgs(w.track), w.offer?.version ?? null, w.offer?.fromVersion ?? null, w.offer ? w.at : null],
        );
        if (w.offer) {
          await c.query(
            `INSERT INTO rollout_outcomes (class, product_hex, application, version, uuid, outcome, from_version, offered_at, attempts)
             SELECT $1, $2, $3, $4, $5, 'pending', $6, $7, 1 WHERE EXISTS (SELECT 1 FROM devices WHERE uuid = $5)
             ON CONFLICT (class, product_hex, application, version, uuid) DO UPDATE SET
               outcome = CASE WHEN rollout_outcomes.outcome = 'succeeded' THEN 'pending' ELSE rollout_outcomes.outcome END,
               from_version = EXCLUDED.from_version, offered_at = EXCLUDED.offered_at, attempts = rollout_outcomes.attempts + 1`,
            [...trackArgs(w.track), w.offer.version, w.uuid, w.offer.fromVersion, w.at],
          );
        }
      }
    });
  }

  async listInventory(f: InventoryFilter): Promise<InventoryRecord[]> {
    const { sql, params } = inventoryQuery(f, (n) => `$${n}`, ' COLLATE "C"');
    const { rows } = await this.pool.query<InventoryRow>(sql, params);
    if (rows.length === 0) return [];
    const groups = await this.pool.query<{ uuid: string; group_name: string }>('SELECT uuid, group_name FROM device_groups WHERE uuid = ANY($1::text[])', [
      rows.map((r) => r.uuid),
    ]);
    const byDevice = groupsByDevice(groups.rows);
    return rows.map((r) => inventoryFromRow(r, byDevice.get(r.uuid) ?? []));
  }

  async appendAudit(e: Omit<AuditEntry, 'id'>): Promise<void> {
    await this.pool.query(`INSERT INTO audit_log (at, actor, via, action, method, path, status, details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      e.at,
      e.actor,
      e.via,
      e.action,
      e.method,
      e.path,
      e.status,
      e.details === null ? null : JSON.stringify(e.details),
    ]);
  }

  async listAudit(o: { limit: number; beforeId?: number }): Promise<AuditEntry[]> {
    const { rows } = await this.pool.query<AuditRow>('SELECT * FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2', [o.beforeId ?? Number.MAX_SAFE_INTEGER, o.limit]);
    return rows.map(auditFromRow);
  }
}
