// The operator console's session (issue 32, docs/operator-console.md): the cookie holds an opaque id
// of a session kept in the store, never the JWT. Log-out deletes the session, so the same cookie is
// refused afterwards (it used to be the JWT itself, good on the admin API until the token expired);
// the store holds only hashes; a session ends with its token and after at most 8 h; over https the
// cookies are `__Host-` prefixed and Secure. A second instance on one PostgreSQL store is in
// test/cloud/postgres.test.ts, two workers of one serve in test/cloud/workers.test.ts.
import Database from 'better-sqlite3';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest, createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTokenVerifier, mintToken } from '../../cloud/auth/jwt.ts';
import { MAX_SESSION_SECONDS } from '../../cloud/console/server/session.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { openssl } from '../helpers/openssl.ts';

const secret = new TextEncoder().encode(TEST_JWT_SECRET);
const token = (o: { subject?: string; groups?: string[]; ttlSeconds?: number } = {}) => mintToken(secret, { subject: 'ops-alice', ...o });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const publicKey = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

let dir: string;
let dbPath: string;
let store: SqliteStore;
let cloud: TestCloud;
/** Added to the cloud's clock (the verifier keeps the real one): how a session is made to expire. */
let skewMs = 0;

interface Answer {
  status: number;
  json: any;
  setCookies: string[];
  /** name → value of the Set-Cookie headers. */
  cookies: Record<string, string>;
}

function cookiesOf(setCookies: string[]): Record<string, string> {
  return Object.fromEntries(
    setCookies.map((c) => {
      const pair = c.split(';', 1)[0]!;
      return [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
    }),
  );
}

async function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const setCookies = res.headers.getSetCookie();
  return { status: res.status, json: text ? JSON.parse(text) : null, setCookies, cookies: cookiesOf(setCookies) };
}

const login = (base: string, jwt: string, headers: Record<string, string> = {}) => call(base, 'POST', '/console/session', headers, { token: jwt });

/** The headers of a console request made with a session's cookies (and its CSRF token for a change). */
const asConsole = (c: Record<string, string>, prefix = '') => ({
  cookie: `${prefix}fleet_session=${c[`${prefix}fleet_session`]}; ${prefix}fleet_csrf=${c[`${prefix}fleet_csrf`]}`,
  'x-csrf-token': c[`${prefix}fleet_csrf`]!,
});

/** The console_sessions rows, read straight from the database file as anyone with a copy could. */
function sessionRows(): Record<string, unknown>[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT * FROM console_sessions ORDER BY created_at').all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-console-session-'));
  dbPath = join(dir, 'cloud.sqlite');
  store = new SqliteStore(dbPath);
  cloud = await startTestCloud({ store, now: () => Date.now() + skewMs });
});
afterAll(async () => {
  await cloud?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  skewMs = 0;
});

