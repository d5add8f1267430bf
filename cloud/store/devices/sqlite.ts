// The devices domain on SQLite (types.ts has the contract, rows.ts the rows both halves share):
// statements prepared once; a write that reads first, or writes several rows, is one IMMEDIATE
// transaction. Lists of UUIDs go in batches (IN_BATCH) below SQLite's bound on parameters.
import { placeholders, type SqliteConnection } from '../sqlite-connection.ts';
import { trackArgs } from '../releases/rows.ts';
import {
  deviceFromRow,
  groupsByDevice,
  inventoryFromRow,
  inventoryQuery,
  OTA_STATES_OF,
  otaStateFromRow,
  versionCountFromRow,
  versionCountQuery,
  type DeviceRow,
  type InventoryRow,
  type OtaStateRow,
  type VersionCountRow,
} from './rows.ts';
import type { DeviceStore } from './types.ts';

export function sqliteDevices(c: SqliteConnection): DeviceStore {
  const { db } = c;
  const stmts = {
    getDevice: db.prepare<[string], DeviceRow>(`SELECT * FROM devices WHERE uuid = ?`),
    listDevices: db.prepare<[], DeviceRow>(`SELECT * FROM devices ORDER BY uuid`),
    insertDevice: db.prepare(`INSERT INTO devices (uuid, public_key_pem, enrolled_at, updated_at, label) VALUES (?, ?, ?, ?, ?)`),
    updateDevice: db.prepare(`UPDATE devices SET public_key_pem = ?, updated_at = ?, label = COALESCE(?, label) WHERE uuid = ?`),
    deleteDevice: db.prepare(`DELETE FROM devices WHERE uuid = ?`),
    // The device's nonces go with it (backups domain; its backup stays). Its inventory and groups
    // go by their foreign keys.
    deleteDeviceNonces: db.prepare(`DELETE FROM device_nonces WHERE uuid = ?`),
    setLabel: db.prepare(`UPDATE devices SET label = ?, updated_at = ? WHERE uuid = ?`),
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
  };
  const groupsOf = (uuids: string[]) =>
    groupsByDevice(
      c.inBatches(uuids, (batch) =>
        db.prepare<unknown[], { uuid: string; group_name: string }>(`SELECT uuid, group_name FROM device_groups WHERE uuid IN (${placeholders(batch.length)})`).all(...batch),
      ),
    );

  return {
    getDevice: (uuid) =>
      c.read(() => {
        const r = stmts.getDevice.get(uuid);
        return r ? deviceFromRow(r) : null;
      }),

    listDevices: () => c.read(() => stmts.listDevices.all().map(deviceFromRow)),

    putDevice: (uuid, publicKeyPem, at, label) =>
      c.transaction(() => {
        let created = false;
        if (stmts.getDevice.get(uuid)) stmts.updateDevice.run(publicKeyPem, at, label ?? null, uuid);
        else {
          stmts.insertDevice.run(uuid, publicKeyPem, at, at, label ?? null);
          created = true;
        }
        return { device: deviceFromRow(stmts.getDevice.get(uuid)!), created };
      }),

    deleteDevice: (uuid) =>
      c.transaction(() => {
        stmts.deleteDeviceNonces.run(uuid);
        return stmts.deleteDevice.run(uuid).changes > 0;
      }),

    setDeviceLabel: (uuid, label, at) => c.transaction(() => stmts.setLabel.run(label, at, uuid).changes > 0),

    setDeviceGroups: (uuid, groups) =>
      c.transaction(() => {
        if (!stmts.deviceExists.get(uuid)) return false;
        stmts.deleteGroups.run(uuid);
        for (const g of groups) stmts.insertGroup.run(uuid, g);
        return true;
      }),

    devicesInGroups: (groups) =>
      c.read(() => {
        if (groups.length === 0) return new Set<string>();
        const rows = db.prepare<unknown[], { uuid: string }>(`SELECT DISTINCT uuid FROM device_groups WHERE group_name IN (${placeholders(groups.length)})`).all(...groups);
        return new Set(rows.map((r) => r.uuid));
      }),

    getOtaCheckStates: (uuids) =>
      c.read(() => {
        const rows = c.inBatches(uuids, (batch) => db.prepare<unknown[], OtaStateRow>(`${OTA_STATES_OF} IN (${placeholders(batch.length)})`).all(...batch));
        return new Map(rows.map((r) => [r.uuid, otaStateFromRow(r)]));
      }),

    recordOtaChecks: (writes) =>
      c.transaction(() => {
        for (const w of writes) {
          if (w.outcome) stmts.settleOutcome.run(w.outcome.result, w.at, ...trackArgs(w.outcome.track), w.outcome.version, w.uuid);
          const t = { class: w.track.class, product_hex: w.track.productHex, application: w.track.application };
          stmts.upsertInventory.run({
            uuid: w.uuid,
            at: w.at,
            version: w.version,
            ...t,
            offered_version: w.offer?.version ?? null,
            offered_from: w.offer?.fromVersion ?? null,
            offered_at: w.offer ? w.at : null,
          });
          if (w.offer) stmts.offerOutcome.run({ ...t, version: w.offer.version, uuid: w.uuid, from_version: w.offer.fromVersion, at: w.at });
        }
      }),

    listInventory: (f) =>
      c.read(() => {
        const { sql, params } = inventoryQuery(f, () => '?');
        const rows = db.prepare<unknown[], InventoryRow>(sql).all(...params);
        const groups = groupsOf(rows.map((r) => r.uuid));
        return rows.map((r) => inventoryFromRow(r, groups.get(r.uuid) ?? []));
      }),

    countDeviceVersions: (f) =>
      c.read(() => {
        const { sql, params } = versionCountQuery(f, () => '?');
        return db.prepare<unknown[], VersionCountRow>(sql).all(...params).map(versionCountFromRow);
      }),
  };
}
