// The backups domain on PostgreSQL (types.ts has the contract, rows.ts the rows both halves share): a
// nonce is one upsert, so instances sharing the database admit it once.
import { changed, type PostgresConnection } from '../postgres-pool.ts';
import { backupMetaFromRow, NONCE_PURGE_EVERY, storedBackupFromRow, type BackupRow } from './rows.ts';
import type { BackupStore } from './types.ts';

// The statements of every signed upload (the nonce, the 304's metadata, the row) are named: PostgreSQL
// parses and plans each once per connection instead of once per call (docs/fleet-scale.md).
export function postgresBackups({ pool }: PostgresConnection): BackupStore {
  let noncesSincePurge = 0;
  return {
    async recordNonce(uuid, nonce, expiresAtMs, nowMs) {
      if (++noncesSincePurge >= NONCE_PURGE_EVERY) {
        noncesSincePurge = 0;
        await pool.query('DELETE FROM device_nonces WHERE expires_at_ms <= $1', [nowMs]);
      }
      // A new nonce is inserted; an expired one not purged yet is revived; a live one is a replay.
      return changed(
        await pool.query({
          name: 'nonces.record',
          text: `INSERT INTO device_nonces (uuid, nonce, expires_at_ms) VALUES ($1, $2, $3)
           ON CONFLICT (uuid, nonce) DO UPDATE SET expires_at_ms = EXCLUDED.expires_at_ms WHERE device_nonces.expires_at_ms <= $4`,
          values: [uuid, nonce, expiresAtMs, nowMs],
        }),
      );
    },

    async getBackupMeta(uuid) {
      const { rows } = await pool.query<BackupRow>({ name: 'backups.meta', text: 'SELECT uuid, etag, size, last_backup_date FROM backups WHERE uuid = $1', values: [uuid] });
      return rows[0] ? backupMetaFromRow(rows[0]) : null;
    },

    async getBackup(uuid) {
      const { rows } = await pool.query<BackupRow & { blob: Buffer }>('SELECT * FROM backups WHERE uuid = $1', [uuid]);
      return rows[0] ? storedBackupFromRow(rows[0]) : null;
    },

    async putBackup(uuid, blob, etag, at) {
      await pool.query({
        name: 'backups.put',
        text: `INSERT INTO backups (uuid, blob, etag, size, last_backup_date) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (uuid) DO UPDATE SET blob = EXCLUDED.blob, etag = EXCLUDED.etag, size = EXCLUDED.size, last_backup_date = EXCLUDED.last_backup_date`,
        values: [uuid, blob, etag, blob.length, at],
      });
      return { uuid, etag, size: blob.length, lastBackupDate: at };
    },

    deleteBackup: async (uuid) => changed(await pool.query('DELETE FROM backups WHERE uuid = $1', [uuid])),
  };
}
