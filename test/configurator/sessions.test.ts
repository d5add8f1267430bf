// The configurator's browser sessions over real sockets (docs/configurator-security.md): only a
// log-in from the page opens one; requests that do not log in (another site's, a cookie-less
// process's) neither open one nor push the installer's out; the bound refuses a newcomer instead of
// evicting anyone; a controller's token is forgotten when its address changes. Controllers are
// stand-ins on 127.0.0.1 that take any password and record the tokens they are sent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigurator, type RunningConfigurator } from '../../configurator/server/app.ts';
import { SESSION_LIMITS, Sessions } from '../../configurator/server/sessions.ts';
import { startStandInController, type StandInController } from './stand-in-controller.ts';

let dir: string;
let running: RunningConfigurator;
let hall: StandInController;
let hallId: number;

/** One browser: its own cookie, the page's header on every API request. */
class Browser {
  cookie = '';
  async call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any; setCookie: string | null }> {
    const res = await fetch(running.url + path.replace(/^\//, ''), {
      method,
      headers: { 'x-fleet-page': '1', ...(this.cookie ? { cookie: this.cookie } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) this.cookie = setCookie.split(';')[0]!;
    const text = await res.text();
    return { status: res.status, json: text && res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined, setCookie };
  }
  logIn(id: number) {
    return this.call('POST', `/api/controllers/${id}/login`, { password: 'any-password' });
  }
  async loggedIn(id: number): Promise<boolean> {
    const s = await this.call('GET', `/api/controllers/${id}/state`);
    expect(s.status).toBe(200);
    return s.json.logged_in;
  }
}

const installer = new Browser();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'configurator-sessions-'));
  running = await startConfigurator({ site: join(dir, 'site.db'), link: { timeoutMs: 2_000 } });
  hall = await startStandInController();
  const added = await installer.call('POST', '/api/controllers', { name: 'Hall', address: hall.url });
  expect(added.status).toBe(201);
  hallId = added.json.id;
});

