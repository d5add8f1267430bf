// What a board's factory does once, and what it leaves on the flash (DESIGN.md section 7, docs/
// moddable-build.md "The fuse key"): the bootloader, partition table and first image on a blank
// flash (factory-flash.ts), the board's UUID in NVS (Preference fleet/uuid: hal/system.ts reads it),
// and the admin password typed on the console when the board has none (the console's `password`).
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Nvs } from './nvs.ts';

/** core/auth/visual-token.ts PASSWORD_PATH: 32 bytes once a password is set. */
const PASSWORD_FILE = 'config/admin-password';

/** Writes fleet/uuid into the board's NVS (hal/system.ts UUID_KEY) unless it holds that already. */
export function writeFactoryUuid(nvs: Nvs, uuid: string): void {
  if (nvs.get('fleet', 'uuid') !== uuid) nvs.set('fleet', 'uuid', uuid);
}

/** Whether the board's flash holds an admin password (the factory types one when it does not). */
export function hasAdminPassword(flashDir: string): boolean {
  const path = join(flashDir, PASSWORD_FILE);
  return existsSync(path) && statSync(path).size === 32;
}
