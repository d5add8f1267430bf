// The devices domain on PostgreSQL (types.ts has the contract, rows.ts the rows both halves share):
// lists of UUIDs as one array parameter; a write that reads first locks the device row.
import { changed, type PostgresConnection } from '../postgres-pool.ts';
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

const TRACK = 'class = $1 AND product_hex = $2 AND application = $3';

export function postgresDevices({ pool, tx }: PostgresConnection): DeviceStore {
  return {
    async getDevice(uuid) {
      // A device's signed requests read it (twice a device in a boot storm): a named statement is
      // parsed and planned once per connection (docs/fleet-scale.md); its columns named, so that a
      // later migration adding one does not change a prepared statement's result.
      const { rows } = await pool.query<DeviceRow>({ name: 'devices.get', text: 'SELECT uuid, public_key_pem, enrolled_at, updated_at, label FROM devices WHERE uuid = $1', values: [uuid] });
      return rows[0] ? deviceFromRow(rows[0]) : null;
    },

    async listDevices() {
      const { rows } = await pool.query<DeviceRow>('SELECT * FROM devices ORDER BY uuid COLLATE "C"');
      return rows.map(deviceFromRow);
    },

    async putDevice(uuid, publicKeyPem, at, label) {
      const { rows } = await pool.query<DeviceRow & { created: boolean }>(
        `INSERT INTO devices (uuid, public_key_pem, enrolled_at, updated_at, label) VALUES ($1, $2, $3, $3, $4)
         ON CONFLICT (uuid) DO UPDATE SET public_key_pem = EXCLUDED.public_key_pem, updated_at = EXCLUDED.updated_at,
           label = COALESCE(EXCLUDED.label, devices.label)
         RETURNING *, (xmax = 0) AS created`,
        [uuid, publicKeyPem, at, label ?? null],
      );
      return { device: deviceFromRow(rows[0]!), created: rows[0]!.created };
    },

    // The device's nonces go with it (backups domain; its backup stays). Its inventory and groups go by
    // their foreign keys.
    deleteDevice: (uuid) =>
      tx(async (c) => {
        await c.query('DELETE FROM device_nonces WHERE uuid = $1', [uuid]);
        return changed(await c.query('DELETE FROM devices WHERE uuid = $1', [uuid]));
      }),

    async setDeviceLabel(uuid, label, at) {
      return changed(await pool.query('UPDATE devices SET label = $1, updated_at = $2 WHERE uuid = $3', [label, at, uuid]));
    },

    setDeviceGroups: (uuid, groups) =>
      tx(async (c) => {
        const exists = await c.query('SELECT 1 FROM devices WHERE uuid = $1 FOR UPDATE', [uuid]);
        if (exists.rowCount === 0) return false;
        await c.query('DELETE FROM device_groups WHERE uuid = $1', [uuid]);
        if (groups.length > 0) await c.query('INSERT INTO device_groups (uuid, group_name) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING', [uuid, groups]);
        return true;
      }),

    async devicesInGroups(groups) {
      if (groups.length === 0) return new Set();
      const { rows } = await pool.query<{ uuid: string }>('SELECT DISTINCT uuid FROM device_groups WHERE group_name = ANY($1::text[])', [groups]);
      return new Set(rows.map((r) => r.uuid));
    },

    async getOtaCheckStates(uuids) {
      if (uuids.length === 0) return new Map();
      const { rows } = await pool.query<OtaStateRow>(`${OTA_STATES_OF} = ANY($1::text[])`, [uuids]);
      return new Map(rows.map((r) => [r.uuid, otaStateFromRow(r)]));
    },

    async recordOtaChecks(writes) {
      if (writes.length === 0) return;
      await tx(async (c) => {
        for (const w of writes) {
          if (w.outcome) {
            await c.query(`UPDATE rollout_outcomes SET outcome = $6, settled_at = $7 WHERE ${TRACK} AND version = $4 AND uuid = $5`, [
              ...trackArgs(w.outcome.track),
              w.outcome.version,
              w.uuid,
              w.outcome.result,
              w.at,
            ]);
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
    },

    async listInventory(f) {
      const { sql, params } = inventoryQuery(f, (n) => `$${n}`, ' COLLATE "C"');
      const { rows } = await pool.query<InventoryRow>(sql, params);
      if (rows.length === 0) return [];
      const groups = await pool.query<{ uuid: string; group_name: string }>('SELECT uuid, group_name FROM device_groups WHERE uuid = ANY($1::text[])', [rows.map((r) => r.uuid)]);
      const byDevice = groupsByDevice(groups.rows);
      return rows.map((r) => inventoryFromRow(r, byDevice.get(r.uuid) ?? []));
    },

    async countDeviceVersions(f) {
      const { sql, params } = versionCountQuery(f, (n) => `$${n}`, ' COLLATE "C"');
      const { rows } = await pool.query<VersionCountRow>(sql, params);
      return rows.map(versionCountFromRow);
    },
  };
}
