// The cloud's HS256 secret, read (or created on first use) without loading the rest of the
// configuration: `fleet` commands mint their token from it at every start (docs/cli-start.md).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../config-error.ts';

/** Where the secret is kept when JWT_SECRET is not set (JWT_SECRET_FILE's default). */
export const DEFAULT_JWT_SECRET_FILE = './data/jwt-secret';

/**
 * The HS256 secret: JWT_SECRET when set; otherwise the file JWT_SECRET_FILE, created with 32 random
 * bytes on first use so that `npm start` and `fleet token` agree on a fresh machine.
 */
export function resolveJwtSecret(env: Record<string, string | undefined>, opts: { create: boolean }): { secret: Uint8Array; source: string } {
  const direct = env.JWT_SECRET;
  if (direct !== undefined && direct !== '') {
    if (direct.length < 16) throw new ConfigError('"JWT_SECRET" must be at least 16 characters long');
    return { secret: new TextEncoder().encode(direct), source: 'JWT_SECRET' };
  }
  const file = resolve(env.JWT_SECRET_FILE || DEFAULT_JWT_SECRET_FILE);
  if (!existsSync(file)) {
    if (!opts.create) {
      throw new ConfigError(`no JWT secret: set JWT_SECRET, or start the cloud once to create ${file}`);
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  }
  const text = readFileSync(file, 'utf8').trim();
  if (text.length < 16) throw new ConfigError(`the JWT secret in ${file} is shorter than 16 characters`);
  return { secret: new TextEncoder().encode(text), source: file };
}
