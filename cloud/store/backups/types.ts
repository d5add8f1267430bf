// What a device uploads: its backup (one blob a device), and the nonces of its signed requests, the
// replay cache every instance shares (docs/cloud-workers.md). Tables: backups, device_nonces. On SQLite
// these two are the writes of every upload, which the writer thread can take (docs/fleet-scale.md).

export interface BackupMeta {
  uuid: string;
  etag: string | null;
  size: number;
  lastBackupDate: string;
}

export interface StoredBackup extends BackupMeta {
  blob: Buffer;
}

export interface BackupStore {
  /**
   * Records a nonce for a device, atomically. Returns false when the nonce is already recorded
   * (a replay). Entries expire at `expiresAtMs` (epoch ms) and are purged lazily.
   */
  recordNonce(uuid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<boolean>;

  getBackupMeta(uuid: string): Promise<BackupMeta | null>;
  getBackup(uuid: string): Promise<StoredBackup | null>;
  /**
   * Stores a device's blob; resolves once it is durable. Until the call settles the caller must not
   * read or change `blob`; once it has settled the store holds no reference to it, and the caller may
   * reuse its memory (cloud/body-pool.ts) unless the store moved it (the SQLite writer thread: it then
   * reads as empty).
   */
  putBackup(uuid: string, blob: Buffer, etag: string | null, at: string): Promise<BackupMeta>;
  deleteBackup(uuid: string): Promise<boolean>;
}
