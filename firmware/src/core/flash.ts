// The configuration partition's files as the firmware lays them out, and how a file is replaced so
// that a power cut leaves the old or the new one (DESIGN.md section 5). The repair at boot of what an
// interrupted replacement leaves behind: boot-repair.ts. Layout and power-cut model: docs/storage.md.
import type { Storage } from '../hal/storage.ts';

/** The event log's ring of entries (event-log.ts). */
export const EVENT_LOG_FOLDER = '/log';

/** The board's health reports waiting for the cloud, and its health state (health/ring.ts). */
export const HEALTH_FOLDER = '/health';

/** Every folder the firmware writes files in; the boot repair looks in each. */
export const FLASH_FOLDERS = Object.freeze(['/', '/config', '/records/controllers', '/records/clients', EVENT_LOG_FOLDER, HEALTH_FOLDER] as const);

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
