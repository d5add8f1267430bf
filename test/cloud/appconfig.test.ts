// /appconfig: the JWT super-user authorizer, the state machine of spec 3.4, deployments that bake for
// APPCONFIG_DEPLOY_SECONDS with 409 meanwhile, and the point of it all: each cloud function really
// logs at its effective level.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, SignJWT } from 'jose';
import { CLOUD_FUNCTIONS } from '../../cloud/functions.ts';
import { parseConfigurationPatch } from '../../cloud/appconfig/service.ts';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';

let clock = Date.parse('2026-11-21T10:00:00Z');
let cloud: TestCloud;

beforeAll(async () => {
  cloud = await startTestCloud({ now: () => clock, env: { APPCONFIG_DEPLOY_SECONDS: '5' } });
});
afterAll(() => cloud.close());

const call = (method: string, path: string, body?: unknown) => cloud.adminJson(method, path, body);

/** Lets the fixed clock run past the bake time of any deployment. */
function bake() {
  clock += 6000;
}

afterEach(async () => {
  bake();
  for (const fn of CLOUD_FUNCTIONS) await cloud.admin('DELETE', `/appconfig/${fn}`);
  cloud.logs.length = 0;
});

describe('the JWT authorizer', () => {
  it('401 without a token, with a malformed one, or one signed with another secret', async () => {
    const bad = await new SignJWT({ groups: ['superuser'] }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('another-secret-of-enough-length'));
    // Each input has exactly one right code: no header (or a blank one) is missing_token, anything
    // present but unusable is invalid_token.
    for (const [auth, code] of [
      [undefined, 'missing_token'],
      ['   ', 'missing_token'],
      ['Bearer', 'invalid_token'],
      ['Basic abc', 'invalid_token'],
      ['Bearer not.a.jwt!', 'invalid_token'],
      [`Bearer ${bad}`, 'invalid_token'],
    ] as const) {
      const res = await fetch(`${cloud.url}/appconfig/svc-func-ota`, { headers: auth !== undefined ? { authorization: auth } : {} });
      expect(res.status, String(auth)).toBe(401);
      expect((await res.json() as any).error, String(auth)).toBe(code);
    }
  });

  it('401 for an expired token', async () => {
    const expired = await new SignJWT({ groups: ['superuser'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const res = await fetch(`${cloud.url}/appconfig`, { headers: { authorization: `Bearer ${expired}` } });
    expect(res.status).toBe(401);
    expect((await res.json() as any).error).toBe('invalid_token');
  });

  it('403 on every route for a valid token without the superuser group', async () => {
    const token = await cloud.token(['operators']);
    for (const [method, path] of [
      ['GET', '/appconfig'],
      ['GET', '/appconfig/svc-func-ota'],
      ['PATCH', '/appconfig/svc-func-ota'],
      ['POST', '/appconfig/svc-func-ota/deploy'],
      ['DELETE', '/appconfig/svc-func-ota'],
    ] as const) {
      const res = await fetch(cloud.url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: method === 'PATCH' ? JSON.stringify({ logging: 'DEBUG' }) : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await res.json() as any).error).toBe('not_superuser');
    }
    expect((await call('GET', '/appconfig/svc-func-ota')).body.staged).toBeNull();
  });
});

describe('PATCH stages, never deploys', () => {
  it('stages a level in any case, stored upper case; the effective level stays WARNING', async () => {
    const { status, body } = await call('PATCH', '/appconfig/svc-func-ota', { logging: 'debug' });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      function_name: 'svc-func-ota',
      effective_level: 'WARNING',
      staged: { version: 1, configuration: { logging: 'DEBUG' } },
      deployed: null,
      deployment: null,
    });
  });

  it('400 for a name without the svc-func- prefix, 404 for an unknown function', async () => {
    const a = await call('PATCH', '/appconfig/ota', { logging: 'DEBUG' });
    expect(a.status).toBe(400);
    expect(a.body.error).toBe('invalid_function_name');
    const b = await call('PATCH', '/appconfig/svc-func-nope', { logging: 'DEBUG' });
    expect(b.status).toBe(404);
    expect(b.body.error).toBe('function_not_found');
  });

  it('400 with details for an invalid level', async () => {
    for (const logging of ['VERBOSE', '', 5, null]) {
      const { status, body } = await call('PATCH', '/appconfig/svc-func-ota', { logging });
      expect(status).toBe(400);
      expect(body).toMatchObject({ error: 'invalid_log_level', details: { allowed: ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] } });
    }
  });

  it('400 for unknown keys, an empty object, a non-object, or invalid JSON', async () => {
    expect((await call('PATCH', '/appconfig/svc-func-ota', { logging: 'INFO', colour: 'red' })).body.error).toBe('unknown_configuration_key');
    expect((await call('PATCH', '/appconfig/svc-func-ota', {})).status).toBe(400);
    expect((await call('PATCH', '/appconfig/svc-func-ota', ['INFO'])).status).toBe(400);
    const res = await fetch(`${cloud.url}/appconfig/svc-func-ota`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/json' },
      body: '{"logging": ',
    });
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_json');
    expect((await call('GET', '/appconfig/svc-func-ota')).body.staged).toBeNull();
  });

  it('every refusal of PATCH, as a whole body (code, details, message); nothing is staged by any', async () => {
    const levels = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'];
    const refusals: [string, unknown, number, unknown][] = [
      ['/appconfig/ota', { logging: 'DEBUG' }, 400, { error: 'invalid_function_name', details: { function_name: 'ota', required_prefix: 'svc-func-' } }],
      [`/appconfig/${'x'.repeat(200)}`, { logging: 'DEBUG' }, 400, { error: 'invalid_function_name', details: { function_name: 'x'.repeat(128), required_prefix: 'svc-func-' } }],
      ['/appconfig/svc-func-nope', { logging: 'DEBUG' }, 404, { error: 'function_not_found', details: { function_name: 'svc-func-nope', functions: [...CLOUD_FUNCTIONS] } }],
      ['/appconfig/svc-func-ota', ['INFO'], 400, { error: 'invalid_body', details: { expected: '{"logging": "<level>"}' }, message: 'The body must be a JSON object such as {"logging": "DEBUG"}' }],
      // A JSON text that is not an object or array is refused by the strict body parser already.
      ['/appconfig/svc-func-ota', 'INFO', 400, { error: 'invalid_json' }],
      ['/appconfig/svc-func-ota', null, 400, { error: 'invalid_json' }],
      ['/appconfig/svc-func-ota', {}, 400, { error: 'invalid_body', details: { allowed: ['logging'] }, message: 'The body must set at least one configuration key' }],
      ['/appconfig/svc-func-ota', { logging: 'INFO', colour: 'red', ['k'.repeat(70)]: 1 }, 400, { error: 'unknown_configuration_key', details: { keys: ['colour', 'k'.repeat(64)], allowed: ['logging'] }, message: `Unknown configuration key: colour, ${'k'.repeat(64)}` }],
      ['/appconfig/svc-func-ota', Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 1])), 400, { error: 'unknown_configuration_key', details: { keys: Array.from({ length: 16 }, (_, i) => `k${i}`), allowed: ['logging'] } }],
      ['/appconfig/svc-func-ota', { logging: 'VERBOSE' }, 400, { error: 'invalid_log_level', details: { key: 'logging', value: 'VERBOSE', type: 'string', allowed: levels }, message: `The log level must be one of ${levels.join(', ')}` }],
      ['/appconfig/svc-func-ota', { logging: 'V'.repeat(100) }, 400, { error: 'invalid_log_level', details: { key: 'logging', value: 'V'.repeat(64), type: 'string', allowed: levels } }],
      ['/appconfig/svc-func-ota', { logging: 5 }, 400, { error: 'invalid_log_level', details: { key: 'logging', value: 5, type: 'number', allowed: levels } }],
      ['/appconfig/svc-func-ota', { logging: false }, 400, { error: 'invalid_log_level', details: { key: 'logging', value: false, type: 'boolean', allowed: levels } }],
      ['/appconfig/svc-func-ota', { logging: null }, 400, { error: 'invalid_log_level', details: { key: 'logging', value: null, type: 'null', allowed: levels } }],
      ['/appconfig/svc-func-ota', { logging: ['DEBUG'] }, 400, { error: 'invalid_log_level', details: { key: 'logging', value: null, type: 'array', allowed: levels } }],
      ['/appconfig/svc-func-ota', { logging: { level: 'DEBUG' } }, 400, { error: 'invalid_log_level', details: { key: 'logging', value: null, type: 'object', allowed: levels } }],
    ];
    for (const [path, body, status, expected] of refusals) {
      const r = await call('PATCH', path, body);
      expect(r.status, `${path} ${JSON.stringify(body).slice(0, 60)}`).toBe(status);
      expect(r.body, `${path} ${JSON.stringify(body).slice(0, 60)}`).toMatchObject(expected as object);
    }
    expect((await call('GET', '/appconfig/svc-func-ota')).body.staged).toBeNull();
  });

  it('parseConfigurationPatch refuses what the HTTP parser lets through to it and what it does not', () => {
    for (const body of ['INFO', null, 5, ['INFO'], undefined]) {
      expect(() => parseConfigurationPatch(body), JSON.stringify(body)).toThrow(expect.objectContaining({ code: 'invalid_body' }));
    }
    expect(parseConfigurationPatch({ logging: 'debug' })).toEqual({ logging: 'DEBUG' });
  });

  it('PATCH keeps the keys it does not set from the latest staged version, else from the deployed one', async () => {
    expect((await call('PATCH', '/appconfig/svc-func-ota', { logging: 'info' })).body.staged).toMatchObject({ version: 1, configuration: { logging: 'INFO' } });
    expect((await call('PATCH', '/appconfig/svc-func-ota', { logging: 'ERROR' })).body.staged).toMatchObject({ version: 2, configuration: { logging: 'ERROR' } });
  });

  it('415 for a body that is not JSON', async () => {
    const res = await fetch(`${cloud.url}/appconfig/svc-func-ota`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'text/plain' },
      body: 'logging=DEBUG',
    });
    expect(res.status).toBe(415);
  });
});

