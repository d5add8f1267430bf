// Cloud configuration from the environment (DESIGN.md section 4), validated at start-up by one schema
// (ConfigEnv) that also holds every default; a bad value is reported with the variable and the value
// (`PORT: expected a whole number from 0 to 65535, got "eighty"`).
import { availableParallelism } from 'node:os';
import { Type, type Static } from '@sinclair/typebox';
import { anyCase, checker, describeProblem, EXPECTED } from './schema/validator.ts';
import { isPrivateSqlite } from './store/database-url.ts';
import { ConfigError } from './config-error.ts';
import type { JwtConfig } from './auth/jwt.ts';
import { DEFAULT_JWT_SECRET_FILE, resolveJwtSecret } from './auth/jwt-secret.ts';

const whole = (min: number, max: number, dflt: number, description: string) =>
  Type.Integer({ minimum: min, maximum: max, default: dflt, description, [EXPECTED]: `a whole number from ${min} to ${max}` });

/** The most worker processes one `fleet serve` starts (WORKERS). */
export const MAX_WORKERS = 256;

/** The environment the cloud reads, with every default, declared once. */
export const ConfigEnv = Type.Object({
  PORT: whole(0, 65535, 8080, 'TCP port (0: any free port)'),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address to listen on' }),
  DATABASE_URL: Type.String({ minLength: 1, default: './data/cloud.sqlite', description: 'SQLite file or sqlite: URL, or postgres://…' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 16, writeOnly: true, description: 'HS256 secret', [EXPECTED]: 'at least 16 characters' })),
  JWT_SECRET_FILE: Type.String({ minLength: 1, default: DEFAULT_JWT_SECRET_FILE, description: 'Where the HS256 secret is kept when JWT_SECRET is not set' }),
  JWT_JWKS_URL: Type.Optional(Type.String({ format: 'uri', description: 'An identity provider’s JWKS', [EXPECTED]: 'a URL' })),
  JWT_ISSUER: Type.Optional(Type.String()),
  JWT_AUDIENCE: Type.Optional(Type.String()),
  JWT_GROUPS_CLAIM: Type.String({ minLength: 1, default: 'groups' }),
  JWT_SUPERUSER_GROUP: Type.String({ minLength: 1, default: 'superuser' }),
  APPCONFIG_DEPLOY_SECONDS: Type.Number({ minimum: 0, maximum: 86_400, default: 5, [EXPECTED]: 'a number from 0 to 86400' }),
  APPCONFIG_REFRESH_MS: whole(10, 3_600_000, 1000, 'How often an instance re-reads deployed log levels written by other instances'),
  OTA_CACHE_TTL_MS: whole(0, 3_600_000, 1000, 'How long an instance may serve a cached release track written by another instance'),
  OTA_CACHE_BYTES: whole(0, 1024 * 1024 * 1024, 4 * 1024 * 1024, 'Byte budget of the OTA answer cache (docs/cloud-limits.md); 0 disables it'),
  SIGNATURE_WINDOW_SECONDS: whole(1, 86_400, 300, 'Acceptance window of X-Device-Timestamp, either side of the server clock'),
  LOG_FORMAT: Type.Unsafe<'json' | 'pretty'>({ type: 'string', enum: ['json', 'pretty'], default: 'json', [EXPECTED]: 'json or pretty' }),
  PUBLIC_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*[^\\s?#/])?$',
      description: 'Where devices reach this cloud: the URL of hosted images starts with it (default: the scheme and Host of the upload)',
      [EXPECTED]: 'an http(s) URL without a trailing slash, query or fragment',
    }),
  ),
  IMAGE_CACHE_BYTES: whole(0, 1024 * 1024 * 1024, 32 * 1024 * 1024, 'Byte budget of hosted images kept in memory (docs/firmware-images.md)'),
  INVENTORY_FLUSH_MS: whole(10, 3_600_000, 1000, 'How often OTA checks are written to the device inventory (docs/device-inventory.md)'),
  OTA_FAST_PATH: Type.String({
    pattern: `^\\s*${anyCase(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'])}\\s*$`,
    default: '1',
    description: 'Answer GET /ota/... before Express (docs/ota-fast-path.md); 0 routes it through Express',
    [EXPECTED]: '1 or 0 (true/false)',
  }),
  // No default in the schema: it is the machine's, os.availableParallelism() (docs/cloud-workers.md).
  WORKERS: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_WORKERS, description: 'Worker processes of one `fleet serve` (default: the cores this process may use; 1: one process, no supervisor)', [EXPECTED]: `a whole number from 1 to ${MAX_WORKERS}` }),
  ),
  SHUTDOWN_TIMEOUT_MS: whole(0, 600_000, 20_000, 'On SIGTERM, how long requests in flight may take to finish before their connections are closed'),
});
type ConfigEnvValues = Static<typeof ConfigEnv>;

