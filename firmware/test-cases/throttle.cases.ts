// Throttled doors (docs/firmware-login-throttle.md): failed logins and failed provisioning token
// exchanges earn a growing back-off, then a lockout, answered 429 with Retry-After without checking
// the attempt; the board keeps serving everything else; the right password works once it ends.
// Virtual time throughout.
import { equal, ok, type TestCase } from './assert.ts';
import { ADMIN_PASSWORD, bench, board, call, login, seedSource, type TestBoard } from './fixtures.ts';

const attempt = (tb: TestBoard, password: string) => call(tb, 'POST', '/api/login', { body: { password } });

/** Counts the fuse HMACs (one per password check) a piece of work makes. */
async function passwordChecks(tb: TestBoard, work: () => Promise<unknown>): Promise<number> {
  const fuse = tb.hal.fuse;
  const real = fuse.hmac;
  let n = 0;
  fuse.hmac = (m) => (n++, real(m));
  try {
    await work();
  } finally {
    fuse.hmac = real;
  }
  return n;
}

async function controller() {
  const b = bench();
  const ctl = board(b, { role: 'controller' });
  await ctl.device.boot();
  return { b, ctl };
}

export const throttleCases: TestCase[] = [
  {
    name: 'login: 5 failures answered at once, then 429 + Retry-After doubling 1 s to 60 s, a 15-minute lockout at 20; the right password is refused meanwhile and works after',
    async run() {
      const { b, ctl } = await controller();
      const auth = await login(ctl);
      for (let i = 1; i <= 5; i++) {
        const r = await attempt(ctl, `wrong-${i}`);
        equal(r.status, 401, `failure ${i}`);
        equal(r.headers['retry-after'], undefined, `no Retry-After on failure ${i}`);
      }
      ok(ctl.events.some((e) => e.level === 'warning' && e.source === 'auth' && e.message.includes('login: 5 failed attempts')), 'the back-off is logged');
      const early = await attempt(ctl, 'wrong-6');
      equal(early.status, 429, 'within the back-off');
      equal(early.headers['retry-after'], '1', 'Retry-After after 5 failures');
      equal(early.json.error, 'too_many_attempts', 'code');
      equal(early.json.details.failed_attempts, 5, 'details');
      let checks = 0;
      checks = await passwordChecks(ctl, async () => equal((await attempt(ctl, ADMIN_PASSWORD)).status, 429, 'the right password within the back-off'));
      equal(checks, 0, 'a refused attempt is not even checked');
      equal((await call(ctl, 'GET', '/api/status', { headers: auth })).status, 200, 'other requests are served meanwhile');
      // Walk the growing delays up to the lockout.
      for (let failures = 5; failures < 20; failures++) {
        const wait = await attempt(ctl, 'wrong');
        equal(wait.status, 429, `refused after ${failures} failures`);
        equal(Number(wait.headers['retry-after']), Math.min(2 ** (failures - 5), 60), `delay after ${failures} failures`);
        await b.clock.advance(Number(wait.headers['retry-after']) * 1000 - 1);
        equal((await attempt(ctl, 'wrong')).status, 429, `still refused 1 ms before the delay after ${failures} failures ends`);
        await b.clock.advance(1);
        equal((await attempt(ctl, 'wrong')).status, 401, `failure ${failures + 1} is checked`);
      }
      const locked = await attempt(ctl, ADMIN_PASSWORD);
      equal(locked.status, 429, 'locked out after 20 failures');
      equal(locked.headers['retry-after'], '900', 'a 15-minute lockout');
      ok(ctl.events.some((e) => e.level === 'warning' && e.message === 'login locked for 900 s after 20 failed attempts in a row'), 'the lockout is in the event log');
      ok(ctl.consoleOut.includes('LOG WARNING auth: login locked for 900 s after 20 failed attempts in a row'), 'and on the console');
      // Hammering during the lockout neither counts nor prolongs it.
      for (let i = 0; i < 30; i++) await attempt(ctl, 'wrong');
      await b.clock.advance(899_000);
      const last = await attempt(ctl, ADMIN_PASSWORD);
      equal(last.status, 429, 'the right password 1 s before the end');
      equal(last.headers['retry-after'], '1', 'one second left');
      equal((await call(ctl, 'GET', '/backup', { headers: auth })).status, 404, 'the board still serves other routes');
      await b.clock.advance(1000);
      const ok1 = await attempt(ctl, ADMIN_PASSWORD);
      equal(ok1.status, 200, 'the right password once the lockout ends');
      equal((await call(ctl, 'GET', '/api/status', { headers: { 'visual-token': ok1.json.token } })).status, 200, 'its token works');
      ok(ctl.events.some((e) => e.level === 'info' && e.message.startsWith('login succeeded after 20 failed attempts in a row')), 'the success after failures is logged');
      // The count starts again.
      for (let i = 1; i <= 5; i++) equal((await attempt(ctl, 'wrong')).status, 401, `fresh failure ${i}`);
      equal((await attempt(ctl, 'wrong')).status, 429, 'and the back-off with it');
    },
  },
  {
    name: 'login: lockouts double from 15 min to 24 h; at 100 failures (NIST SP 800-63B) the login stays shut until the password is set on the console',
    async run() {
      const { b, ctl } = await controller();
      let failures = 0;
      const seen: number[] = [];
      while (failures < 100) {
        const r = await attempt(ctl, 'wrong');
        if (r.status === 429) {
          const s = Number(r.headers['retry-after']);
          if (failures >= 20) seen.push(s);
          await b.clock.advance(s * 1000);
          continue;
        }
        equal(r.status, 401, `failure ${failures + 1}`);
        failures++;
      }
      equal(seen.slice(0, 8).join(','), '900,1800,3600,7200,14400,28800,57600,86400', 'lockouts after 20..27 failures');
      ok(seen.slice(8).every((s) => s === 86_400), 'capped at 24 h');
      const shut = await attempt(ctl, ADMIN_PASSWORD);
      equal(shut.status, 429, 'locked at 100 failures');
      await b.clock.advance(7 * 86_400_000);
      equal((await attempt(ctl, ADMIN_PASSWORD)).status, 429, 'still locked a week later');
      ok(ctl.events.some((e) => e.level === 'error' && e.message.startsWith('login locked after 100 failed attempts')), 'logged as an error');
      await ctl.device.console.dispatch('password a-new-admin-password');
      equal((await attempt(ctl, 'a-new-admin-password')).status, 200, 'a password set on the console opens it again');
    },
  },
  {
    name: 'token exchange: wrong MACs earn the same back-off (429 + Retry-After, the right exchange refused meanwhile); unknown UUIDs do not (spec 3.5 step 4); a new session starts clean',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller' });
      const client = board(b, { role: 'client' });
      await source.device.boot();
      await seedSource(source, { clients: [client] });
      const auth = await login(source);
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const mac = client.identity.wifiMac;
      const uuid = client.identity.uuid;
      const exchange = (m: string, u = uuid) => call(source, 'POST', '/api/provisioning/token', { iface: 'softap', stationMac: m, body: { uuid: u, mac: m } });
      const wrongMac = (i: number) => `02:00:00:00:0F:${i.toString(16).padStart(2, '0').toUpperCase()}`;
      // A client whose record is not registered yet retries at every scan cycle: never throttled.
      for (let i = 1; i <= 12; i++) equal((await exchange(mac, `not-yet-${i}`)).status, 404, `unknown UUID ${i}`);
      for (let i = 1; i <= 5; i++) equal((await exchange(wrongMac(i))).status, 403, `wrong MAC ${i}`);
      const refused = await exchange(mac);
      equal(refused.status, 429, 'the right exchange within the back-off');
      equal(refused.headers['retry-after'], '1', 'Retry-After');
      ok(source.events.some((e) => e.level === 'warning' && e.message.startsWith('provisioning token exchange: 5 failed attempts')), 'logged');
      await b.clock.advance(1000);
      equal((await exchange(mac)).status, 200, 'the right exchange after the delay');
      // Failures again, then a new session (the admin enables the mode again): a clean count.
      for (let i = 1; i <= 6; i++) await exchange(wrongMac(i));
      equal((await exchange(wrongMac(7))).status, 429, 'back-off again');
      await call(source, 'DELETE', '/api/provisioning', { headers: auth });
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      equal((await exchange(wrongMac(8))).status, 403, 'a new session starts clean');
      // Refusals that reveal nothing are not counted: malformed bodies.
      for (let i = 0; i < 10; i++) equal((await call(source, 'POST', '/api/provisioning/token', { iface: 'softap', body: { uuid: 'x' } })).status, 400, 'malformed');
      equal((await exchange(mac)).status, 200, 'not throttled by malformed requests');
    },
  },
];
