// The backups domain on SQLite (types.ts has the contract, rows.ts the rows both halves share). A nonce
// and a backup are the writes of every upload: on a file database they may run on the writer thread
// (sqlite-threads.ts, docs/fleet-scale.md), which is given the same SQL, so each is written once here.
import type { SqliteConnection } from '../sqlite-connection.ts';
import type { SqliteWriterThread, WriterData } from '../sqlite-threads.ts';
import { backupMetaFromRow, NONCE_PURGE_EVERY, storedBackupFromRow, type BackupRow } from './rows.ts';
import type { BackupStore } from './types.ts';

/**
 * The two writes of every upload, on the store's connection or the writer thread's. A nonce in one
 * statement, as on PostgreSQL: a new nonce is inserted, an expired one not purged yet is revived, a live
 * one changes nothing (a replay). No transaction wrapper per request.
 */
export const UPLOAD_WRITES: WriterData['sql'] = {
  recordNonce: `INSERT INTO device_nonces (uuid, nonce, expires_at_ms) VALUES (?, ?, ?)
  ON CONFLICT (uuid, nonce) DO UPDATE SET expires_at_ms = excluded.expires_at_ms WHERE device_nonces.expires_at_ms <= ?`,
  purgeNonces: `DELETE FROM device_nonces WHERE expires_at_ms <= ?`,
  putBackup: `INSERT INTO backups (uuid, blob, etag, size, last_backup_date) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (uuid) DO UPDATE SET blob = excluded.blob, etag = excluded.etag, size = excluded.size,
    last_backup_date = excluded.last_backup_date`,
};

/** Below this a blob is copied to the writer thread, not transferred (it may be a slice of node's shared pool). */
const TRANSFER_MIN_BYTES = 4096;

/** `writer`: the store's writer thread, when it has one; while it runs, it does the upload writes. */
export function sqliteBackups(c: SqliteConnection, writer: SqliteWriterThread | undefined): BackupStore {
  const { db } = c;
  const stmts = {
    recordNonce: db.prepare(UPLOAD_WRITES.recordNonce),
    purgeNonces: db.prepare(UPLOAD_WRITES.purgeNonces),
    getBackupMeta: db.prepare<[string], BackupRow>(`SELECT uuid, etag, size, last_backup_date FROM backups WHERE uuid = ?`),
    getBackup: db.prepare<[string], BackupRow & { blob: Buffer }>(`SELECT * FROM backups WHERE uuid = ?`),
    putBackup: db.prepare(UPLOAD_WRITES.putBackup),
    deleteBackup: db.prepare(`DELETE FROM backups WHERE uuid = ?`),
  };
  let noncesSincePurge = 0;

  return {
    async recordNonce(uuid, nonce, expiresAtMs, nowMs) {
      if (writer?.running) return writer.call<boolean>({ op: 'nonce', uuid, nonce, expiresAtMs, nowMs });
      if (++noncesSincePurge >= NONCE_PURGE_EVERY) {
        noncesSincePurge = 0;
        // A purge refused as busy is left to the next one (it only removes expired rows).
        c.writeUnlessBusy(() => stmts.purgeNonces.run(nowMs));
      }
      return c.write(() => stmts.recordNonce.run(uuid, nonce, expiresAtMs, nowMs).changes > 0);
    },

    getBackupMeta: (uuid) =>
      c.read(() => {
        const r = stmts.getBackupMeta.get(uuid);
        return r ? backupMetaFromRow(r) : null;
      }),

    getBackup: (uuid) =>
      c.read(() => {
        const r = stmts.getBackup.get(uuid);
        return r ? storedBackupFromRow(r) : null;
      }),

    async putBackup(uuid, blob, etag, at) {
      const size = blob.length;
      if (writer?.running) {
        // The caller gave the blob up (BackupStore.putBackup): a buffer that is all of its ArrayBuffer
        // is moved to the writer (it reads as empty here afterwards); a slice of a shared one is copied.
        // The writer thread waits for a busy lock itself (its busy_timeout): blocking it blocks no request.
        const whole = blob.byteOffset === 0 && blob.byteLength === blob.buffer.byteLength && size >= TRANSFER_MIN_BYTES;
        const bytes = whole ? new Uint8Array(blob.buffer) : Uint8Array.prototype.slice.call(blob);
        await writer.call({ op: 'putBackup', uuid, blob: bytes, etag, at }, [bytes.buffer as ArrayBuffer]);
      } else {
        await c.write(() => stmts.putBackup.run(uuid, blob, etag, size, at));
      }
      return { uuid, etag, size, lastBackupDate: at };
    },

    deleteBackup: (uuid) => c.write(() => stmts.deleteBackup.run(uuid).changes > 0),
  };
}
