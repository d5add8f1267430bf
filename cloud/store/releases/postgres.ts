// The releases domain on PostgreSQL (types.ts has the contract, rows.ts the rows both halves share).
// Versions and tracks are ordered with COLLATE "C" (byte order, as SQLite); a write that reads first
// locks what it read (FOR SHARE, FOR UPDATE) in its transaction.
import { changed, numbered, type PostgresConnection } from '../postgres-pool.ts';
import { imageFromRow, outcomeCountsFromRows, outcomeDeviceFromRow, outcomeDevicesSql, outcomeDevicesValues, releaseFromRow, rolloutFromRow, signingFromRow, trackFromRow, type OutcomeDeviceRow } from './rows.ts';
import { RELEASE_COLUMNS, releaseValues, ROLLOUT_CHANGES, rolloutValues, signingKeysJson, trackArgs, upsertRolloutSql } from './rows.ts';
import type { ImageRow, ReleaseRow, RolloutRow, TrackRow, TrackSigningRow } from './rows.ts';
import type { ReleaseStore } from './types.ts';

const TRACK = 'class = $1 AND product_hex = $2 AND application = $3';
const UPSERT_ROLLOUT = upsertRolloutSql((n) => `$${n}`);

export function postgresReleases({ pool, tx }: PostgresConnection): ReleaseStore {
  return {
    async listReleases(t) {
      const { rows } = await pool.query<ReleaseRow>(`SELECT * FROM firmware_releases WHERE ${TRACK} ORDER BY version COLLATE "C"`, trackArgs(t));
      return rows.map(releaseFromRow);
    },

    async listTracks() {
      const { rows } = await pool.query<TrackRow>(
        `SELECT class, product_hex, application,
           count(*) FILTER (WHERE status = 'RELEASED') AS released, count(*) FILTER (WHERE status = 'REVOKED') AS revoked,
           max(version COLLATE "C") FILTER (WHERE status = 'RELEASED') AS latest
         FROM firmware_releases GROUP BY class, product_hex, application
         ORDER BY class COLLATE "C", product_hex COLLATE "C", application COLLATE "C"`,
      );
      return rows.map(trackFromRow);
    },

    createRelease: (r, extras = {}) =>
      tx(async (c) => {
        const { rows } = await c.query<ReleaseRow>(
          `INSERT INTO firmware_releases (${RELEASE_COLUMNS.join(', ')}) VALUES (${numbered(RELEASE_COLUMNS.length)}) ON CONFLICT DO NOTHING RETURNING *`,
          releaseValues(r, extras.image !== undefined),
        );
        if (!rows[0]) return null;
        if (extras.image) {
          await c.query(`INSERT INTO firmware_images (class, product_hex, application, version, sha256, size, bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
            ...trackArgs(r),
            r.version,
            r.sha256!,
            extras.image.length,
            extras.image,
          ]);
        }
        if (extras.rollout) await c.query(UPSERT_ROLLOUT, rolloutValues(extras.rollout));
        return releaseFromRow(rows[0]);
      }),

    async revokeRelease(t, version, at) {
      const { rows } = await pool.query<ReleaseRow>(
        `UPDATE firmware_releases SET status = 'REVOKED', revoked_at = COALESCE(revoked_at, $4) WHERE ${TRACK} AND version = $5 RETURNING *`,
        [...trackArgs(t), at, version],
      );
      return rows[0] ? releaseFromRow(rows[0]) : null;
    },

    async getImage(t, version) {
      const { rows } = await pool.query<ImageRow>(
        `SELECT i.sha256, i.size, i.bytes, r.status, r.released_at FROM firmware_images i
         JOIN firmware_releases r USING (class, product_hex, application, version)
         WHERE i.class = $1 AND i.product_hex = $2 AND i.application = $3 AND i.version = $4`,
        [...trackArgs(t), version],
      );
      return rows[0] ? imageFromRow(rows[0]) : null;
    },

    async getTrackSigning(t) {
      const { rows } = await pool.query<TrackSigningRow>(`SELECT required, keys, updated_at FROM track_signing WHERE ${TRACK}`, trackArgs(t));
      return rows[0] ? signingFromRow(rows[0]) : null;
    },

    async putTrackSigning(t, s) {
      const { rows } = await pool.query<TrackSigningRow>(
        `INSERT INTO track_signing (class, product_hex, application, required, keys, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (class, product_hex, application) DO UPDATE SET required = EXCLUDED.required, keys = EXCLUDED.keys, updated_at = EXCLUDED.updated_at
         RETURNING required, keys, updated_at`,
        [...trackArgs(t), s.required, signingKeysJson(s), s.updatedAt],
      );
      return signingFromRow(rows[0]!);
    },

    async listRollouts(t) {
      const { rows } = t
        ? await pool.query<RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} ORDER BY version COLLATE "C"`, trackArgs(t))
        : await pool.query<RolloutRow>(`SELECT * FROM rollouts ORDER BY class COLLATE "C", product_hex COLLATE "C", application COLLATE "C", version COLLATE "C"`);
      return rows.map(rolloutFromRow);
    },

    putRollout: (r) =>
      tx(async (c) => {
        // The release row is locked: a rollout never outlives a release deleted meanwhile.
        const exists = await c.query(`SELECT 1 FROM firmware_releases WHERE ${TRACK} AND version = $4 FOR SHARE`, [...trackArgs(r), r.version]);
        if (exists.rowCount === 0) return null;
        await c.query(UPSERT_ROLLOUT, rolloutValues(r));
        const { rows } = await c.query<RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} AND version = $4`, [...trackArgs(r), r.version]);
        return rolloutFromRow(rows[0]!);
      }),

    updateRollout: (t, version, change, from) =>
      tx(async (c) => {
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
      }),

    deleteRollout: async (t, version) => changed(await pool.query(`DELETE FROM rollouts WHERE ${TRACK} AND version = $4`, [...trackArgs(t), version])),

    async outcomeCounts(t, version) {
      const { rows } = await pool.query<{ outcome: string; n: string }>(
        `SELECT outcome, count(*) AS n FROM rollout_outcomes WHERE ${TRACK} AND version = $4 GROUP BY outcome`,
        [...trackArgs(t), version],
      );
      return outcomeCountsFromRows(rows);
    },

    async outcomeDevices(t, version, o) {
      const { rows } = await pool.query<OutcomeDeviceRow>(outcomeDevicesSql(TRACK, (n) => `$${n}`), outcomeDevicesValues(t, version, o));
      return rows.map(outcomeDeviceFromRow);
    },
  };
}
