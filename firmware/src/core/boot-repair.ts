// The repair at boot of what a power cut interrupted (docs/storage.md, "Boot repair"): the local
// backup and its sidecar made to agree, temporary files removed, a factory reset finished. Its own
// file: it reads the flash layout (flash.ts) and the local backup store, which itself writes through
// flash.ts, so neither imports the other.
import type { Storage } from '../hal/storage.ts';
import type { LocalBackupStore } from './backup/local-store.ts';
import { FACTORY_RESET_PENDING_PATH, FLASH_FOLDERS, isTempPath } from './flash.ts';

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
 * so the target procedure runs again and wipes it first; provisioning/target.ts.)
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
