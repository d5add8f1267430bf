// Provisioning mode (spec 3.2, 2.5): what the source shows on its OLED and writes to its event log
// at each transition, its status while on, and the transitions that must not happen twice.
import { deepEqual, equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, login, seedSource } from './fixtures.ts';

async function source(clients = 2) {
  const b = bench();
  const s = board(b, { role: 'controller' });
  const client = board(b, { role: 'client' });
  await s.device.boot();
  await seedSource(s, { clients: [client, ...Array.from({ length: clients - 1 }, () => board(b, { role: 'client' }))] });
  const auth = await login(s);
  return { b, s, client, auth };
}

const messages = (tb: { events: { source: string; message: string }[] }, from = 0) => tb.events.slice(from).filter((e) => e.source === 'provisioning').map((e) => e.message);

export const modeCases: TestCase[] = [
  {
    name: 'enable: the OLED says "Provisioning on" with the SSID, MAC count and minutes; the log says it; the status counts down',
    async run() {
      const { b, s, auth } = await source(2);
      const before = s.events.length;
      const on = await call(s, 'PUT', '/api/provisioning', { headers: auth });
      deepEqual(s.display.lines, ['Provisioning on', 'Device-Provisioning', '2 MACs, 5 min'], 'OLED');
      deepEqual(messages(s, before), ['provisioning mode on: 2 MACs allowed, 300 s'], 'event log');
      deepEqual(
        on.json,
        { active: true, state: 'enabled', ssid: 'Device-Provisioning', password: on.json.password, bssid: s.radio.softApBssid(), expires_in: 300, allowlist_size: 2 },
        'the status',
      );
      await b.clock.advance(100_400);
      const later = await call(s, 'GET', '/api/provisioning', { headers: auth });
      equal(later.json.expires_in, 200, 'expires_in counts down in seconds');
      // Enabling again while on changes nothing: same session, same expiry, no second AP start.
      const again = await call(s, 'PUT', '/api/provisioning', { headers: auth });
      equal(again.status, 200, 'enable while on');
      equal(again.json.expires_in, 200, 'the expiry is not reset');
      equal(messages(s, before).length, 1, 'not logged twice');
      await b.clock.advance(199_600);
      equal(b.air.aps.size, 0, 'off at the first session\'s 5 minutes');
    },
  },
  {
    name: 'disable: the OLED says "Provisioning off" and why, logged once; disabling again does nothing',
    async run() {
      const { s, auth } = await source(1);
      await call(s, 'PUT', '/api/provisioning', { headers: auth });
      const before = s.events.length;
      await call(s, 'DELETE', '/api/provisioning', { headers: auth });
      deepEqual(s.display.lines, ['Provisioning off', 'request'], 'OLED');
      deepEqual(messages(s, before), ['provisioning mode off: request'], 'event log');
      await s.device.mode.disable('console');
      deepEqual(messages(s, before), ['provisioning mode off: request'], 'a second disable does nothing');
      deepEqual(s.device.mode.status(), { active: false, state: 'disabled', last_stop_reason: 'request' }, 'the reason of the first stays');
      deepEqual(await s.device.console.dispatch('prov on').then(() => s.device.mode.status().active), true, 'the console enables it');
    },
  },
  {
    name: 'an allowed station is logged as associated and the mode stays on; a refused one gets the OLED warning naming it',
    async run() {
      const { b, s, client, auth } = await source(1);
      const on = (await call(s, 'PUT', '/api/provisioning', { headers: auth })).json;
      const before = s.events.length;
      await client.hal.radio.connect({ ssid: on.ssid, password: on.password, timeoutMs: 10_000 });
      deepEqual(messages(s, before), [`station ${client.identity.wifiMac} associated`], 'logged');
      ok(s.device.mode.active, 'still on');
      deepEqual(s.display.lines, ['Provisioning on', 'Device-Provisioning', '1 MACs, 5 min'], 'the OLED unchanged');
      await client.hal.radio.disconnect();
      const stranger = board(b, { role: 'client' });
      await stranger.hal.radio.connect({ ssid: on.ssid, password: on.password, timeoutMs: 10_000 }).catch(() => undefined);
      for (let i = 0; i < 20; i++) await Promise.resolve();
      deepEqual(s.display.lines, ['Prov: MAC refused', stranger.identity.wifiMac, 'SoftAP stopped'], 'the OLED warning stays (no "Provisioning off" over it)');
      ok(messages(s, before).includes(`station ${stranger.identity.wifiMac} is not in the allowlist: SoftAP shut down`), 'the warning in the log');
      deepEqual(s.device.mode.status(), { active: false, state: 'disabled', last_stop_reason: 'mac_not_allowed' }, 'off, and why');
    },
  },
  {
    name: 'two enables at once start one SoftAP; a debug-length mode shows 30 min on the OLED',
    async run() {
      const { b, s } = await source(1);
      let starts = 0;
      const start = s.hal.radio.startSoftAp.bind(s.hal.radio);
      s.hal.radio.startSoftAp = async (c) => {
        starts++;
        return start(c);
      };
      const [x, y] = await Promise.all([s.device.mode.enable(), s.device.mode.enable()]);
      equal(starts, 1, 'one AP start');
      equal(y.state === 'enabling' || y.state === 'enabled', true, 'the second call sees the first');
      equal(x.active, true, 'on');
      equal(b.air.aps.size, 1, 'one AP');
      const debug = board(b, { role: 'controller', debug: true });
      await debug.device.boot();
      await debug.device.mode.enable();
      deepEqual(debug.display.lines, ['Provisioning on', 'Device-Provisioning', '0 MACs, 30 min'], 'debug OLED');
    },
  },
  {
    name: 'a SoftAP that cannot start leaves the mode disabled (and it can be enabled later)',
    async run() {
      const { s, auth } = await source(1);
      const start = s.hal.radio.startSoftAp.bind(s.hal.radio);
      s.hal.radio.startSoftAp = async () => {
        throw new Error('radio busy');
      };
      const r = await call(s, 'PUT', '/api/provisioning', { headers: auth });
      ok(r.status >= 500, `an error (got ${r.status})`);
      deepEqual(s.device.mode.status(), { active: false, state: 'disabled' }, 'disabled, not stuck in enabling');
      s.hal.radio.startSoftAp = start;
      equal((await call(s, 'PUT', '/api/provisioning', { headers: auth })).status, 200, 'enabled afterwards');
    },
  },
];
