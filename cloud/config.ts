// Cloud configuration from the environment (DESIGN.md section 4), validated at start-up. Defaults live
// in one object; a bad value is reported with the variable and the value.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export const CONFIG_DEFAULTS = {
  PORT: '8080',
  HOST: '127.0.0.1',
  DATABASE_URL: './data/cloud.sqlite',
  JWT_SECRET_FILE: './data/jwt-secret',
  JWT_GROUPS_CLAIM: 'groups',
  JWT_SUPERUSER_GROUP: 'superuser',
  APPCONFIG_DEPLOY_SECONDS: '5',
  /** How often an instance re-reads deployed log levels written by other instances. */
  APPCONFIG_REFRESH_MS: '1000',
  /** How long an instance may serve a cached release track written by another instance. */
  OTA_CACHE_TTL_MS: '1000',
  /** Byte budget of the OTA answer cache, least recently used out (docs/cloud-limits.md); 0 disables it. */
  OTA_CACHE_BYTES: String(4 * 1024 * 1024),
  /** Acceptance window of X-Device-Timestamp, either side of the server clock (DESIGN.md section 3). */
  SIGNATURE_WINDOW_SECONDS: '300',
  LOG_FORMAT: 'json',
  /** Answer GET /ota/... before Express (docs/ota-fast-path.md); 0 routes it through Express. */
  OTA_FAST_PATH: '1',
} as const;

export type JwtConfig =
  | { mode: 'hs256'; secret: Uint8Array; secretSource: string; groupsClaim: string; superuserGroup: string }
  | {
      mode: 'jwks';
      jwksUrl: string;
      issuer: string | undefined;
      audience: string | undefined;
      groupsClaim: string;
      superuserGroup: string;
    };

export interface CloudConfig {
  port: number;
  host: string;
  databaseUrl: string;
  jwt: JwtConfig;
  appconfigDeploySeconds: number;
  appconfigRefreshMs: number;
  otaCacheTtlMs: number;
  otaCacheBytes: number;
  signatureWindowSeconds: number;
  logFormat: 'json' | 'pretty';
  otaFastPath: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function get(env: Env, key: keyof typeof CONFIG_DEFAULTS): string {
  const v = env[key];
  return v === undefined || v === '' ? CONFIG_DEFAULTS[key] : v;
}

function integer(env: Env, key: keyof typeof CONFIG_DEFAULTS, min: number, max: number): number {
  const raw = get(env, key);
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`"${key}" must be a whole number from ${min} to ${max}: ${JSON.stringify(raw)}`);
  }
  return n;
}

function number(env: Env, key: keyof typeof CONFIG_DEFAULTS, min: number, max: number): number {
  const raw = get(env, key);
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new ConfigError(`"${key}" must be a number from ${min} to ${max}: ${JSON.stringify(raw)}`);
  }
  return n;
}

function flag(env: Env, key: keyof typeof CONFIG_DEFAULTS): boolean {
  const raw = get(env, key).trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`"${key}" must be 1 or 0 (true/false): ${JSON.stringify(raw)}`);
}

/**
 * The HS256 secret: JWT_SECRET when set; otherwise the file JWT_SECRET_FILE, created with 32 random
 * bytes on first use so that `npm start` and `fleet token` agree on a fresh machine.
 */
export function resolveJwtSecret(env: Env, opts: { create: boolean }): { secret: Uint8Array; source: string } {
  const direct = env.JWT_SECRET;
  if (direct !== undefined && direct !== '') {
    if (direct.length < 16) throw new ConfigError('"JWT_SECRET" must be at least 16 characters long');
    return { secret: new TextEncoder().encode(direct), source: 'JWT_SECRET' };
  }
  const file = resolve(get(env, 'JWT_SECRET_FILE'));
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

export function loadConfig(env: Env = process.env): CloudConfig {
  const host = get(env, 'HOST');
  const groupsClaim = get(env, 'JWT_GROUPS_CLAIM');
  const superuserGroup = get(env, 'JWT_SUPERUSER_GROUP');
  let jwt: JwtConfig;
  const jwksUrl = env.JWT_JWKS_URL;
  if (jwksUrl) {
    try {
      new URL(jwksUrl);
    } catch {
      throw new ConfigError(`"JWT_JWKS_URL" must be a URL: ${JSON.stringify(jwksUrl)}`);
    }
    jwt = {
      mode: 'jwks',
      jwksUrl,
      issuer: env.JWT_ISSUER || undefined,
      audience: env.JWT_AUDIENCE || undefined,
      groupsClaim,
      superuserGroup,
    };
  } else {
    const { secret, source } = resolveJwtSecret(env, { create: true });
    jwt = { mode: 'hs256', secret, secretSource: source, groupsClaim, superuserGroup };
  }
  const logFormat = get(env, 'LOG_FORMAT');
  if (logFormat !== 'json' && logFormat !== 'pretty') {
    throw new ConfigError(`"LOG_FORMAT" must be json or pretty: ${JSON.stringify(logFormat)}`);
  }
  return {
    port: integer(env, 'PORT', 0, 65535),
    host,
    databaseUrl: get(env, 'DATABASE_URL'),
    jwt,
    appconfigDeploySeconds: number(env, 'APPCONFIG_DEPLOY_SECONDS', 0, 86_400),
    appconfigRefreshMs: integer(env, 'APPCONFIG_REFRESH_MS', 10, 3_600_000),
    otaCacheTtlMs: integer(env, 'OTA_CACHE_TTL_MS', 0, 3_600_000),
    otaCacheBytes: integer(env, 'OTA_CACHE_BYTES', 0, 1024 * 1024 * 1024),
    signatureWindowSeconds: integer(env, 'SIGNATURE_WINDOW_SECONDS', 1, 86_400),
    logFormat,
    otaFastPath: flag(env, 'OTA_FAST_PATH'),
  };
}
