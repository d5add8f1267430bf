// The fleet-operations part of the SQLite store (hosted images, rollouts and outcomes, the device
// inventory and groups, the audit log): SqliteStore delegates these methods here. Synchronous
// better-sqlite3 calls; every multi-row write is one transaction.
import type Database from 'better-sqlite3';
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

const TRACK = 'class = ? AND product_hex = ? AND application = ?';
const trackArgs = (t: ReleaseTrack) => [t.class, t.productHex, t.application];
/** SQLite's default bound on host parameters is 32766; batches of UUIDs stay well below. */
const IN_BATCH = 500;

export class SqliteFleetTables {
  private readonly stmts;

  constructor(private readonly db: Database.Database) {
    this.stmts = {
      listTracks: db.prepare<[], TrackRow>(
        `SELECT class, product_hex, application,
           sum(status = 'RELEASED') AS released, sum(status = 'REVOKED') AS revoked,
           max(CASE WHEN status = 'RELEASED' THEN version END) AS latest
         FROM firmware_releases GROUP BY class, product_hex, application ORDER BY class, product_hex, application`,
      ),
      insertImage: db.prepare(`INSERT INTO firmware_images (class, product_hex, application, version, sha256, size, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      getImage: db.prepare<unknown[], { sha256: string; size: number; bytes: Buffer; status: 'RELEASED' | 'REVOKED'; released_at: string }>(
        `SELECT i.sha256, i.size, i.bytes, r.status, r.released_at FROM firmware_images i
         JOIN firmware_releases r USING (class, product_hex, application, version)
         WHERE i.class = ? AND i.product_hex = ? AND i.application = ? AND i.version = ?`,
      ),
      releaseExists: db.prepare<unknown[], { one: number }>(`SELECT 1 AS one FROM firmware_releases WHERE ${TRACK} AND version = ?`),
      listRollouts: db.prepare<unknown[], RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} ORDER BY version`),
      listAllRollouts: db.prepare<[], RolloutRow>(`SELECT * FROM rollouts ORDER BY class, product_hex, application, version`),
      getRollout: db.prepare<unknown[], RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} AND version = ?`),
      upsertRollout: db.prepare(
        `INSERT INTO rollouts (${ROLLOUT_COLUMNS.join(', ')}) VALUES (${ROLLOUT_COLUMNS.map(() => '?').join(', ')})
         ON CONFLICT (class, product_hex, application, version) DO UPDATE SET
         ${ROLLOUT_COLUMNS.filter((c) => !['class', 'product_hex', 'application', 'version', 'created_at'].includes(c))
           .map((c) => `${c} = excluded.${c}`)
           .join(', ')}`,
      ),
      deleteRollout: db.prepare(`DELETE FROM rollouts WHERE ${TRACK} AND version = ?`),
      outcomeCounts: db.prepare<unknown[], { outcome: string; n: number }>(
        `SELECT outcome, count(*) AS n FROM rollout_outcomes WHERE ${TRACK} AND version = ? GROUP BY outcome`,
      ),
      deviceExists: db.prepare<[string], { one: number }>(`SELECT 1 AS one FROM devices WHERE uuid = ?`),
      deleteGroups: db.prepare(`DELETE FROM device_groups WHERE uuid = ?`),
      insertGroup: db.prepare(`INSERT OR IGNORE INTO device_groups (uuid, group_name) VALUES (?, ?)`),
      // A device's checks may be flushed by several workers (docs/cloud-workers.md): an older check
      // flushed after a newer one never replaces it.
      upsertInventory: db.prepare(
        `INSERT INTO device_inventory (uuid, last_check_at, last_check_version, last_check_class, last_check_product_hex,
           last_check_application, offered_version, offered_from, offered_at)
         SELECT @uuid, @at, @version, @class, @product_hex, @application, @offered_version, @offered_from, @offered_at
         WHERE EXISTS (SELECT 1 FROM devices WHERE uuid = @uuid)
         ON CONFLICT (uuid) DO UPDATE SET last_check_at = excluded.last_check_at, last_check_version = excluded.last_check_version,
           last_check_class = excluded.last_check_class, last_check_product_hex = excluded.last_check_product_hex,
           last_check_application = excluded.last_check_application, offered_version = excluded.offered_version,
           offered_from = excluded.offered_from, offered_at = excluded.offered_at
         WHERE excluded.last_check_at >= device_inventory.last_check_at`,
      ),
      settleOutcome: db.prepare(
        `UPDATE rollout_outcomes SET outcome = ?, settled_at = ?
         WHERE class = ? AND product_hex = ? AND application = ? AND version = ? AND uuid = ?`,
      ),
      offerOutcome: db.prepare(
        `INSERT INTO rollout_outcomes (class, product_hex, application, version, uuid, outcome, from_version, offered_at, attempts)
         SELECT @class, @product_hex, @application, @version, @uuid, 'pending', @from_version, @at, 1
         WHERE EXISTS (SELECT 1 FROM devices WHERE uuid = @uuid)
         ON CONFLICT (class, product_hex, application, version, uuid) DO UPDATE SET
           outcome = CASE WHEN outcome = 'succeeded' THEN 'pending' ELSE outcome END,
           from_version = excluded.from_version, offered_at = excluded.offered_at, attempts = attempts + 1`,
      ),
      getSigning: db.prepare<unknown[], TrackSigningRow>(`SELECT required, keys, updated_at FROM track_signing WHERE ${TRACK}`),
      putSigning: db.prepare<unknown[], TrackSigningRow>(
        `INSERT INTO track_signing (class, product_hex, application, required, keys, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (class, product_hex, application) DO UPDATE SET required = excluded.required, keys = excluded.keys, updated_at = excluded.updated_at
         RETURNING required, keys, updated_at`,
      ),
      appendAudit: db.prepare(`INSERT INTO audit_log (at, actor, via, action, method, path, status, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
      listAudit: db.prepare<[number, number], AuditRow>(`SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?`),
    };
  }

  listTracks(): TrackSummary[] {
    return this.stmts.listTracks.all().map(trackFromRow);
  }

  /** Inside createRelease's transaction. */
  insertImage(t: ReleaseTrack, version: string, bytes: Buffer, sha256: string): void {
    this.stmts.insertImage.run(...trackArgs(t), version, sha256, bytes.length, bytes);
  }

  /** Inside createRelease's transaction. */
  insertRollout(r: Rollout): void {
    this.stmts.upsertRollout.run(...rolloutValues(r));
  }

  getImage(t: ReleaseTrack, version: string): HostedImage | null {
    const r = this.stmts.getImage.get(...trackArgs(t), version);
    return r ? { bytes: r.bytes, sha256: r.sha256, size: r.size, status: r.status, releasedAt: r.released_at } : null;
  }

  getTrackSigning(t: ReleaseTrack): TrackSigning | null {
    const r = this.stmts.getSigning.get(...trackArgs(t));
    return r ? signingFromRow(r) : null;
  }

  putTrackSigning(t: ReleaseTrack, s: TrackSigning): TrackSigning {
    // One statement: what it wrote, not a later read another process could have changed.
    return signingFromRow(this.stmts.putSigning.get(...trackArgs(t), s.required ? 1 : 0, signingKeysJson(s), s.updatedAt)!);
  }

  listRollouts(t?: ReleaseTrack): Rollout[] {
    return (t ? this.stmts.listRollouts.all(...trackArgs(t)) : this.stmts.listAllRollouts.all()).map(rolloutFromRow);
  }

  putRollout(r: Rollout): Rollout | null {
    return this.db.transaction(() => {
      if (!this.stmts.releaseExists.get(...trackArgs(r), r.version)) return null;
      this.stmts.upsertRollout.run(...rolloutValues(r));
      return rolloutFromRow(this.stmts.getRollout.get(...trackArgs(r), r.version)!);
    }).immediate();
  }

  updateRollout(t: ReleaseTrack, version: string, change: Record<string, unknown>, from?: RolloutState): Rollout | null {
    return this.db.transaction(() => {
      const row = this.stmts.getRollout.get(...trackArgs(t), version);
      if (!row || (from !== undefined && row.state !== from)) return null;
      const sets: string[] = [];
      const values: unknown[] = [];
      for (const [key, value] of Object.entries(change)) {
        const c = ROLLOUT_CHANGES[key];
        if (!c || value === undefined) continue;
        sets.push(`${c.column} = ?`);
        values.push(c.value(value));
      }
      if (sets.length > 0) this.db.prepare(`UPDATE rollouts SET ${sets.join(', ')} WHERE ${TRACK} AND version = ?`).run(...values, ...trackArgs(t), version);
      return rolloutFromRow(this.stmts.getRollout.get(...trackArgs(t), version)!);
    }).immediate();
  }

  deleteRollout(t: ReleaseTrack, version: string): boolean {
    return this.stmts.deleteRollout.run(...trackArgs(t), version).changes > 0;
  }

  outcomeCounts(t: ReleaseTrack, version: string): OutcomeCounts {
    return outcomeCountsFromRows(this.stmts.outcomeCounts.all(...trackArgs(t), version));
  }

  setDeviceGroups(uuid: string, groups: string[]): boolean {
    return this.db.transaction(() => {
      if (!this.stmts.deviceExists.get(uuid)) return false;
      this.stmts.deleteGroups.run(uuid);
      for (const g of groups) this.stmts.insertGroup.run(uuid, g);
      return true;
    }).immediate();
  }

  devicesInGroups(groups: string[]): Set<string> {
    if (groups.length === 0) return new Set();
    const rows = this.db
      .prepare<unknown[], { uuid: string }>(`SELECT DISTINCT uuid FROM device_groups WHERE group_name IN (${groups.map(() => '?').join(', ')})`)
      .all(...groups);
    return new Set(rows.map((r) => r.uuid));
  }

  getOtaCheckStates(uuids: string[]): Map<string, OtaCheckState> {
    const out = new Map<string, OtaCheckState>();
    for (let at = 0; at < uuids.length; at += IN_BATCH) {
      const batch = uuids.slice(at, at + IN_BATCH);
      const rows = this.db
        .prepare<unknown[], InventoryRow>(
          `SELECT d.uuid, i.last_check_at, i.last_check_class, i.last_check_product_hex, i.last_check_application,
             i.offered_version, i.offered_from, i.offered_at
           FROM devices d LEFT JOIN device_inventory i ON i.uuid = d.uuid WHERE d.uuid IN (${batch.map(() => '?').join(', ')})`,
        )
        .all(...batch);
      for (const r of rows) out.set(r.uuid, otaStateFromRow(r));
    }
    return out;
  }

  recordOtaChecks(writes: OtaCheckWrite[]): void {
    this.db.transaction(() => {
      for (const w of writes) {
        if (w.outcome) this.stmts.settleOutcome.run(w.outcome.result, w.at, ...trackArgs(w.outcome.track), w.outcome.version, w.uuid);
        const t = { class: w.track.class, product_hex: w.track.productHex, application: w.track.application };
        this.stmts.upsertInventory.run({
          uuid: w.uuid,
          at: w.at,
          version: w.version,
          ...t,
          offered_version: w.offer?.version ?? null,
          offered_from: w.offer?.fromVersion ?? null,
          offered_at: w.offer ? w.at : null,
        });
        if (w.offer) this.stmts.offerOutcome.run({ ...t, version: w.offer.version, uuid: w.uuid, from_version: w.offer.fromVersion, at: w.at });
      }
    }).immediate();
  }

  listInventory(f: InventoryFilter): InventoryRecord[] {
    const { sql, params } = inventoryQuery(f, () => '?');
    const rows = this.db.prepare<unknown[], InventoryRow>(sql).all(...params);
    const groups = this.groupsOf(rows.map((r) => r.uuid));
    return rows.map((r) => inventoryFromRow(r, groups.get(r.uuid) ?? []));
  }

  private groupsOf(uuids: string[]): Map<string, string[]> {
    const rows: { uuid: string; group_name: string }[] = [];
    for (let at = 0; at < uuids.length; at += IN_BATCH) {
      const batch = uuids.slice(at, at + IN_BATCH);
      rows.push(
        ...this.db
          .prepare<unknown[], { uuid: string; group_name: string }>(`SELECT uuid, group_name FROM device_groups WHERE uuid IN (${batch.map(() => '?').join(', ')})`)
          .all(...batch),
      );
    }
    return groupsByDevice(rows);
  }

  appendAudit(e: Omit<AuditEntry, 'id'>): void {
    this.stmts.appendAudit.run(e.at, e.actor, e.via, e.action, e.method, e.path, e.status, e.details === null ? null : JSON.stringify(e.details));
  }

  listAudit(o: { limit: number; beforeId?: number }): AuditEntry[] {
    return this.stmts.listAudit.all(o.beforeId ?? Number.MAX_SAFE_INTEGER, o.limit).map(auditFromRow);
  }
}