afterAll(async () => {
  await running?.close();
  await hall?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('what opens a session', () => {
  it('reading and editing the site opens none; the first log-in to a controller opens one, in a Strict HttpOnly cookie', async () => {
    expect(running.sessions.size).toBe(0);
    for (const r of [await installer.call('GET', '/api/site'), await installer.call('GET', `/api/controllers/${hallId}/state`), await installer.call('GET', '/')]) expect(r.setCookie).toBeNull();
    expect(running.sessions.size).toBe(0);
    const login = await installer.logIn(hallId);
    expect(login).toMatchObject({ status: 200, json: { expires_in: 1800 } });
    expect(login.setCookie).toMatch(new RegExp(`^fleet_configurator_${new URL(running.url).port}=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict$`));
    expect(running.sessions.size).toBe(1);
    expect(await installer.loggedIn(hallId)).toBe(true);
  });

  it('40 requests without the cookie (another site\'s no-cors requests, a local process) open no session and leave the installer logged in', async () => {
    const url = running.url;
    const other = 'http://127.0.0.6:4000';
    const kinds: (() => Promise<Response>)[] = [
      () => fetch(url),
      () => fetch(`${url}app.js`),
      // What another site's no-cors fetch or form sends: no page header, its own Origin.
      () => fetch(`${url}api/site`, { headers: { origin: other, 'sec-fetch-site': 'cross-site' } }),
      () => fetch(`${url}api/controllers`, { method: 'POST', headers: { origin: other, 'content-type': 'text/plain' }, body: '{"name":"x","address":"http://127.0.0.1:9"}' }),
      () => fetch(`${url}api/controllers/${hallId}/login`, { method: 'POST', headers: { origin: other, 'sec-fetch-site': 'cross-site', 'content-type': 'text/plain' }, body: '{"password":"guess"}' }),
      // A local process that sends the page's header but no cookie.
      () => fetch(`${url}api/site`, { headers: { 'x-fleet-page': '1' } }),
      () => fetch(`${url}api/controllers/${hallId}/state`, { headers: { 'x-fleet-page': '1' } }),
      () => fetch(`${url}api/controllers/${hallId}/logout`, { method: 'POST', headers: { 'x-fleet-page': '1' } }),
    ];
    const statuses = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const res = await kinds[i % kinds.length]!();
      await res.arrayBuffer();
      statuses.add(res.status);
      expect([i, res.headers.get('set-cookie')]).toEqual([i, null]);
    }
    expect([...statuses].sort()).toEqual([200, 204, 403]);
    expect(running.sessions.size).toBe(1);
    expect(await installer.loggedIn(hallId)).toBe(true);
    // The controller was only ever sent the installer's own token.
    expect(new Set(hall.seen.filter((s) => s.token !== null).map((s) => s.token))).toEqual(new Set([hall.issued[0]]));
    expect(running.store.controllers().map((c) => c.name)).toEqual(['Hall']);
  });

  it('the bound is reached only by log-ins, and reaching it refuses the newcomer (503) instead of evicting a live session', async () => {
    const others = Array.from({ length: SESSION_LIMITS.maxSessions - 1 }, () => new Browser());
    for (const b of others) expect((await b.logIn(hallId)).status).toBe(200);
    expect(running.sessions.size).toBe(SESSION_LIMITS.maxSessions);
    const issuedBefore = hall.issued.length;
    const late = new Browser();
    const refused = await late.logIn(hallId);
    expect(refused).toMatchObject({
      status: 503,
      setCookie: null,
      json: {
        error: 'too_many_sessions',
        message: `This configurator already keeps the log-ins of ${SESSION_LIMITS.maxSessions} browsers, the most it keeps: log out of the controllers in a browser no longer used (or restart the configurator), then log in again`,
      },
    });
    // Refused before the controller was asked for a token.
    expect(hall.issued.length).toBe(issuedBefore);
    expect(await installer.loggedIn(hallId)).toBe(true);
    for (const b of others) expect(await b.loggedIn(hallId)).toBe(true);
    // A browser that logs out of its only controller ends its session (its cookie is cleared): room for one more.
    const out = await others[0]!.call('POST', `/api/controllers/${hallId}/logout`);
    expect(out.status).toBe(204);
    expect(out.setCookie).toMatch(/^fleet_configurator_\d+=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
    expect(running.sessions.size).toBe(SESSION_LIMITS.maxSessions - 1);
    expect((await late.logIn(hallId)).status).toBe(200);
    expect(await late.loggedIn(hallId)).toBe(true);
    expect(await installer.loggedIn(hallId)).toBe(true);
  });
});

describe('a controller\'s address', () => {
  it('changing it forgets every browser\'s token for that controller: the new host never receives the old host\'s token', async () => {
    const annex = await startStandInController();
    try {
      // A rename at the same address keeps the log-in.
      expect((await installer.call('PUT', `/api/controllers/${hallId}`, { name: 'Main hall', address: `${hall.url}/` })).status).toBe(200);
      expect(await installer.loggedIn(hallId)).toBe(true);
      const moved = await installer.call('PUT', `/api/controllers/${hallId}`, { name: 'Main hall', address: annex.url });
      expect(moved).toMatchObject({ status: 200, json: { address: annex.url } });
      const state = await installer.call('GET', `/api/controllers/${hallId}/state`);
      await installer.call('POST', `/api/controllers/${hallId}/deploy`);
      expect(annex.seen.length).toBeGreaterThan(0);
      expect(annex.seen.filter((s) => s.token !== null)).toEqual([]);
      expect(state).toMatchObject({ status: 200, json: { logged_in: false, reachable: true } });
      expect(await installer.call('POST', `/api/controllers/${hallId}/deploy`)).toMatchObject({ status: 401, json: { error: 'not_logged_in', message: 'Log in to Main hall first (its admin password)' } });
      // Logging in again there works, with the new host's own token.
      expect((await installer.logIn(hallId)).status).toBe(200);
      expect(await installer.loggedIn(hallId)).toBe(true);
      expect(new Set(annex.seen.filter((s) => s.token !== null).map((s) => s.token))).toEqual(new Set(annex.issued));
    } finally {
      await annex.close();
    }
  });
});

describe('the session table', () => {
  it('a session idle longer than idleMs is forgotten, which makes room; a full table refuses and evicts no one', () => {
    let now = 0;
    const table = new Sessions({ maxSessions: 2, idleMs: 1_000 }, () => now);
    const cookieOf = (setCookie: string | undefined) => setCookie!.split(';')[0]!;
    const first = cookieOf(table.keepToken(undefined, 1, 'aa'.repeat(16)));
    now = 600;
    const second = cookieOf(table.keepToken(undefined, 1, 'bb'.repeat(16)));
    expect(() => table.keepToken(undefined, 1, 'cc'.repeat(16))).toThrow(expect.objectContaining({ code: 'too_many_sessions', status: 503 }));
    expect(table.find(first)?.tokens.get(1)).toBe('aa'.repeat(16));
    expect(table.find(second)?.tokens.get(1)).toBe('bb'.repeat(16));
    // The first was seen again at 600, the second at 600: both still live at 1,600, gone after.
    now = 1_600;
    expect(table.size).toBe(2);
    now = 1_601;
    expect(table.find(first)).toBeUndefined();
    expect(table.size).toBe(0);
    expect(table.keepToken(undefined, 1, 'cc'.repeat(16))).toMatch(/^fleet_configurator_0=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
  });
});
