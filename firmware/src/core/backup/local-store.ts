// The local backup (spec 2.3): /backup.json, plaintext, with the SHA-256 hex of its content in the
// sidecar /backup.etag. Streamed to and from flash in chunks; replaced atomically (DESIGN.md
// section 5) so that a power cut never leaves a backup whose sidecar disagrees with it:
//   1. the new content goes to /backup.json.tmp, which is closed (synced);
//   2. its ETag goes to /backup.etag.tmp, closed;
//   3. /backup.json.tmp is renamed over /backup.json, then /backup.etag.tmp over /backup.etag.
// A cut before 3 leaves the old pair; a cut within 3 leaves /backup.etag.tmp, which tells the boot
// repair (recover) to hash /backup.json again. docs/storage.md has the power-cut model.
import type { BodyReader } from '../../hal/network.ts';
import type { CryptoHal, Sha256 } from '../../hal/crypto.ts';
import type { FileWriter, Storage } from '../../hal/storage.ts';
import { hexEncode, utf8Decode, utf8Encode } from '../bytes.ts';
import { tempPath } from '../flash.ts';
import { errors } from '../errors.ts';
import { drain } from '../body.ts';

export const BACKUP_PATH = '/backup.json';
export const ETAG_PATH = '/backup.etag';
const BACKUP_TMP = tempPath(BACKUP_PATH);
const ETAG_TMP = tempPath(ETAG_PATH);

/** A backup being written: chunks in, then commit (atomic) or abort (nothing changes). */
export interface BackupWriter {
  write(chunk: Uint8Array): void;
  commit(): { etag: string; size: number };
  abort(): void;
}

export class LocalBackupStore {
  /** One backup is written at a time (a PUT, a cloud retrieve, the provisioning copy). */
  private writing = false;

  constructor(
    private readonly storage: Storage,
    private readonly crypto: CryptoHal,
    private readonly maxBytes: number,
    private readonly chunkBytes: number,
  ) {}

  size(): number | null {
    return this.storage.size(BACKUP_PATH);
  }

  /** The ETag of the stored backup (lowercase hex), or null when there is none. */
  etag(): string | null {
    if (this.size() === null) return null;
    const size = this.storage.size(ETAG_PATH);
    if (size === null) return null;
    const text = utf8Decode(this.storage.read(ETAG_PATH, 0, 64)).trim();
    return /^[0-9a-f]{64}$/.test(text) ? text : null; // not a module-level RegExp: docs/moddable-regexp.md
  }

  /** Streams the stored backup out in chunks. */
  reader(): BodyReader {
    const size = this.size() ?? 0;
    let at = 0;
    return {
      read: async () => {
        if (at >= size) return null;
        const chunk = this.storage.read(BACKUP_PATH, at, Math.min(this.chunkBytes, size - at));
        if (chunk.length === 0) return null;
        at += chunk.length;
        return chunk;
      },
    };
  }

  /** Starts replacing the backup; 409 `backup_busy` while another replacement is under way. */
  begin(): BackupWriter {
    if (this.writing) throw errors.conflict('backup_busy', 'Another backup is being written; try again when it is done');
    const file: FileWriter = this.storage.create(BACKUP_TMP);
    this.writing = true;
    const hash: Sha256 = this.crypto.sha256();
    let size = 0;
    let open = true;
    const abort = () => {
      if (!open) return;
      open = false;
      this.writing = false;
      file.close();
      this.storage.remove(BACKUP_TMP);
    };
    return {
      write: (chunk) => {
        if (!open) throw new Error('backup writer is closed');
        size += chunk.length;
        if (size > this.maxBytes) {
          abort();
          throw errors.tooLarge(this.maxBytes);
        }
        hash.update(chunk);
        file.write(chunk);
      },
      commit: () => {
        if (!open) throw new Error('backup writer is closed');
        open = false;
        try {
          file.close();
          const etag = hexEncode(hash.digest());
          this.install(etag);
          return { etag, size };
        } finally {
          this.writing = false;
        }
      },
      abort,
    };
  }

  /** Writes a whole body; past the limit the rest is discarded and 413 thrown, the old backup kept. */
  async write(body: BodyReader): Promise<{ etag: string; size: number }> {
    const writer = this.begin();
    try {
      for (;;) {
        const chunk = await body.read();
        if (chunk === null) break;
        writer.write(chunk);
      }
    } catch (err) {
      writer.abort();
      await drain(body).catch(() => undefined);
      throw err;
    }
    return writer.commit();
  }

  remove(): boolean {
    const had = this.storage.remove(BACKUP_PATH);
    this.storage.remove(ETAG_PATH);
    return had;
  }

  /**
   * At boot (part of recoverStorage): finish or undo a replacement a power cut interrupted. The
   * sidecar is written to a temporary file first, so any disagreement is repaired by hashing
   * /backup.json again. A cut during this repair is repaired the same way at the next boot.
   */
  recover(): void {
    this.storage.remove(BACKUP_TMP);
    const pendingEtag = this.storage.size(ETAG_TMP) !== null;
    if (this.size() === null) {
      this.storage.remove(ETAG_TMP);
      this.storage.remove(ETAG_PATH);
      return;
    }
    if (pendingEtag || this.etag() === null) this.install(this.hashStored());
  }

  private install(etag: string): void {
    const f = this.storage.create(ETAG_TMP);
    f.write(utf8Encode(etag));
    f.close();
    if (this.storage.size(BACKUP_TMP) !== null) this.storage.rename(BACKUP_TMP, BACKUP_PATH);
    this.storage.rename(ETAG_TMP, ETAG_PATH);
  }

  private hashStored(): string {
    const hash = this.crypto.sha256();
    const size = this.size() ?? 0;
    for (let at = 0; at < size; at += this.chunkBytes) hash.update(this.storage.read(BACKUP_PATH, at, Math.min(this.chunkBytes, size - at)));
    return hexEncode(hash.digest());
  }
}