describe('the console session', () => {
  it('after log-out the same cookie is refused: 401 on GET /admin/devices and on a PUT, which stores nothing', async () => {
    const jwt = await token();
    const session = await login(cloud.url, jwt);
    expect(session.status).toBe(201);
    const headers = asConsole(session.cookies);
    expect((await call(cloud.url, 'GET', '/admin/devices', headers)).status).toBe(200);
    expect((await call(cloud.url, 'PUT', '/admin/devices/cs-before', headers, { public_key: publicKey() })).status).toBe(201);

    const logout = await call(cloud.url, 'DELETE', '/console/session', headers);
    expect(logout.status).toBe(204);
    expect(logout.setCookies).toEqual(['fleet_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0', 'fleet_csrf=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0']);

    const read = await call(cloud.url, 'GET', '/admin/devices', headers);
    expect([read.status, read.json]).toEqual([401, { error: 'session_expired', message: 'The console session has ended or expired: log in again' }]);
    const put = await call(cloud.url, 'PUT', '/admin/devices/cs-after', headers, { public_key: publicKey() });
    expect([put.status, put.json.error]).toEqual([401, 'session_expired']);
    expect((await cloud.admin('GET', '/admin/devices/cs-after')).status).toBe(404);
    expect((await call(cloud.url, 'GET', '/console/session', headers)).json.error).toBe('session_expired');
    // Logging out again changes nothing and still answers 204.
    expect((await call(cloud.url, 'DELETE', '/console/session', headers)).status).toBe(204);
    // The log-out is in the audit log with who it was.
    const audit = (await cloud.adminJson('GET', '/admin/audit')).body.entries.filter((e: any) => e.action === 'consoleLogout');
    expect(audit.map((e: any) => [e.actor, e.via, e.status])).toContainEqual(['ops-alice', 'console', 204]);
  });

  it('the cookie holds an opaque id, not the JWT: no bearer token either; the store holds only hashes of the id and the CSRF token', async () => {
    const jwt = await token({ subject: 'ops-bob', groups: ['superuser', 'staff'] });
    const session = await login(cloud.url, jwt);
    const id = session.cookies.fleet_session!;
    const csrf = session.cookies.fleet_csrf!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url: no dots, not a JWT
    expect(id).not.toBe(jwt);
    expect(session.setCookies.join('\n')).not.toContain(jwt);
    await expect(createTokenVerifier(cloud.config.jwt)(`Bearer ${id}`)).rejects.toMatchObject({ code: 'invalid_token' });
    const asBearer = await call(cloud.url, 'GET', '/admin/devices', { authorization: `Bearer ${id}` });
    expect([asBearer.status, asBearer.json.error]).toEqual([401, 'invalid_token']);
    expect(session.setCookies[0]).toMatch(/^fleet_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=(\d+)$/);
    expect(session.json).toEqual({ subject: 'ops-bob', expires_at: expect.any(String), csrf_token: csrf });

    const row = sessionRows().find((r) => r.subject === 'ops-bob')!;
    expect(row).toEqual({
      id_hash: sha256(id),
      subject: 'ops-bob',
      groups: '["superuser","staff"]',
      csrf_hash: sha256(csrf),
      created_at: expect.any(String),
      expires_at_ms: Date.parse(session.json.expires_at),
    });
    const everything = JSON.stringify(sessionRows());
    for (const secretValue of [id, csrf, jwt, jwt.split('.')[2]!]) expect(everything).not.toContain(secretValue);
  });

  it('a JWT in the session cookie (what it held before) is refused on a read and on a change', async () => {
    const jwt = await token();
    const headers = { cookie: `fleet_session=${jwt}; fleet_csrf=k`, 'x-csrf-token': 'k' };
    const read = await call(cloud.url, 'GET', '/admin/devices', headers);
    expect([read.status, read.json.error]).toEqual([401, 'session_expired']);
    const put = await call(cloud.url, 'PUT', '/admin/devices/cs-jwt-cookie', headers, { public_key: publicKey() });
    expect([put.status, put.json.error]).toEqual([401, 'session_expired']);
    expect((await cloud.admin('GET', '/admin/devices/cs-jwt-cookie')).status).toBe(404);
    expect((await call(cloud.url, 'GET', '/console/session', headers)).json.error).toBe('session_expired');
  });

  it('bad cookies, a CSRF token of another session and bad log-ins get a clear error and store nothing', async () => {
    const before = sessionRows().length;
    for (const value of ['', 'x', 'A'.repeat(42), 'A'.repeat(44), 'A'.repeat(4000), '%2e%2e', 'A'.repeat(42) + '.']) {
      const res = await call(cloud.url, 'GET', '/admin/devices', { cookie: `fleet_session=${value}` });
      expect([res.status, res.json.error], JSON.stringify(value.slice(0, 50))).toEqual([401, 'session_expired']);
    }
    // No cookie at all: as before, the bearer token is missing.
    expect((await call(cloud.url, 'GET', '/admin/devices')).json.error).toBe('missing_token');

    // Session A's cookie with session B's CSRF cookie and token: both look right, but the token is not A's.
    const a = (await login(cloud.url, await token({ subject: 'ops-a' }))).cookies;
    const b = (await login(cloud.url, await token({ subject: 'ops-b' }))).cookies;
    const crossed = { cookie: `fleet_session=${a.fleet_session}; fleet_csrf=${b.fleet_csrf}`, 'x-csrf-token': b.fleet_csrf! };
    const put = await call(cloud.url, 'PUT', '/admin/devices/cs-crossed', crossed, { public_key: publicKey() });
    expect([put.status, put.json]).toEqual([403, { error: 'csrf_check_failed', message: "The CSRF token is not this console session's", details: { header: 'x-csrf-token' } }]);
    expect((await cloud.admin('GET', '/admin/devices/cs-crossed')).status).toBe(404);
    const crossedLogout = await call(cloud.url, 'DELETE', '/console/session', crossed);
    expect([crossedLogout.status, crossedLogout.json.error]).toEqual([403, 'csrf_check_failed']);
    expect((await call(cloud.url, 'GET', '/admin/devices', asConsole(a))).status).toBe(200); // A was not ended
    const crossedReload = await call(cloud.url, 'GET', '/console/session', { cookie: crossed.cookie });
    expect([crossedReload.status, crossedReload.json.error]).toEqual([401, 'session_expired']);
    // A session's cookie without the CSRF header, or from another origin: refused as before.
    expect((await call(cloud.url, 'PUT', '/admin/devices/cs-crossed', { cookie: asConsole(a).cookie }, { public_key: publicKey() })).json.error).toBe('csrf_check_failed');
    expect((await call(cloud.url, 'PUT', '/admin/devices/cs-crossed', { ...asConsole(a), origin: 'http://127.0.0.1:1' }, { public_key: publicKey() })).json.error).toBe('csrf_check_failed');
    expect((await cloud.admin('GET', '/admin/devices/cs-crossed')).status).toBe(404);

    // Log-ins that fail open no session.
    const rows = sessionRows().length;
    expect(rows).toBe(before + 2);
    const bad = await login(cloud.url, 'not.a.token');
    expect([bad.status, bad.json.error, bad.setCookies]).toEqual([401, 'invalid_token', []]);
    const staff = await login(cloud.url, await token({ groups: ['staff'] }));
    expect([staff.status, staff.json.error, staff.setCookies]).toEqual([403, 'not_superuser', []]);
    const empty = await call(cloud.url, 'POST', '/console/session', {}, {});
    expect([empty.status, empty.json.error]).toEqual([400, 'invalid_body']);
    const elsewhere = await login(cloud.url, await token(), { origin: 'http://127.0.0.1:1' });
    expect([elsewhere.status, elsewhere.json.error]).toEqual([403, 'csrf_check_failed']);
    expect(sessionRows().length).toBe(rows);
  });

  it("a log-in from a browser that holds a session replaces it: the earlier one is ended, not left alive", async () => {
    const first = (await login(cloud.url, await token())).cookies;
    const second = await login(cloud.url, await token(), { cookie: asConsole(first).cookie });
    expect(second.status).toBe(201);
    expect((await call(cloud.url, 'GET', '/admin/devices', asConsole(first))).json.error).toBe('session_expired');
    expect((await call(cloud.url, 'GET', '/admin/devices', asConsole(second.cookies))).status).toBe(200);
  });

  it('a session is authorized by its groups as a token is: a cloud on the same store whose super-user group is another refuses it', async () => {
    const session = (await login(cloud.url, await token({ groups: ['superuser'] }))).cookies;
    const strict = await startTestCloud({ store, env: { JWT_SUPERUSER_GROUP: 'fleet-admins' } });
    try {
      for (const [method, path] of [['GET', '/admin/devices'], ['GET', '/console/session']] as const) {
        const res = await call(strict.url, method, path, asConsole(session));
        expect([res.status, res.json.error], path).toEqual([403, 'not_superuser']);
      }
      const put = await call(strict.url, 'PUT', '/admin/devices/cs-group', asConsole(session), { public_key: publicKey() });
      expect([put.status, put.json.error]).toEqual([403, 'not_superuser']);
      expect((await cloud.admin('GET', '/admin/devices/cs-group')).status).toBe(404);
    } finally {
      await strict.close();
    }
  });

  it("a session ends at the token's exp, and at most 8 h after log-in; expired sessions are refused, and pruned at the next log-in", async () => {
    const short = await login(cloud.url, await token({ subject: 'ops-short', ttlSeconds: 60 }));
    const exp = JSON.parse(Buffer.from((await token({ ttlSeconds: 60 })).split('.')[1]!, 'base64url').toString()).exp as number;
    expect(Math.abs(Date.parse(short.json.expires_at) - exp * 1000)).toBeLessThanOrEqual(5_000);
    const shortAge = Number(/Max-Age=(\d+)/.exec(short.setCookies[0]!)![1]);
    expect(shortAge).toBeGreaterThan(0);
    expect(shortAge).toBeLessThanOrEqual(60);
    const long = await login(cloud.url, await token({ subject: 'ops-long', ttlSeconds: 24 * 3600 }));
    expect(long.setCookies[0]).toMatch(new RegExp(`Max-Age=${MAX_SESSION_SECONDS}$`));
    const loggedInAt = Date.parse(long.json.expires_at) - MAX_SESSION_SECONDS * 1000;
    expect(Math.abs(loggedInAt - Date.now())).toBeLessThan(30_000);

    skewMs = 61_000;
    const late = await call(cloud.url, 'GET', '/admin/devices', asConsole(short.cookies));
    expect([late.status, late.json.error]).toEqual([401, 'session_expired']);
    expect((await call(cloud.url, 'GET', '/console/session', asConsole(short.cookies))).json.error).toBe('session_expired');
    expect((await call(cloud.url, 'GET', '/admin/devices', asConsole(long.cookies))).status).toBe(200);

    skewMs = Date.parse(long.json.expires_at) - Date.now() - 5_000;
    expect((await call(cloud.url, 'GET', '/admin/devices', asConsole(long.cookies))).status).toBe(200);
    skewMs = Date.parse(long.json.expires_at) - Date.now() + 1;
    const put = await call(cloud.url, 'PUT', '/admin/devices/cs-expired', asConsole(long.cookies), { public_key: publicKey() });
    expect([put.status, put.json.error]).toEqual([401, 'session_expired']);
    expect((await cloud.admin('GET', '/admin/devices/cs-expired')).status).toBe(404);

    // Still rows until someone logs in; the next log-in removes every expired one.
    expect(sessionRows().map((r) => r.subject)).toEqual(expect.arrayContaining(['ops-short', 'ops-long']));
    // Past every session of this file; the token is checked on the real clock, so it must outlast the skew.
    skewMs = (MAX_SESSION_SECONDS + 3600) * 1000;
    expect((await login(cloud.url, await token({ subject: 'ops-next', ttlSeconds: 2 * 24 * 3600 }))).status).toBe(201);
    expect(sessionRows().map((r) => r.subject)).toEqual(['ops-next']);
  });
});

