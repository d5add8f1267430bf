// Cloud configuration: defaults, validation with the value in the message, and the JWT secret file.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS, ConfigError, loadConfig, resolveJwtSecret } from '../../cloud/config.ts';

const secret = { JWT_SECRET: 'a-secret-long-enough' };

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig(secret);
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', databaseUrl: './data/cloud.sqlite', appconfigDeploySeconds: 5, signatureWindowSeconds: 300 });
    expect(c.jwt.mode).toBe('hs256');
  });

  it.each([
    ['PORT', 'eighty', /^PORT: expected a whole number from 0 to 65535, got "eighty"$/],
    ['PORT', '70000', /^PORT: expected a whole number from 0 to 65535, got 70000$/],
    ['APPCONFIG_DEPLOY_SECONDS', '-1', /^APPCONFIG_DEPLOY_SECONDS: expected a number from 0 to 86400, got -1$/],
    ['LOG_FORMAT', 'xml', /^LOG_FORMAT: expected json or pretty, got "xml"$/],
    ['JWT_JWKS_URL', 'not a url', /^JWT_JWKS_URL: expected a URL, got "not a url"$/],
    ['OTA_FAST_PATH', 'maybe', /^OTA_FAST_PATH: expected 1 or 0 \(true\/false\), got "maybe"$/],
  ])('refuses %s=%s and names the value', (key, value, message) => {
    expect(() => loadConfig({ ...secret, [key]: value })).toThrow(message);
  });

  it('refuses a JWT_SECRET shorter than 16 characters, without echoing it', () => {
    expect(() => loadConfig({ JWT_SECRET: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ JWT_SECRET: 'short' })).toThrow(/^JWT_SECRET: expected at least 16 characters, got another value \(not shown: a secret\)$/);
  });

  it('takes flags in any case, an empty value as unset, and reports several bad values at once', () => {
    expect(loadConfig({ ...secret, OTA_FAST_PATH: ' OFF ', PORT: '' })).toMatchObject({ otaFastPath: false, port: 8080 });
    expect(() => loadConfig({ ...secret, PORT: 'x', LOG_FORMAT: 'xml' })).toThrow(/PORT: .*; LOG_FORMAT: /);
  });

  it('every default is declared in the schema', () => {
    expect(CONFIG_DEFAULTS).toMatchObject({ PORT: '8080', HOST: '127.0.0.1', LOG_FORMAT: 'json', OTA_FAST_PATH: '1', SIGNATURE_WINDOW_SECONDS: '300' });
  });

  it('creates the JWT secret file once (mode 0600) and reads it back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-cfg-'));
    try {
      const file = join(dir, 'sub', 'jwt-secret');
      expect(() => resolveJwtSecret({ JWT_SECRET_FILE: file }, { create: false })).toThrow(/start the cloud once/);
      const a = resolveJwtSecret({ JWT_SECRET_FILE: file }, { create: true });
      const b = resolveJwtSecret({ JWT_SECRET_FILE: file }, { create: false });
      expect(Buffer.from(a.secret).equals(Buffer.from(b.secret))).toBe(true);
      expect(readFileSync(file, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('WORKERS', () => {
  it('defaults to the cores this process may use; 1 for a database in one process memory', () => {
    expect(loadConfig({ ...secret, DATABASE_URL: '/tmp/x.sqlite' }).workers).toBe(availableParallelism());
    expect(loadConfig({ ...secret, DATABASE_URL: '/tmp/x.sqlite', WORKERS: '3' }).workers).toBe(3);
    for (const url of [':memory:', 'sqlite::memory:', 'sqlite::memory:#writer=worker']) {
      expect(loadConfig({ ...secret, DATABASE_URL: url }).workers).toBe(1);
      expect(loadConfig({ ...secret, DATABASE_URL: url, WORKERS: '1' }).workers).toBe(1);
    }
  });

  it.each([
    ['0', /^WORKERS: expected a whole number from 1 to 256, got 0$/],
    ['two', /^WORKERS: expected a whole number from 1 to 256, got "two"$/],
    ['1000', /^WORKERS: expected a whole number from 1 to 256, got 1000$/],
  ])('refuses WORKERS=%s and names the value', (value, message) => {
    expect(() => loadConfig({ ...secret, WORKERS: value })).toThrow(message);
  });

  it('refuses several workers on a database in one process memory, saying why', () => {
    expect(() => loadConfig({ ...secret, DATABASE_URL: ':memory:', WORKERS: '2' })).toThrow(/^WORKERS: 2 workers cannot share DATABASE_URL ":memory:", a database in one process's memory; set WORKERS=1 or give a database file$/);
  });

  it('SHUTDOWN_TIMEOUT_MS: 20 s by default, bounded', () => {
    expect(loadConfig(secret).shutdownTimeoutMs).toBe(20_000);
    expect(() => loadConfig({ ...secret, SHUTDOWN_TIMEOUT_MS: '-5' })).toThrow(/^SHUTDOWN_TIMEOUT_MS: expected a whole number from 0 to 600000, got -5$/);
  });
});
