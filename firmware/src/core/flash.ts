// The configuration partition's files as the firmware lays them out, how a file is replaced so that
// a power cut leaves the old or the new one (DESIGN.md section 5), and the repair at boot of what an
// interrupted replacement leaves behind. Layout and power-cut model: docs/storage.md.
import type { Storage } from '../hal/storage.ts';
import type { LocalBackupStore } from './backup/local-store.ts';

/** The event log's ring of entries (event-log.ts). */
export const EVENT_LOG_FOLDER = '/log';

/** Every folder the firmware writes files in; the boot repair looks in each. */
export const FLASH_FOLDERS = ['/', '/config', '/records/controllers', '/records/clients', EVENT_LOG_FOLDER] as const;

/**
 * A file is written under its name plus this suffix, closed (synced), then renamed over its name.
 * No file the firmware reads has a "." outside its fixed names (record UUIDs never do: ids.ts).
 */
export const TEMP_SUFFIX = '.tmp';

export function tempPath(path: string): string {
  return path + TEMP_SUFFIX;
}

export function isTempPath(path: string): boolean {
  return path.endsWith(TEMP_SUFFIX);
}

/** Replaces a small file atomically: temporary file, close, rename. */
export function writeFileAtomically(storage: Storage, path: string, bytes: Uint8Array): void {
  const tmp = tempPath(path);
  const f = storage.create(tmp);
  f.write(bytes);
  f.close();
  storage.rename(tmp, path);
}

export interface RecoveryReport {
  /** Temporary files of interrupted writes, removed. */
  temporaryFilesRemoved: number;
}

/**
 * At boot, before anything reads the flash: finish or undo whatever a power cut interrupted.
 * Idempotent, and safe to cut in turn: every step leaves a state the next boot repairs the same way.
 *  1. The backup and its ETag sidecar are made to agree (LocalBackupStore.recover).
 *  2. Every temporary file left in any folder is removed: none is ever listed or read.
 * (A provisioning copy cut short is not undone here: its marker makes the controller unconfigured,
 * so the target procedure runs again and wipes it first; procedures/target.ts.)
 */
export function recoverStorage(storage: Storage, o: { local: LocalBackupStore }): RecoveryReport {
  o.local.recover();
  let temporaryFilesRemoved = 0;
  for (const folder of FLASH_FOLDERS) {
    for (const path of storage.list(folder)) if (isTempPath(path) && storage.remove(path)) temporaryFilesRemoved++;
  }
  return { temporaryFilesRemoved };
}