describe('deploy', () => {
  it('404 when nothing is staged', async () => {
    const { status, body } = await call('POST', '/appconfig/svc-func-ota/deploy');
    expect(status).toBe(404);
    expect(body.error).toBe('no_staged_configuration');
  });

  it('202: the level applies at once; deploy and DELETE answer 409 until the bake time is over', async () => {
    await call('PATCH', '/appconfig/svc-func-backup', { logging: 'INFO' });
    const dep = await call('POST', '/appconfig/svc-func-backup/deploy');
    expect(dep.status).toBe(202);
    expect(dep.body).toMatchObject({
      effective_level: 'INFO',
      staged: null,
      deployed: { version: 1, configuration: { logging: 'INFO' } },
      deployment: { version: 1, state: 'IN_PROGRESS' },
    });
    await call('PATCH', '/appconfig/svc-func-backup', { logging: 'ERROR' });
    const again = await call('POST', '/appconfig/svc-func-backup/deploy');
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('deployment_in_progress');
    expect((await call('DELETE', '/appconfig/svc-func-backup')).status).toBe(409);
    clock += 4000;
    expect((await call('POST', '/appconfig/svc-func-backup/deploy')).status).toBe(409);
    clock += 1001;
    const view = await call('GET', '/appconfig/svc-func-backup');
    expect(view.body).toMatchObject({ effective_level: 'INFO', staged: { version: 2 }, deployment: { state: 'COMPLETE' } });
    const second = await call('POST', '/appconfig/svc-func-backup/deploy');
    expect(second.status).toBe(202);
    expect(second.body.effective_level).toBe('ERROR');
    bake();
    expect((await call('POST', '/appconfig/svc-func-backup/deploy')).status).toBe(404);
  });

  it('each function has its own configuration', async () => {
    await call('PATCH', '/appconfig/svc-func-ota', { logging: 'DEBUG' });
    await call('POST', '/appconfig/svc-func-ota/deploy');
    const all = await call('GET', '/appconfig');
    const levels = Object.fromEntries((all.body.functions as { function_name: string; effective_level: string }[]).map((f) => [f.function_name, f.effective_level]));
    expect(levels).toEqual({
      'svc-func-ota': 'DEBUG',
      'svc-func-backup': 'WARNING',
      'svc-func-appconfig': 'WARNING',
      'svc-func-health': 'WARNING',
      'svc-func-admin': 'WARNING',
    });
  });
});