/** The defaults, as the environment would give them. */
export const CONFIG_DEFAULTS = Object.fromEntries(
  Object.entries(ConfigEnv.properties).flatMap(([k, v]) => ((v as { default?: unknown }).default === undefined ? [] : [[k, String((v as { default: unknown }).default)]])),
) as Record<keyof ConfigEnvValues, string>;

const checkEnv = checker(ConfigEnv, { env: true });

/** The declared variables of `env`, unset ones ('' too) left to their defaults, checked and typed. */
export function readEnv(env: Env): ConfigEnvValues {
  const given: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigEnv.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') given[key] = v;
  }
  if (checkEnv(given)) return given;
  throw new ConfigError(checkEnv.problems().slice(0, 3).map((p) => describeProblem(p)).join('; '));
}

export type { JwtConfig };

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
  publicUrl: string | undefined;
  imageCacheBytes: number;
  inventoryFlushMs: number;
  /** Processes serving the port (docs/cloud-workers.md); 1: this process alone. */
  workers: number;
  shutdownTimeoutMs: number;
}

export { ConfigError };

type Env = Record<string, string | undefined>;

export { resolveJwtSecret };

/**
 * WORKERS, or the cores this process may use. A database private to one process can have one
 * worker only: the default becomes 1, an explicit WORKERS above 1 is refused.
 */
function workerCount(workers: number | undefined, databaseUrl: string): number {
  if (!isPrivateSqlite(databaseUrl)) return workers ?? Math.min(MAX_WORKERS, availableParallelism());
  if (workers !== undefined && workers > 1) {
    throw new ConfigError(`WORKERS: ${workers} workers cannot share DATABASE_URL ${JSON.stringify(databaseUrl)}, a database in one process's memory; set WORKERS=1 or give a database file`);
  }
  return 1;
}

export function loadConfig(env: Env = process.env): CloudConfig {
  const e = readEnv(env);
  const { JWT_GROUPS_CLAIM: groupsClaim, JWT_SUPERUSER_GROUP: superuserGroup } = e;
  const jwt: JwtConfig = e.JWT_JWKS_URL
    ? { mode: 'jwks', jwksUrl: e.JWT_JWKS_URL, issuer: e.JWT_ISSUER || undefined, audience: e.JWT_AUDIENCE || undefined, groupsClaim, superuserGroup }
    : (() => {
        const { secret, source } = resolveJwtSecret(env, { create: true });
        return { mode: 'hs256' as const, secret, secretSource: source, groupsClaim, superuserGroup };
      })();
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    jwt,
    appconfigDeploySeconds: e.APPCONFIG_DEPLOY_SECONDS,
    appconfigRefreshMs: e.APPCONFIG_REFRESH_MS,
    otaCacheTtlMs: e.OTA_CACHE_TTL_MS,
    otaCacheBytes: e.OTA_CACHE_BYTES,
    signatureWindowSeconds: e.SIGNATURE_WINDOW_SECONDS,
    logFormat: e.LOG_FORMAT,
    otaFastPath: ['1', 'true', 'yes', 'on'].includes(e.OTA_FAST_PATH.trim().toLowerCase()),
    publicUrl: e.PUBLIC_URL,
    imageCacheBytes: e.IMAGE_CACHE_BYTES,
    inventoryFlushMs: e.INVENTORY_FLUSH_MS,
    workers: workerCount(e.WORKERS, e.DATABASE_URL),
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  };
}
