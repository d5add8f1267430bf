// The backup and nonce tables as both halves read them, and the purge cadence both keep.
import type { BackupMeta, StoredBackup } from './types.ts';

/** How many nonce inserts between two purges of expired nonces (each process counts its own). */
export const NONCE_PURGE_EVERY = 256;

export interface BackupRow {
  uuid: string;
  etag: string | null;
  size: number;
  last_backup_date: string;
  blob?: Buffer;
}

export function backupMetaFromRow(r: BackupRow): BackupMeta {
  return { uuid: r.uuid, etag: r.etag, size: r.size, lastBackupDate: r.last_backup_date };
}

export function storedBackupFromRow(r: BackupRow & { blob: Buffer }): StoredBackup {
  return { ...backupMetaFromRow(r), blob: r.blob };
}
