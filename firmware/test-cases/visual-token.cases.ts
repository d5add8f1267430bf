// The visual-token (spec 5 for /api/cloud-backup; docs/firmware-visual-token.md): what a login
// answers, its sliding 30-minute lifetime, the two 401 codes, the admin password rules and how it is
// kept (an HMAC under the fuse key, never the password), and the cap on live tokens.
import { concatBytes, utf8Encode } from '../src/core/bytes.ts';
import { deepEqual, equal, ok, rejects, type TestCase } from './assert.ts';
import { ADMIN_PASSWORD, bench, board, call } from './fixtures.ts';

async function controller() {
  const b = bench();
  const c = board(b, { role: 'controller' });
  await c.device.boot();
  return { b, c };
}

const login = (c: Awaited<ReturnType<typeof controller>>['c'], password: unknown = ADMIN_PASSWORD) => call(c, 'POST', '/api/login', { body: { password } });
const status = (c: Awaited<ReturnType<typeof controller>>['c'], token?: string) => call(c, 'GET', '/api/status', { headers: token === undefined ? {} : { 'visual-token': token } });

export const visualTokenCases: TestCase[] = [
  {
    name: 'login answers a 128-bit hex token valid 1800 s, sliding: used every 29 min it lives on, idle 30 min it is invalid_visual_token',
    async run() {
      const { b, c } = await controller();
      const r = await login(c);
      equal(r.status, 200, 'login');
      ok(/^[0-9a-f]{32}$/.test(r.json.token), `a 32-hex-digit token (${r.json.token})`);
      equal(r.json.expires_in, 1800, 'expires_in');
      for (let i = 1; i <= 3; i++) {
        await b.clock.advance(29 * 60_000);
        equal((await status(c, r.json.token)).status, 200, `used at ${29 * i} min`);
      }
      await b.clock.advance(30 * 60_000 - 1);
      equal((await status(c, r.json.token)).status, 200, '1 ms before its expiry');
      await b.clock.advance(30 * 60_000);
      const late = await status(c, r.json.token);
      equal(late.status, 401, 'idle for 30 minutes');
      deepEqual([late.json.error, late.json.message], ['invalid_visual_token', 'The visual-token is not valid or has expired'], 'the code and message');
    },
  },
  {
    name: 'a token issued before the clock is set lives on when SNTP sets it (expiries count in uptime, not wall time)',
    async run() {
      const { b, c } = await controller();
      b.clock.isSynchronized = false;
      b.clock.setWall(0); // a board's clock before SNTP: the epoch at boot
      const token = (await login(c)).json.token as string;
      b.clock.setWall(Date.UTC(2026, 10, 25));
      b.clock.isSynchronized = true;
      equal((await status(c, token)).status, 200, 'after the clock jumped 56 years');
      await b.clock.advance(30 * 60_000);
      equal((await status(c, token)).status, 401, 'idle for 30 minutes of uptime');
    },
  },
  {
    name: 'no visual-token is 401 missing_visual_token; a wrong, truncated or extended one 401 invalid_visual_token',
    async run() {
      const { c } = await controller();
      const token = (await login(c)).json.token as string;
      for (const t of [undefined, '']) {
        const r = await status(c, t);
        deepEqual([r.status, r.json.error, r.json.message], [401, 'missing_visual_token', 'A visual-token header is required'], `header ${JSON.stringify(t)}`);
      }
      for (const t of ['0'.repeat(32), token.slice(0, -1), `${token}0`, token.toUpperCase()]) {
        const r = await status(c, t);
        deepEqual([r.status, r.json.error], [401, 'invalid_visual_token'], t);
      }
      equal((await status(c, token)).status, 200, 'the real one');
    },
  },
  {
    name: 'the admin password: 8 to 128 characters; kept as HMAC(fuse key, "admin-password-v1\\0" || password); a new one voids every token',
    async run() {
      const { c } = await controller();
      const token = (await login(c)).json.token as string;
      for (const bad of ['1234567', 'x'.repeat(129)]) {
        await rejects(async () => c.device.visual.setPassword(bad), /invalid_password/, `${bad.length} characters`);
      }
      equal((await status(c, token)).status, 200, 'a refused password changes nothing');
      c.device.visual.setPassword('12345678');
      const stored = c.storage.read('/config/admin-password', 0, 64);
      deepEqual(stored, c.hal.fuse.hmac(concatBytes(utf8Encode('admin-password-v1\u0000'), utf8Encode('12345678'))), 'the stored digest');
      equal((await status(c, token)).status, 401, 'the old token is void');
      equal((await login(c)).status, 401, 'the old password no longer works');
      equal((await login(c, '12345678')).status, 200, 'the new one does');
      c.device.visual.setPassword('y'.repeat(128));
      equal((await login(c, 'y'.repeat(128))).status, 200, '128 characters');
      for (const wrong of [123, null, ['y'.repeat(128)], 'y'.repeat(127)]) {
        const r = await login(c, wrong);
        deepEqual([r.status, r.json.error, r.json.message], [401, 'invalid_password', 'The password is not valid'], JSON.stringify(wrong));
      }
    },
  },
  {
    name: 'a board with no admin password refuses every login',
    async run() {
      const c = board(bench(), { role: 'controller', device: { initialAdminPassword: '' } });
      await c.device.boot();
      equal(c.device.visual.hasPassword(), false, 'no password');
      for (const p of ['', ADMIN_PASSWORD]) equal((await login(c, p)).status, 401, JSON.stringify(p));
    },
  },
  {
    name: 'at most 8 live tokens: a ninth login forgets the one closest to expiry, the others keep working',
    async run() {
      const { b, c } = await controller();
      const tokens: string[] = [];
      for (let i = 0; i < 8; i++) {
        tokens.push((await login(c)).json.token);
        await b.clock.advance(1000);
      }
      // Token 0 is used now, so token 1 is the closest to expiry.
      equal((await status(c, tokens[0])).status, 200, 'token 0 used');
      const ninth = (await login(c)).json.token as string;
      equal((await status(c, tokens[1])).status, 401, 'token 1 forgotten');
      for (const t of [tokens[0]!, ...tokens.slice(2), ninth]) equal((await status(c, t)).status, 200, `token ${tokens.indexOf(t)} kept`);
    },
  },
  {
    name: 'GET /api/events: the newest 16 event-log entries, oldest first, behind the visual-token',
    async run() {
      const { c } = await controller();
      for (let i = 0; i < 20; i++) c.device.log(i % 2 ? 'warning' : 'info', 'test', `entry ${i}`);
      const none = await call(c, 'GET', '/api/events');
      deepEqual([none.status, none.json.error], [401, 'missing_visual_token'], 'without a token');
      const token = (await login(c)).json.token as string;
      const r = await call(c, 'GET', '/api/events', { headers: { 'visual-token': token } });
      equal(r.status, 200, 'with a token');
      const events = r.json.events as { time: number; level: string; source: string; message: string }[];
      deepEqual(events.map((e) => e.message), Array.from({ length: 16 }, (_, i) => `entry ${i + 4}`), 'the newest 16, oldest first');
      deepEqual([events[0]!.level, events[1]!.level, events[0]!.source, typeof events[0]!.time], ['info', 'warning', 'test', 'number'], 'level, source and time of each');
    },
  },
];