describe('DELETE', () => {
  it('404 when there is no configuration; 204 after which the function is back at WARNING', async () => {
    expect((await call('DELETE', '/appconfig/svc-func-health')).status).toBe(404);
    await call('PATCH', '/appconfig/svc-func-health', { logging: 'DEBUG' });
    await call('POST', '/appconfig/svc-func-health/deploy');
    bake();
    const del = await cloud.admin('DELETE', '/appconfig/svc-func-health');
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect((await call('GET', '/appconfig/svc-func-health')).body).toMatchObject({ effective_level: 'WARNING', staged: null, deployed: null });
  });

  it('a staged but never deployed configuration can be deleted', async () => {
    await call('PATCH', '/appconfig/svc-func-admin', { logging: 'INFO' });
    expect((await call('DELETE', '/appconfig/svc-func-admin')).status).toBe(204);
  });
});

describe('functions really log at their effective level', () => {
  const otaLines = () => cloud.logs.filter((l) => l.function === 'svc-func-ota');

  it('WARNING by default: an OTA check logs nothing; after deploying DEBUG it logs DEBUG lines', async () => {
    await cloud.admin('PUT', '/admin/firmware/lamp/0x00000001/lamp/2026.01.01', { no_image: true });
    await fetch(`${cloud.url}/ota/lamp/0x00000001/lamp?current_version=2025.01.01`);
    expect(otaLines()).toEqual([]);

    await call('PATCH', '/appconfig/svc-func-ota', { logging: 'DEBUG' });
    await fetch(`${cloud.url}/ota/lamp/0x00000001/lamp?current_version=2025.01.01`);
    expect(otaLines()).toEqual([]); // staged only

    await call('POST', '/appconfig/svc-func-ota/deploy');
    await fetch(`${cloud.url}/ota/lamp/0x00000001/lamp?current_version=2025.01.01`);
    const lines = otaLines();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatchObject({ level: 'DEBUG', function: 'svc-func-ota', msg: 'update check', current_version: '2025.01.01', status: 200 });
    // Other functions stay at WARNING.
    await fetch(`${cloud.url}/health`);
    expect(cloud.logs.filter((l) => l.function === 'svc-func-health')).toEqual([]);

    bake();
    await call('DELETE', '/appconfig/svc-func-ota');
    cloud.logs.length = 0;
    await fetch(`${cloud.url}/ota/lamp/0x00000001/lamp?current_version=2025.01.01`);
    expect(otaLines()).toEqual([]);
  });

  it('at ERROR, a function drops its WARNING lines', async () => {
    // A revocation is logged by svc-func-admin at WARNING.
    await cloud.admin('PUT', '/admin/firmware/lamp/0x00000002/lamp/2026.01.01', { no_image: true });
    await cloud.admin('POST', '/admin/firmware/lamp/0x00000002/lamp/2026.01.01/revoke');
    expect(cloud.logs.filter((l) => l.function === 'svc-func-admin' && l.level === 'WARNING')).toHaveLength(1);
    await call('PATCH', '/appconfig/svc-func-admin', { logging: 'error' });
    await call('POST', '/appconfig/svc-func-admin/deploy');
    await cloud.admin('PUT', '/admin/firmware/lamp/0x00000002/lamp/2026.01.02', { no_image: true });
    await cloud.admin('POST', '/admin/firmware/lamp/0x00000002/lamp/2026.01.02/revoke');
    expect(cloud.logs.filter((l) => l.function === 'svc-func-admin' && l.level === 'WARNING')).toHaveLength(1);
  });

  it('a deployment made by another instance on the same store reaches this one on the next refresh', async () => {
    const other = await startTestCloud({ store: cloud.store, now: () => clock });
    try {
      const res = await other.admin('PATCH', '/appconfig/svc-func-health', { logging: 'DEBUG' });
      expect(res.status).toBe(200);
      expect((await other.admin('POST', '/appconfig/svc-func-health/deploy')).status).toBe(202);
      expect(cloud.cloud.levels.get('svc-func-health')).toBe('WARNING');
      await cloud.cloud.levels.refresh();
      expect(cloud.cloud.levels.get('svc-func-health')).toBe('DEBUG');
      await fetch(`${cloud.url}/health`);
      expect(cloud.logs.some((l) => l.function === 'svc-func-health' && l.level === 'DEBUG')).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe('JWKS mode (an identity provider)', () => {
  it('accepts a super user signed by the provider key, with issuer and audience checked', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const jwks = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    const idp = await startTestCloud({ env: { JWT_JWKS_URL: url, JWT_ISSUER: 'https://idp.test', JWT_AUDIENCE: 'fleet-cloud', JWT_GROUPS_CLAIM: 'cognito:groups' } });
    try {
      const sign = (claims: Record<string, unknown>, iss = 'https://idp.test') =>
        new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(iss).setAudience('fleet-cloud').setExpirationTime('5m').sign(privateKey);
      const get = async (token: string) => (await fetch(`${idp.url}/appconfig`, { headers: { authorization: `Bearer ${token}` } })).status;
      expect(await get(await sign({ 'cognito:groups': ['superuser'] }))).toBe(200);
      expect(await get(await sign({ 'cognito:groups': ['viewer'] }))).toBe(403);
      expect(await get(await sign({ 'cognito:groups': ['superuser'] }, 'https://evil.test'))).toBe(401);
      expect(await get(await idp.token())).toBe(401); // HS256 tokens are not accepted in JWKS mode
    } finally {
      await idp.close();
      jwks.close();
    }
  });
});
