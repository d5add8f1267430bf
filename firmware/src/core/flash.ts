// The configuration partition's files as the firmware lays them out, how a file is replaced so that
// a power cut leaves the old or the new one (DESIGN.md section 5), and the repair at boot of what an
// interrupted replacement leaves behind. Layout and power-cut model: docs/storage.md.
import type { Storage } from '../hal/storage.ts';
import type { LocalBackupStore } from './backup/local-store.ts';

/** The event log's ring of entries (event-log.ts). */
export const EVENT_LOG_FOLDER = '/log';

/** Every folder the firmware writes files in; the boot repair looks in each. */
export const FLASH_FOLDERS = Object.freeze(['/', '/config', '/records/controllers', '/records/clients', EVENT_LOG_FOLDER] as const);

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

/**
 * Present while a console `factory-reset` is under way (docs/storage.md, "Factory reset"): written
 * atomically before the first removal, removed after the last. No ".tmp" suffix (so the repair keeps
 * it) and under /config (so it is never listed as a record).
 */
export const FACTORY_RESET_PENDING_PATH = '/config/factory-reset-pending';

/**
 * Runs a factory reset so that a power cut at any point leaves the old state or, once the marker is
 * on the flash, a reset the next boot finishes: marker (write-then-rename), `steps` (each one
 * idempotent: removals only), marker removed. Returns what `steps` returns.
 */
export function runFactoryReset<T>(storage: Storage, steps: () => T): T {
  writeFileAtomically(storage, FACTORY_RESET_PENDING_PATH, new Uint8Array([0x31]));
  const result = steps();
  storage.remove(FACTORY_RESET_PENDING_PATH);
  return result;
}

export interface RecoveryReport {
  /** Temporary files of interrupted writes, removed. */
  temporaryFilesRemoved: number;
  /** A factory reset a power cut interrupted, finished: what its steps returned; null when none. */
  factoryResetFinished: number | null;
}

/**
 * At boot, before anything reads the flash: finish or undo whatever a power cut interrupted.
 * Idempotent, and safe to cut in turn: every step leaves a state the next boot repairs the same way.
 *  1. The backup and its ETag sidecar are made to agree (LocalBackupStore.recover).
 *  2. Every temporary file left in any folder is removed: none is ever listed or read (a marker of a
 *     factory reset still in its temporary file is thus dropped: that reset never began).
 *  3. A factory-reset marker found: the reset is finished (`factoryReset`, the same idempotent steps
 *     the console runs), then the marker removed, before anything else reads the flash.
 * (A provisioning copy cut short is not undone here: its marker makes the controller unconfigured,
 * so the target procedure runs again and wipes it first; procedures/target.ts.)
 */
export function recoverStorage(storage: Storage, o: { local: LocalBackupStore; factoryReset?: () => number }): RecoveryReport {
  o.local.recover();
  let temporaryFilesRemoved = 0;
  for (const folder of FLASH_FOLDERS) {
    for (const path of storage.list(folder)) if (isTempPath(path) && storage.remove(path)) temporaryFilesRemoved++;
  }
  let factoryResetFinished: number | null = null;
  if (o.factoryReset && storage.size(FACTORY_RESET_PENDING_PATH) !== null) {
    factoryResetFinished = o.factoryReset();
    storage.remove(FACTORY_RESET_PENDING_PATH);
  }
  return { temporaryFilesRemoved, factoryResetFinished };
}
