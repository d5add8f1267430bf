// The client provisioning procedure (spec 3.5) and normal mode: Wi-Fi, then MQTT.
import { equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, clientConfig, login, seedSource, TEST_CA_PEM } from './fixtures.ts';
import { REBOOT_GRACE_MS } from '../src/core/reboot.ts';

export const clientCases: TestCase[] = [
  {
    name: 'an unprovisioned client retries on 404, then gets its configuration and reboots into Wi-Fi + MQTT',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller' });
      const client = board(b, { role: 'client', brokers: new Set(['broker.local:8883']) });
      await source.device.boot();
      const auth = await login(source);
      // The client's MAC is registered (so it may associate) but under a mistyped UUID.
      equal((await call(source, 'PUT', '/api/clients/mistyped-uuid', { headers: auth, body: clientConfig(client.identity.wifiMac) })).status, 201, 'the mistyped record');
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const first = await client.device.boot();
      ok(first.role === 'client' && first.provisioning === 'unknown_uuid', `unknown_uuid first (got ${JSON.stringify(first)})`);
      // The configurator registers the client under its UUID; the next scan cycle (10 s) succeeds.
      await seedSource(source, { clients: [client] });
      await b.clock.advance(10_000);
      ok(client.consoleOut.some((l) => l.includes('"result":"provisioned"')), 'provisioned on the next cycle');
      equal(client.radio.txPowerDbm, 2, 'lowest TX power while provisioning');
      await b.clock.advance(REBOOT_GRACE_MS);
      equal(client.reboots[0], 'provisioned', 'rebooted');
      // Normal mode with only the configuration received.
      b.air.aps.clear();
      await b.air.aps.set('AA:AA:AA:AA:AA:01', { radio: source.radio, config: { ssid: 'plant-floor', auth: 'wpa2-psk', password: 'wifi-secret-123', txPowerDbm: 20, maxStations: 10 }, bssid: 'AA:AA:AA:AA:AA:01', station: null });
      const normal = await client.device.boot();
      ok(normal.role === 'client' && normal.normal === 'mqtt_connected', `MQTT connected (got ${JSON.stringify(normal)})`);
      equal(client.mqttSessions[0]?.host, 'broker.local', 'broker from the configuration');
      equal(client.mqttSessions[0]?.ca, TEST_CA_PEM, 'MQTT over TLS with the CA certificate from the configuration');
    },
  },
  {
    name: 'mqtt.tls false selects a plaintext broker (the CA is still required, not sent)',
    async run() {
      const b = bench();
      const client = board(b, { role: 'client', brokers: new Set(['127.0.0.1:1883']) });
      client.device.records.put('clients', client.identity.uuid, JSON.stringify({ ...clientConfig(client.identity.wifiMac), mqtt: { host: '127.0.0.1', port: 1883, tls: false } }));
      b.air.aps.set('AA:AA:AA:AA:AA:01', { radio: client.radio, config: { ssid: 'plant-floor', auth: 'wpa2-psk', password: 'wifi-secret-123', txPowerDbm: 20, maxStations: 10 }, bssid: 'AA:AA:AA:AA:AA:01', station: null });
      const normal = await client.device.boot();
      ok(normal.role === 'client' && normal.normal === 'mqtt_connected', `MQTT connected (got ${JSON.stringify(normal)})`);
      equal(client.mqttSessions[0]?.ca, undefined, 'no TLS');
    },
  },
  {
    name: 'a client serves its local API (the shared /backup endpoints) on its Wi-Fi station interface, not on a SoftAP it does not have',
    async run() {
      const b = bench();
      const client = board(b, { role: 'client' });
      await client.device.boot();
      ok(client.listeners.has('station'), 'a station listener');
      ok(!client.listeners.has('softap') && !client.listeners.has('ethernet'), 'no SoftAP or Ethernet listener');
      const via = (method: string, path: string, o: { headers?: Record<string, string>; body?: string } = {}) =>
        client.listeners.get('station')!({ method, path, query: {}, headers: { 'content-length': String(o.body?.length ?? 0), ...o.headers }, iface: 'station', body: { read: async () => null } }).then((r) => r.status);
      const auth = await login(client);
      equal(await via('HEAD', '/backup', { headers: auth }), 404, 'HEAD /backup: none yet');
      equal((await call(client, 'PUT', '/backup', { iface: 'station', headers: auth, body: '{"scene":1}' })).status, 200, 'PUT /backup');
      const got = await call(client, 'GET', '/backup', { iface: 'station', headers: auth });
      equal(got.status, 200, 'GET /backup');
      equal(got.text, '{"scene":1}', 'the backup');
      equal(await via('GET', '/backup', {}), 401, 'a visual-token is needed');
      equal(await via('GET', '/backup', { headers: { 'provisioning-token': 'x'.repeat(32) } }), 403, 'a provisioning-token is refused off the SoftAP');
    },
  },
];