describe('the console cookies over https', () => {
  let tls: Server;
  let tlsUrl: string;
  let ca: string;

  function tlsCall(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
    const bytes = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = httpsRequest(`${tlsUrl}${path}`, { method, ca, headers: { ...(bytes ? { 'content-type': 'application/json', 'content-length': String(bytes.length) } : {}), ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          const setCookies = res.headers['set-cookie'] ?? [];
          resolve({ status: res.statusCode!, json: text ? JSON.parse(text) : null, setCookies, cookies: cookiesOf(setCookies) });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(bytes);
    });
  }

  beforeAll(async () => {
    // A certificate for 127.0.0.1, made with the openssl command line; the same cloud behind a TLS listener.
    const key = join(dir, 'tls.key');
    const cert = join(dir, 'tls.crt');
    const made = openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert]);
    expect(made.status, made.stderr).toBe(0);
    ca = readFileSync(cert, 'utf8');
    tls = createHttpsServer({ key: readFileSync(key), cert: ca }, cloud.cloud.listener);
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    tlsUrl = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    tls?.closeAllConnections();
    await new Promise<void>((r) => (tls ? tls.close(() => r()) : r()));
  });

  it('are named __Host-… and Secure, and only those names are read over https', async () => {
    const session = await tlsCall('POST', '/console/session', {}, { token: await token() });
    expect(session.status).toBe(201);
    const id = session.cookies['__Host-fleet_session']!;
    expect(session.setCookies).toEqual([
      expect.stringMatching(/^__Host-fleet_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/),
      expect.stringMatching(/^__Host-fleet_csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/),
    ]);
    const headers = asConsole(session.cookies, '__Host-');
    expect((await tlsCall('GET', '/admin/devices', headers)).status).toBe(200);
    expect((await tlsCall('PUT', '/admin/devices/cs-https', headers, { public_key: publicKey() })).status).toBe(201);
    expect((await tlsCall('GET', '/console/session', headers)).json.csrf_token).toBe(session.cookies['__Host-fleet_csrf']);
    // The plain name over https, and the __Host- name over plain http, are not the console's cookie.
    const plainOverHttps = await tlsCall('GET', '/admin/devices', { cookie: `fleet_session=${id}` });
    expect([plainOverHttps.status, plainOverHttps.json.error]).toEqual([401, 'missing_token']);
    const hostOverHttp = await call(cloud.url, 'GET', '/admin/devices', { cookie: `__Host-fleet_session=${id}` });
    expect([hostOverHttp.status, hostOverHttp.json.error]).toEqual([401, 'missing_token']);

    const logout = await tlsCall('DELETE', '/console/session', headers);
    expect(logout.status).toBe(204);
    expect(logout.setCookies).toEqual(['__Host-fleet_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure', '__Host-fleet_csrf=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure']);
    expect((await tlsCall('GET', '/admin/devices', headers)).json.error).toBe('session_expired');
  });

  it('X-Forwarded-Proto does not make plain http https (the cloud trusts no proxy header); an https PUBLIC_URL does', async () => {
    const spoofed = await login(cloud.url, await token(), { 'x-forwarded-proto': 'https' });
    expect(spoofed.setCookies.map((c) => c.split('=', 1)[0])).toEqual(['fleet_session', 'fleet_csrf']);
    expect(spoofed.setCookies.join('\n')).not.toContain('Secure');

    const behindProxy = await startTestCloud({ store, env: { PUBLIC_URL: 'https://ops.example' } });
    try {
      const session = await login(behindProxy.url, await token());
      expect(session.setCookies.map((c) => c.split('=', 1)[0])).toEqual(['__Host-fleet_session', '__Host-fleet_csrf']);
      expect(session.setCookies.every((c) => c.endsWith('; Secure'))).toBe(true);
      expect((await call(behindProxy.url, 'GET', '/admin/devices', asConsole(session.cookies, '__Host-'))).status).toBe(200);
    } finally {
      await behindProxy.close();
    }
  });
});
