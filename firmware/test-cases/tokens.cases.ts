// Provisioning mode and tokens (spec 2.4, 2.5, 3.2, 3.3, 5.2-5.5; DESIGN.md section 5).
import { createPureJsCrypto } from '../src/core/crypto/pure.ts';
import { ProvisioningTokens } from '../src/core/provisioning/tokens.ts';
import { seededRandom } from '../src/platform/memory/board.ts';
import { ManualClock } from '../src/platform/memory/clock.ts';
import { deepEqual, equal, ok, rejects, type TestCase } from './assert.ts';
import { bench, board, call, login, seedSource, T0, type TestBoard } from './fixtures.ts';

async function sourceWithClient() {
  const b = bench();
  const source = board(b, { role: 'controller' });
  const client = board(b, { role: 'client' });
  await source.device.boot();
  await seedSource(source, { clients: [client], controllers: 1 });
  const auth = await login(source);
  return { b, source, client, auth };
}

function exchange(source: TestBoard, uuid: string, mac: string, iface: 'softap' | 'ethernet' = 'softap') {
  return call(source, 'POST', '/api/provisioning/token', { iface, body: { uuid, mac }, stationMac: iface === 'softap' ? mac : undefined });
}

export const tokenCases: TestCase[] = [
  {
    name: 'enabling provisioning mode starts the WPA2 SoftAP at 2 dBm with the BSSID-derived password',
    async run() {
      const { source, auth, b } = await sourceWithClient();
      equal((await call(source, 'GET', '/api/provisioning', { headers: auth })).status, 409, 'status while off');
      const on = await call(source, 'PUT', '/api/provisioning', { headers: auth });
      equal(on.status, 200, 'enable');
      equal(on.json.ssid, 'Device-Provisioning', 'ssid');
      ok(/^[0-9A-F]{12}$/.test(on.json.password), 'a 12-hex-digit password');
      const ap = [...b.air.aps.values()][0]!;
      equal(ap.config.txPowerDbm, 2, 'TX power');
      equal(ap.config.maxStations, 1, 'one station');
      equal(ap.config.password, on.json.password, 'the AP uses that password');
      equal((await call(source, 'GET', '/api/provisioning', { headers: auth })).json.password, on.json.password, 'GET shows it');
    },
  },
  {
    name: 'token exchange: 409 while the mode is off, 403 on Ethernet, 404 for an unknown UUID, 200 otherwise',
    async run() {
      const { source, client, auth } = await sourceWithClient();
      equal((await exchange(source, client.identity.uuid, client.identity.wifiMac)).status, 409, 'mode off');
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      equal((await exchange(source, client.identity.uuid, client.identity.wifiMac, 'ethernet')).status, 403, 'via Ethernet');
      equal((await exchange(source, 'nobody', client.identity.wifiMac)).status, 404, 'unknown UUID');
      equal((await exchange(source, client.identity.uuid, '02:00:00:00:00:99')).status, 403, 'another MAC than the record');
      equal((await call(source, 'POST', '/api/provisioning/token', { iface: 'softap', body: { uuid: client.identity.uuid } })).status, 400, 'no MAC');
      const ex = await exchange(source, client.identity.uuid, client.identity.wifiMac);
      equal(ex.status, 200, 'exchange');
      ok(typeof ex.json.token === 'string' && ex.json.token.length >= 32, 'a token');
      equal(ex.json.expires_in, 300, 'production lifetime');
    },
  },
  {
    name: 'the provisioning-token header is refused with 403 on Ethernet, on every route',
    async run() {
      const { source, client, auth } = await sourceWithClient();
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const token = (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token;
      for (const path of [`/api/clients/${client.identity.uuid}`, '/api/controllers', '/backup']) {
        equal((await call(source, 'GET', path, { headers: { 'provisioning-token': token } })).status, 403, path);
      }
      const viaSoftAp = await call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': token } });
      equal(viaSoftAp.status, 200, 'via the SoftAP');
      equal(viaSoftAp.json.mac, client.identity.wifiMac, 'the client record');
    },
  },
  {
    name: 'one token per MAC: a new exchange invalidates the previous token',
    async run() {
      const { source, client, auth } = await sourceWithClient();
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const first = (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token;
      const second = (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token;
      const get = (t: string) => call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': t } });
      equal((await get(first)).status, 401, 'old token');
      equal((await get(second)).status, 200, 'new token');
      equal(source.device.tokens.active(), 1, 'active tokens');
    },
  },
  {
    name: 'ProvisioningTokens in virtual time: used every 0.9 TTL it outlives 3 TTLs; idle for more than a TTL it is provisioning_token_expired',
    async run() {
      const clock = new ManualClock(T0);
      const ttl = 300_000;
      const tokens = new ProvisioningTokens(createPureJsCrypto(seededRandom(7)), () => clock.now(), ttl);
      const t = tokens.issue('24:0A:C4:00:00:01', 'lamp-1', 'clients');
      equal(t.expiresAtMs, T0 + ttl, 'first expiry');
      for (let i = 1; i <= 4; i++) {
        await clock.advance(0.9 * ttl);
        equal(tokens.authenticate(t.token, '24:0A:C4:00:00:01').uuid, 'lamp-1', `use ${i} at ${0.9 * i} TTL`);
      }
      ok(clock.now() - T0 > 3 * ttl, 'beyond three lifetimes');
      await clock.advance(ttl);
      await rejects(async () => tokens.authenticate(t.token, '24:0A:C4:00:00:01'), /DeviceError .* provisioning_token_expired/, 'idle for exactly one TTL');
      equal(tokens.active(), 0, 'the expired token is forgotten');
      await rejects(async () => tokens.authenticate(t.token, '24:0A:C4:00:00:01'), /invalid_provisioning_token/, 'and then unknown');
      const u = tokens.issue('24:0A:C4:00:00:02', 'lamp-2', 'clients');
      await clock.advance(ttl - 1);
      equal(tokens.authenticate(u.token, undefined).uuid, 'lamp-2', 'one millisecond before expiry');
      await clock.advance(ttl + 1);
      await rejects(async () => tokens.authenticate(u.token, undefined), /provisioning_token_expired/, 'idle for more than a TTL');
    },
  },
  {
    name: 'ProvisioningTokens: a token presented by another station than the one it was issued to is refused (403)',
    async run() {
      const clock = new ManualClock(T0);
      const tokens = new ProvisioningTokens(createPureJsCrypto(seededRandom(8)), () => clock.now(), 60_000);
      const t = tokens.issue('24:0A:C4:00:00:01', 'lamp-1', 'clients');
      await rejects(async () => tokens.authenticate(t.token, '24:0A:C4:00:00:99'), /DeviceError .* provisioning_token_wrong_station/, 'another station');
      equal(tokens.authenticate(t.token, '24:0A:C4:00:00:01').mac, '24:0A:C4:00:00:01', 'its own station');
    },
  },
  {
    name: 'through the API, with PROVISIONING_TOKEN_TTL (60 s) shorter than the mode (300 s): sliding while used, provisioning_token_expired when idle',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller', device: { settings: { provisioningTokenTtlSeconds: 60 } } });
      const client = board(b, { role: 'client' });
      await source.device.boot();
      await seedSource(source, { clients: [client] });
      const auth = await login(source);
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const ex = await exchange(source, client.identity.uuid, client.identity.wifiMac);
      equal(ex.json.expires_in, 60, 'the token lifetime is announced');
      const get = () => call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': ex.json.token } });
      for (let i = 1; i <= 3; i++) {
        await b.clock.advance(54_000);
        equal((await get()).status, 200, `used at ${54 * i} s`);
      }
      await b.clock.advance(60_000);
      ok(source.device.mode.active, 'the mode is still on (222 s of 300)');
      const late = await get();
      equal(late.status, 401, 'idle for 60 s');
      equal(late.json.error, 'provisioning_token_expired', 'the exact code');
      const other = await call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token } });
      equal(other.status, 200, 'a new exchange works');
    },
  },
  {
    name: 'through the API: a token presented from another station MAC than it was issued to is 403 provisioning_token_wrong_station',
    async run() {
      const { source, client, auth } = await sourceWithClient();
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const token = (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token;
      const r = await call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: '02:00:00:00:00:77', headers: { 'provisioning-token': token } });
      equal(r.status, 403, 'another station');
      equal(r.json.error, 'provisioning_token_wrong_station', 'code');
    },
  },
  {
    name: 'GET /api/provisioning while off answers 409 with why the mode last stopped (timeout, request, console, mac_not_allowed)',
    async run() {
      const { source, auth, b } = await sourceWithClient();
      const get = () => call(source, 'GET', '/api/provisioning', { headers: auth });
      const never = await get();
      equal(never.status, 409, 'never enabled');
      deepEqual(never.json.details, { state: 'disabled', last_stop_reason: null }, 'never enabled: no reason');
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      await b.clock.advance(300_000);
      const timedOut = await get();
      equal(timedOut.status, 409, 'after the time-out');
      equal(timedOut.json.details.last_stop_reason, 'timeout', 'time-out');
      ok(timedOut.json.message.includes('timeout'), 'the message says it too');
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      equal((await call(source, 'DELETE', '/api/provisioning', { headers: auth })).status, 204, 'disable');
      equal((await get()).json.details.last_stop_reason, 'request', 'request');
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      await source.device.console.dispatch('prov off');
      equal((await get()).json.details.last_stop_reason, 'console', 'console');
      const on = (await call(source, 'PUT', '/api/provisioning', { headers: auth })).json;
      const stranger = board(b, { role: 'client' });
      await stranger.hal.radio.connect({ ssid: on.ssid, password: on.password, timeoutMs: 10_000 }).catch(() => undefined);
      for (let i = 0; i < 20; i++) await Promise.resolve();
      equal((await get()).json.details.last_stop_reason, 'mac_not_allowed', 'a refused station');
      // Token routes say it too.
      const viaToken = await call(source, 'GET', '/api/controllers', { iface: 'softap', headers: { 'provisioning-token': 'x'.repeat(32) } });
      equal(viaToken.json.details.last_stop_reason, 'mac_not_allowed', 'on a token route');
    },
  },
  {
    name: 'DELETE /api/provisioning disables the mode: 204, SoftAP down, tokens void (409), GET 409; needs the visual-token; 409 when already off',
    async run() {
      const { source, client, auth, b } = await sourceWithClient();
      equal((await call(source, 'DELETE', '/api/provisioning', { headers: auth })).status, 409, 'nothing to disable yet');
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const token = (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token;
      equal((await call(source, 'DELETE', '/api/provisioning')).status, 401, 'no visual-token');
      const viaToken = await call(source, 'DELETE', '/api/provisioning', { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': token } });
      equal(viaToken.status, 403, 'a provisioning token cannot disable the mode');
      equal(b.air.aps.size, 1, 'still on after the refused requests');
      const off = await call(source, 'DELETE', '/api/provisioning', { headers: auth });
      equal(off.status, 204, 'disabled');
      equal(off.bytes.length, 0, 'no body');
      equal(b.air.aps.size, 0, 'SoftAP shut down');
      ok(!source.device.mode.active, 'mode off');
      equal(source.device.tokens.active(), 0, 'tokens forgotten');
      const read = await call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': token } });
      equal(read.status, 409, 'the old token meets a mode that is off');
      const status = await call(source, 'GET', '/api/provisioning', { headers: auth });
      equal(status.status, 409, 'GET while off');
      equal(status.json.details.last_stop_reason, 'request', 'stopped by request');
      equal((await call(source, 'DELETE', '/api/provisioning', { headers: auth })).status, 409, 'already off');
      // Its time-out no longer fires later on a mode enabled again.
      await b.clock.advance(100_000);
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      await b.clock.advance(299_999);
      equal(b.air.aps.size, 1, 'the new session runs its own 5 minutes');
    },
  },
  {
    name: 'the mode times out after PROVISIONING_MODE_TTL and the SoftAP stops',
    async run() {
      const { source, auth, b } = await sourceWithClient();
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      equal(b.air.aps.size, 1, 'AP up');
      await b.clock.advance(300_000);
      equal(b.air.aps.size, 0, 'AP down after 5 minutes');
      equal((await call(source, 'GET', '/api/provisioning', { headers: auth })).status, 409, 'mode off');
    },
  },
  {
    name: 'a station outside the allowlist shuts the SoftAP down with an OLED warning',
    async run() {
      const { source, auth, b } = await sourceWithClient();
      const stranger = board(b, { role: 'client' });
      const on = (await call(source, 'PUT', '/api/provisioning', { headers: auth })).json;
      let failed = false;
      await stranger.hal.radio.connect({ ssid: on.ssid, password: on.password, timeoutMs: 10_000 }).catch(() => (failed = true));
      ok(failed, 'the association to fail');
      equal(b.air.aps.size, 0, 'SoftAP shut down');
      ok(source.display.lines.join(' ').includes(stranger.identity.wifiMac), 'the OLED names the MAC');
      ok(source.events.some((e) => e.level === 'warning' && e.message.includes('allowlist')), 'a warning in the event log');
    },
  },
  {
    name: 'a client token reads only its own record; the token compare is by value, not prefix',
    async run() {
      const { source, client, auth } = await sourceWithClient();
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const token = (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token as string;
      const h = { 'provisioning-token': token };
      const o = { iface: 'softap' as const, stationMac: client.identity.wifiMac };
      equal((await call(source, 'GET', '/api/controllers', { ...o, headers: h })).status, 403, 'controller list');
      equal((await call(source, 'GET', '/backup', { ...o, headers: h })).status, 403, 'backup');
      equal((await call(source, 'GET', `/api/clients/${client.identity.uuid}`, { ...o, headers: { 'provisioning-token': token.slice(0, -1) } })).status, 401, 'truncated token');
      equal((await call(source, 'PUT', '/api/provisioning', { ...o, headers: h })).status, 403, 'a token cannot enable the mode');
    },
  },
];
