// The client provisioning procedure (spec 3.5) and normal mode: Wi-Fi, then MQTT.
import { equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, login, seedSource } from './fixtures.ts';

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
      await call(source, 'PUT', '/api/clients/mistyped-uuid', { headers: auth, body: { mac: client.identity.wifiMac } });
      await call(source, 'PUT', '/api/provisioning', { headers: auth });
      const first = await client.device.boot();
      ok(first.role === 'client' && first.provisioning === 'unknown_uuid', `unknown_uuid first (got ${JSON.stringify(first)})`);
      // The configurator registers the client under its UUID; the next scan cycle (10 s) succeeds.
      await seedSource(source, { clients: [client] });
      await b.clock.advance(10_000);
      ok(client.consoleOut.some((l) => l.includes('"result":"provisioned"')), 'provisioned on the next cycle');
      equal(client.radio.txPowerDbm, 2, 'lowest TX power while provisioning');
      await b.clock.advance(1);
      equal(client.reboots[0], 'provisioned', 'rebooted');
      // Normal mode with only the configuration received.
      b.air.aps.clear();
      await b.air.aps.set('AA:AA:AA:AA:AA:01', { radio: source.radio, config: { ssid: 'plant-floor', password: 'wifi-secret-123', txPowerDbm: 20, maxStations: 10 }, bssid: 'AA:AA:AA:AA:AA:01', station: null });
      const normal = await client.device.boot();
      ok(normal.role === 'client' && normal.normal === 'mqtt_connected', `MQTT connected (got ${JSON.stringify(normal)})`);
      equal(client.mqttSessions[0]?.host, 'broker.local', 'broker from the configuration');
      ok(typeof client.mqttSessions[0]?.ca === 'string', 'CA certificate from the configuration');
    },
  },
];
