// What a board's factory does once, and what it leaves on the flash (DESIGN.md section 7, docs/
// moddable-build.md "The fuse key"): the bootloader, partition table and first image on a blank
// flash (factory-flash.ts), the board's UUID in NVS (Preference fleet/uuid: hal/system.ts reads it),
// and the admin password typed on the console when the board has none (the console's `password`).
// On a virtual board NVS is the SDK's Linux `preference`, a JSON file in the flash folder
// (files/preference/lin/preference.js: config.file.root + modpreferences.json).
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PREFERENCES = 'modpreferences.json';
/** core/auth.ts PASSWORD_PATH: 32 bytes once a password is set. */
const PASSWORD_FILE = 'config/admin-password';

/** Writes fleet/uuid into the board's NVS unless it holds that already. */
export function writeFactoryUuid(flashDir: string, uuid: string): void {
  const path = join(flashDir, PREFERENCES);
  let prefs: Record<string, Record<string, unknown>> = {};
  if (existsSync(path)) {
    try {
      prefs = JSON.parse(readFileSync(path, 'utf8')) as typeof prefs;
    } catch {
      prefs = {};
    }
  }
  if (prefs.fleet?.uuid === uuid) return;
  prefs.fleet = { ...(prefs.fleet ?? {}), uuid };
  writeFileSync(path, JSON.stringify(prefs));
}

/** Whether the board's flash holds an admin password (the factory types one when it does not). */
export function hasAdminPassword(flashDir: string): boolean {
  const path = join(flashDir, PASSWORD_FILE);
  return existsSync(path) && statSync(path).size === 32;
}
