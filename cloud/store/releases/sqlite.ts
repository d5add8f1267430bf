// The releases domain on SQLite (types.ts has the contract, rows.ts the rows both halves share):
// statements prepared once; a write that reads first is one IMMEDIATE transaction.
import { placeholders, type SqliteConnection } from '../sqlite-connection.ts';
import { imageFromRow, outcomeCountsFromRows, releaseFromRow, rolloutFromRow, signingFromRow, trackFromRow } from './rows.ts';
import { outcomeDeviceFromRow, outcomeDevicesSql, outcomeDevicesValues, RELEASE_COLUMNS, releaseValues, ROLLOUT_CHANGES, rolloutValues, signingKeysJson, trackArgs, upsertRolloutSql, type OutcomeDeviceRow } from './rows.ts';
import type { ImageRow, ReleaseRow, RolloutRow, TrackRow, TrackSigningRow } from './rows.ts';
import type { ReleaseStore, ReleaseTrack } from './types.ts';

const TRACK = 'class = ? AND product_hex = ? AND application = ?';

export function sqliteReleases(c: SqliteConnection): ReleaseStore {
  const { db } = c;
  const stmts = {
    listReleases: db.prepare<unknown[], ReleaseRow>(`SELECT * FROM firmware_releases WHERE ${TRACK} ORDER BY version`),
    getRelease: db.prepare<unknown[], ReleaseRow>(`SELECT * FROM firmware_releases WHERE ${TRACK} AND version = ?`),
    insertRelease: db.prepare(`INSERT INTO firmware_releases (${RELEASE_COLUMNS.join(', ')}) VALUES (${placeholders(RELEASE_COLUMNS.length)}) ON CONFLICT DO NOTHING`),
    revokeRelease: db.prepare(`UPDATE firmware_releases SET status = 'REVOKED', revoked_at = COALESCE(revoked_at, ?) WHERE ${TRACK} AND version = ?`),
    listTracks: db.prepare<[], TrackRow>(
      `SELECT class, product_hex, application,
         sum(status = 'RELEASED') AS released, sum(status = 'REVOKED') AS revoked,
         max(CASE WHEN status = 'RELEASED' THEN version END) AS latest
       FROM firmware_releases GROUP BY class, product_hex, application ORDER BY class, product_hex, application`,
    ),
    insertImage: db.prepare(`INSERT INTO firmware_images (class, product_hex, application, version, sha256, size, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    getImage: db.prepare<unknown[], ImageRow>(
      `SELECT i.sha256, i.size, i.bytes, r.status, r.released_at FROM firmware_images i
       JOIN firmware_releases r USING (class, product_hex, application, version)
       WHERE i.class = ? AND i.product_hex = ? AND i.application = ? AND i.version = ?`,
    ),
    releaseExists: db.prepare<unknown[], { one: number }>(`SELECT 1 AS one FROM firmware_releases WHERE ${TRACK} AND version = ?`),
    listRollouts: db.prepare<unknown[], RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} ORDER BY version`),
    listAllRollouts: db.prepare<[], RolloutRow>(`SELECT * FROM rollouts ORDER BY class, product_hex, application, version`),
    getRollout: db.prepare<unknown[], RolloutRow>(`SELECT * FROM rollouts WHERE ${TRACK} AND version = ?`),
    upsertRollout: db.prepare(upsertRolloutSql(() => '?')),
    deleteRollout: db.prepare(`DELETE FROM rollouts WHERE ${TRACK} AND version = ?`),
    outcomeCounts: db.prepare<unknown[], { outcome: string; n: number }>(
      `SELECT outcome, count(*) AS n FROM rollout_outcomes WHERE ${TRACK} AND version = ? GROUP BY outcome`,
    ),
    outcomeDevices: db.prepare<unknown[], OutcomeDeviceRow>(outcomeDevicesSql(TRACK, () => '?')),
    getSigning: db.prepare<unknown[], TrackSigningRow>(`SELECT required, keys, updated_at FROM track_signing WHERE ${TRACK}`),
    putSigning: db.prepare<unknown[], TrackSigningRow>(
      `INSERT INTO track_signing (class, product_hex, application, required, keys, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (class, product_hex, application) DO UPDATE SET required = excluded.required, keys = excluded.keys, updated_at = excluded.updated_at
       RETURNING required, keys, updated_at`,
    ),
  };
  const release = (t: ReleaseTrack, version: string) => {
    const row = stmts.getRelease.get(...trackArgs(t), version);
    return row ? releaseFromRow(row) : null;
  };

  return {
    listReleases: (t) => c.read(() => stmts.listReleases.all(...trackArgs(t)).map(releaseFromRow)),
    listTracks: () => c.read(() => stmts.listTracks.all().map(trackFromRow)),

    createRelease: (r, extras = {}) =>
      c.transaction(() => {
        if (stmts.insertRelease.run(...releaseValues(r, extras.image ? 1 : 0)).changes === 0) return null;
        if (extras.image) stmts.insertImage.run(...trackArgs(r), r.version, r.sha256!, extras.image.length, extras.image);
        if (extras.rollout) stmts.upsertRollout.run(...rolloutValues(extras.rollout));
        return release(r, r.version);
      }),

    revokeRelease: (t, version, at) =>
      c.transaction(() => (stmts.revokeRelease.run(at, ...trackArgs(t), version).changes === 0 ? null : release(t, version))),

    getImage: (t, version) =>
      c.read(() => {
        const r = stmts.getImage.get(...trackArgs(t), version);
        return r ? imageFromRow(r) : null;
      }),

    getTrackSigning: (t) =>
      c.read(() => {
        const r = stmts.getSigning.get(...trackArgs(t));
        return r ? signingFromRow(r) : null;
      }),

    // One statement: what it wrote, not a later read another process could have changed.
    putTrackSigning: (t, s) => c.write(() => signingFromRow(stmts.putSigning.get(...trackArgs(t), s.required ? 1 : 0, signingKeysJson(s), s.updatedAt)!)),

    listRollouts: (t) => c.read(() => (t ? stmts.listRollouts.all(...trackArgs(t)) : stmts.listAllRollouts.all()).map(rolloutFromRow)),

    putRollout: (r) =>
      c.transaction(() => {
        if (!stmts.releaseExists.get(...trackArgs(r), r.version)) return null;
        stmts.upsertRollout.run(...rolloutValues(r));
        return rolloutFromRow(stmts.getRollout.get(...trackArgs(r), r.version)!);
      }),

    updateRollout: (t, version, change, from) =>
      c.transaction(() => {
        const row = stmts.getRollout.get(...trackArgs(t), version);
        if (!row || (from !== undefined && row.state !== from)) return null;
        const sets: string[] = [];
        const values: unknown[] = [];
        for (const [key, value] of Object.entries(change)) {
          const col = ROLLOUT_CHANGES[key];
          if (!col || value === undefined) continue;
          sets.push(`${col.column} = ?`);
          values.push(col.value(value));
        }
        if (sets.length > 0) db.prepare(`UPDATE rollouts SET ${sets.join(', ')} WHERE ${TRACK} AND version = ?`).run(...values, ...trackArgs(t), version);
        return rolloutFromRow(stmts.getRollout.get(...trackArgs(t), version)!);
      }),

    deleteRollout: (t, version) => c.write(() => stmts.deleteRollout.run(...trackArgs(t), version).changes > 0),

    outcomeCounts: (t, version) => c.read(() => outcomeCountsFromRows(stmts.outcomeCounts.all(...trackArgs(t), version))),
    outcomeDevices: (t, version, o) => c.read(() => stmts.outcomeDevices.all(...outcomeDevicesValues(t, version, o)).map(outcomeDeviceFromRow)),
  };
}
