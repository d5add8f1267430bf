// What a valid configuration is (docs/firmware-records.md): a client's (spec 2.6, 3.5 step 1),
// checked when a source stores it and at the client's boot; a controller's own configuration
// (spec 3.6 step 1), which keeps a controller set up through the UI from ever being a target.
import { equal, deepEqual, ok, type TestCase } from './assert.ts';
import { bench, board, call, clientConfig, login, seedSource, TEST_CA_PEM } from './fixtures.ts';

const CA_BODY = TEST_CA_PEM.split('\n').filter((l) => l !== '' && !l.startsWith('-----'));

export const configurationCases: TestCase[] = [
  {
    name: 'PUT /api/clients/{uuid} refuses a configuration the client could not use: 400 naming the field',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller' });
      await source.device.boot();
      const auth = await login(source);
      const mac = '02:00:00:C0:00:01';
      const base = clientConfig(mac);
      const put = (body: unknown) => call(source, 'PUT', '/api/clients/lamp-1', { headers: auth, body: body as object });
      const cases: [string, Record<string, unknown>][] = [
        ['wifi', { mac }],
        ['wifi', { ...base, wifi: undefined }],
        ['wifi.ssid', { ...base, wifi: { password: 'wifi-secret-123' } }],
        ['wifi.ssid', { ...base, wifi: { ssid: 'x'.repeat(33), password: 'wifi-secret-123' } }],
        ['wifi.password', { ...base, wifi: { ssid: 'plant-floor', password: 'short' } }],
        ['mqtt', { ...base, mqtt: undefined }],
        ['mqtt.host', { ...base, mqtt: { port: 8883 } }],
        ['mqtt.host', { ...base, mqtt: { host: 'mqtts://broker.local', port: 8883 } }],
        ['mqtt.port', { ...base, mqtt: { host: 'broker.local', port: '8883' } }],
        ['mqtt.port', { ...base, mqtt: { host: 'broker.local', port: 70000 } }],
        ['mqtt.tls', { ...base, mqtt: { host: 'broker.local', port: 1883, tls: 'no' } }],
        ['ca_certificate', { ...base, ca_certificate: undefined }],
        ['ca_certificate', { ...base, ca_certificate: 'any string at all' }],
        ['ca_certificate', { ...base, ca_certificate: `-----BEGIN CERTIFICATE-----\n${'A'.repeat(900)}\n-----END CERTIFICATE-----\n` }],
        ['ca_certificate', { ...base, ca_certificate: `-----BEGIN CERTIFICATE-----\n${CA_BODY.slice(0, -1).join('\n')}\n-----END CERTIFICATE-----\n` }],
        ['ca_certificate', { ...base, ca_certificate: `-----BEGIN CERTIFICATE-----\n${CA_BODY.join('\n').replace('M', '*')}\n-----END CERTIFICATE-----\n` }],
        ['ca_certificate', { ...base, ca_certificate: `${TEST_CA_PEM}trailing words\n` }],
      ];
      for (const [field, body] of cases) {
        const r = await put(body);
        equal(r.status, 400, `${field}: ${JSON.stringify(body).slice(0, 120)}`);
        equal(r.json.details?.field, field, `the field named for ${JSON.stringify(body).slice(0, 120)}`);
        ok(r.json.message.includes(field), `the message names ${field}: ${r.json.message}`);
      }
      equal(source.device.records.list('clients').length, 0, 'nothing stored');
      equal((await put(base)).status, 201, 'a valid configuration');
      equal((await put({ ...base, ca_certificate: TEST_CA_PEM + TEST_CA_PEM, mqtt: { host: '10.0.0.5', port: 1883, tls: false, username: 'u', password: 'p', client_id: 'lamp-1' } })).status, 200, 'a chain of two, and every optional MQTT field');
      equal((await call(source, 'PUT', '/api/controllers/ctl-9', { headers: auth, body: { ethernet_mac: '02:00:00:E0:00:09' } })).status, 201, 'a controller record needs no client configuration');
    },
  },
  {
    name: 'a client whose stored configuration is invalid logs why and goes back to provisioning (scans again) instead of staying stuck',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller' });
      const client = board(b, { role: 'client', brokers: new Set(['broker.local:8883']) });
      await source.device.boot();
      // An earlier firmware stored a record without Wi-Fi, MQTT or CA.
      client.device.records.put('clients', client.identity.uuid, JSON.stringify({ mac: client.identity.wifiMac, name: 'lamp' }));
      const first = await client.device.boot();
      ok(first.role === 'client' && first.provisioning === 'no_ap', `scans (no AP yet) instead of "configured" (got ${JSON.stringify(first)})`);
      ok(client.events.some((e) => e.level === 'warning' && e.message === 'stored configuration is not usable (wifi is missing (an object with ssid and password)): provisioning again'), 'the log says why');
      equal(client.device.status().configured, false, 'status: not configured');
      // The source offers a valid configuration: the next scan cycle takes it.
      await seedSource(source, { clients: [client] });
      await call(source, 'PUT', '/api/provisioning', { headers: await login(source) });
      await b.clock.advance(10_000);
      ok(client.consoleOut.some((l) => l.includes('"result":"provisioned"')), 'provisioned on the next cycle');
      equal(client.device.records.get('clients', client.identity.uuid)?.ca_certificate, TEST_CA_PEM, 'the valid configuration replaced it');
      equal(client.device.status().configured, true, 'configured now');
    },
  },
  {
    name: 'a client does not store an invalid configuration received from a source, and retries',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller' });
      const client = board(b, { role: 'client' });
      await source.device.boot();
      // Stored on the source behind the API's back (an older source firmware would have accepted it).
      source.device.records.put('clients', client.identity.uuid, JSON.stringify({ ...clientConfig(client.identity.wifiMac), ca_certificate: 'not a certificate' }));
      await call(source, 'PUT', '/api/provisioning', { headers: await login(source) });
      const first = await client.device.boot();
      ok(first.role === 'client' && first.provisioning === 'invalid_configuration', `invalid_configuration (got ${JSON.stringify(first)})`);
      equal(client.device.records.has('clients', client.identity.uuid), false, 'nothing stored');
      ok(client.events.some((e) => e.level === 'warning' && e.message.includes('ca_certificate')), 'the log names the field');
      equal(client.reboots.length, 0, 'no reboot');
    },
  },
  {
    name: 'a controller configured through the UI without its own record does not run the target procedure and is not wiped by a source in range',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller' });
      const ctl = board(b, { role: 'controller' });
      await source.device.boot();
      const first = await ctl.device.boot();
      ok(first.role === 'controller' && first.provisioning.kind === 'no_ap', 'a new controller looks for a source');
      equal(ctl.device.status().configured, false, 'unconfigured at first');
      // The admin sets it up through the UI: one client and a deployed configuration, no own record.
      const auth = await login(ctl);
      equal((await call(ctl, 'PUT', '/api/clients/my-lamp', { headers: auth, body: clientConfig('02:00:00:C0:00:42') })).status, 201, 'a client record');
      equal((await call(ctl, 'PUT', '/backup', { headers: auth, body: '{"outputs":[{"id":1}]}' })).status, 200, 'the backup');
      equal(ctl.device.status().configured, true, 'configured');
      // A source in range, in provisioning mode, even with this controller registered.
      await seedSource(source, { target: ctl, clients: 2 });
      await call(source, 'PUT', '/api/provisioning', { headers: await login(source) });
      const again = await ctl.device.boot();
      ok(again.role === 'controller' && again.provisioning.kind === 'configured', `configured after the reboot (got ${JSON.stringify(again)})`);
      deepEqual(ctl.device.records.list('clients'), ['my-lamp'], 'its records are intact');
      equal(ctl.device.local.size(), 22, 'its backup is intact');
      ok(b.air.aps.size === 1 && !source.events.some((e) => e.message.includes('associated')), 'it did not even join the source');
    },
  },
  {
    name: 'a controller holding only a local backup is configured; the admin password alone is not',
    async run() {
      const b = bench();
      const ctl = board(b, { role: 'controller' });
      await ctl.device.boot();
      ok(ctl.device.visual.hasPassword(), 'the factory admin password is set');
      equal(ctl.device.status().configured, false, 'a password is not a configuration');
      await call(ctl, 'PUT', '/api/cloud', { headers: await login(ctl), body: { url: 'https://cloud.example' } });
      equal(ctl.device.status().configured, false, 'nor is a cloud URL (a fleet enrollment sets it)');
      await call(ctl, 'PUT', '/backup', { headers: await login(ctl), body: '{}' });
      equal(ctl.device.status().configured, true, 'a backup is');
    },
  },
];
