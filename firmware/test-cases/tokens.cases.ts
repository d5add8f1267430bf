// Provisioning mode and tokens (spec 2.4, 2.5, 3.2, 3.3, 5.2-5.5; DESIGN.md section 5).
import { equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, login, seedSource, type TestBoard } from './fixtures.ts';

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
    name: 'sliding expiry: each request resets the 5-minute window; an idle token expires',
    async run() {
      const { source, client, auth, b } = await sourceWithClient();
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const token = (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token;
      const get = () => call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': token } });
      await b.clock.advance(240_000);
      equal((await get()).status, 200, 'at 4 min');
      await b.clock.advance(240_000 - 1);
      // 8 minutes after the exchange but 4 after the last use; the mode itself has timed out by now,
      // so re-enable it to look at the token alone.
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      equal((await get()).status, 401, 'the mode restart cleared the tokens');
      const again = (await exchange(source, client.identity.uuid, client.identity.wifiMac)).json.token;
      await b.clock.advance(299_000);
      const g = await call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': again } });
      equal(g.status, 200, 'just inside the window');
      await b.clock.advance(300_000);
      const late = await call(source, 'GET', `/api/clients/${client.identity.uuid}`, { iface: 'softap', stationMac: client.identity.wifiMac, headers: { 'provisioning-token': again } });
      ok(late.status === 401 || late.status === 409, `expired (got ${late.status})`);
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
