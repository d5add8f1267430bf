// What a valid configuration is (docs/firmware-records.md): a client's (spec 2.6, 3.5 step 1),
// checked when a source stores it and at the client's boot; a controller's own configuration
// (spec 3.6 step 1), which keeps a controller set up through the UI from ever being a target.
import { clientConfigurationProblem, pemCertificateProblem } from '../src/core/client-configuration.ts';
import { equal, deepEqual, ok, type TestCase } from './assert.ts';
import { bench, board, call, clientConfig, login, seedSource, TEST_CA_PEM } from './fixtures.ts';

const CA_BODY = TEST_CA_PEM.split('\n').filter((l) => l !== '' && !l.startsWith('-----'));

/** DER bytes as a one-block PEM certificate. */
function pem(der: number[]): string {
  let bin = '';
  for (const b of der) bin += String.fromCharCode(b);
  const b64 = btoaPortable(bin);
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

/** Base64 without relying on a global btoa (XS has none). */
function btoaPortable(bin: string): string {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < bin.length; i += 3) {
    const [a, b, c] = [bin.charCodeAt(i), bin.charCodeAt(i + 1), bin.charCodeAt(i + 2)];
    const n = (a << 16) | ((b || 0) << 8) | (c || 0);
    out += A[(n >> 18) & 63]! + A[(n >> 12) & 63]! + (i + 1 < bin.length ? A[(n >> 6) & 63]! : '=') + (i + 2 < bin.length ? A[n & 63]! : '=');
  }
  return out;
}

export const configurationCases: TestCase[] = [
  {
    name: 'the client configuration rules at their boundaries (SSID bytes, passphrase, host, port, MQTT fields, tls, PEM/DER shape)',
    async run() {
      const base = clientConfig('02:00:00:C0:00:01') as { wifi: object; mqtt: object; ca_certificate: string };
      const wifi = (w: object) => ({ ...base, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123', ...w } });
      const mqtt = (m: object) => ({ ...base, mqtt: { host: 'broker.local', port: 8883, ...m } });
      const ok_: [string, unknown][] = [
        ['SSID of 1 byte', wifi({ ssid: 'x' })],
        ['SSID of 32 bytes', wifi({ ssid: 'x'.repeat(32) })],
        ['SSID of 16 two-byte characters', wifi({ ssid: 'é'.repeat(16) })],
        ['passphrase of 8', wifi({ password: '12345678' })],
        ['passphrase of 63', wifi({ password: 'p'.repeat(63) })],
        ['passphrase with spaces and ~', wifi({ password: ' pass ~ word ' })],
        ['64 hex digits', wifi({ password: 'aB'.repeat(32) })],
        ['host name', mqtt({ host: 'a-b.example.com' })],
        ['host with labels of 63', mqtt({ host: `${'a'.repeat(63)}.${'b-c'.repeat(21)}` })],
        ['host of one character', mqtt({ host: 'b' })],
        ['host of 253', mqtt({ host: Array(51).fill('abcd').join('.').slice(0, 253) })],
        ['IPv4', mqtt({ host: '10.0.0.5' })],
        ['IPv6 literal', mqtt({ host: '[fe80::1]' })],
        ['port 1', mqtt({ port: 1 })],
        ['port 65535', mqtt({ port: 65535 })],
        ['username and password of 256', mqtt({ username: 'u'.repeat(256), password: 'p'.repeat(256) })],
        ['client_id of 64', mqtt({ client_id: '!'.repeat(64) })],
        ['tls false', mqtt({ tls: false })],
        ['tls true', mqtt({ tls: true })],
        ['a DER certificate with a long-form length', { ...base, ca_certificate: pem([0x30, 0x81, 0x03, 0x30, 0x01, 0x00]) }],
      ];
      for (const [what, value] of ok_) equal(JSON.stringify(clientConfigurationProblem(value)), 'null', what);
      const refused: [string, unknown, string][] = [
        ['not an object', [base], 'record'],
        ['null', null, 'record'],
        ['wifi an array', { ...base, wifi: [] }, 'wifi'],
        ['SSID empty', wifi({ ssid: '' }), 'wifi.ssid'],
        ['SSID of 33 bytes', wifi({ ssid: 'x'.repeat(33) }), 'wifi.ssid'],
        ['SSID of 17 two-byte characters', wifi({ ssid: 'é'.repeat(17) }), 'wifi.ssid'],
        ['SSID a number', wifi({ ssid: 5 }), 'wifi.ssid'],
        ['passphrase of 7', wifi({ password: '1234567' }), 'wifi.password'],
        ['passphrase of 64 not hex', wifi({ password: 'g'.repeat(64) }), 'wifi.password'],
        ['passphrase of 65 hex', wifi({ password: 'a'.repeat(65) }), 'wifi.password'],
        ['passphrase with a control character', wifi({ password: 'pass\nword1' }), 'wifi.password'],
        ['passphrase with a non-ASCII character', wifi({ password: 'passwörd1' }), 'wifi.password'],
        ['passphrase prefix of 8 then a newline', wifi({ password: '12345678\n' }), 'wifi.password'],
        ['64 hex then more', wifi({ password: `${'a'.repeat(64)}\n` }), 'wifi.password'],
        ['mqtt missing', { ...base, mqtt: null }, 'mqtt'],
        ['host with a scheme', mqtt({ host: 'mqtt://b' }), 'mqtt.host'],
        ['host with a space', mqtt({ host: 'a b' }), 'mqtt.host'],
        ['host with a leading dash', mqtt({ host: '-a' }), 'mqtt.host'],
        // DNS labels are at most 63 characters (RFC 1035 2.3.4): XS's RegExp once let 64 through.
        ['host with a label of 64', mqtt({ host: `${'a'.repeat(64)}.com` }), 'mqtt.host'],
        ['host of one label of 64', mqtt({ host: 'b'.repeat(64) }), 'mqtt.host'],
        ['host with a last label of 64', mqtt({ host: `broker.${'c'.repeat(64)}` }), 'mqtt.host'],
        ['host with a label of 100', mqtt({ host: `${'a'.repeat(100)}.com` }), 'mqtt.host'],
        ['host with a trailing dash in a label', mqtt({ host: 'a-.example.com' }), 'mqtt.host'],
        ['host with an empty label', mqtt({ host: 'a..example.com' }), 'mqtt.host'],
        ['host of 254', mqtt({ host: Array(51).fill('abcd').join('.').slice(0, 254) }), 'mqtt.host'],
        ['IPv6 not bracketed', mqtt({ host: 'fe80::1' }), 'mqtt.host'],
        ['IPv6 with junk after', mqtt({ host: '[fe80::1]x' }), 'mqtt.host'],
        ['IPv6 with junk before', mqtt({ host: 'x[fe80::1]' }), 'mqtt.host'],
        ['IPv6 of one character', mqtt({ host: '[1]' }), 'mqtt.host'],
        ['IPv6 with a letter outside hex', mqtt({ host: '[fe80::g]' }), 'mqtt.host'],
        ['port 0', mqtt({ port: 0 }), 'mqtt.port'],
        ['port 65536', mqtt({ port: 65536 }), 'mqtt.port'],
        ['port 1.5', mqtt({ port: 1.5 }), 'mqtt.port'],
        ['username of 257', mqtt({ username: 'u'.repeat(257) }), 'mqtt.username'],
        ['password a number', mqtt({ password: 5 }), 'mqtt.password'],
        ['client_id empty', mqtt({ client_id: '' }), 'mqtt.client_id'],
        ['client_id of 65', mqtt({ client_id: 'c'.repeat(65) }), 'mqtt.client_id'],
        ['client_id with a space', mqtt({ client_id: 'a b' }), 'mqtt.client_id'],
        ['client_id a number', mqtt({ client_id: 7 }), 'mqtt.client_id'],
        ['tls a string', mqtt({ tls: 'yes' }), 'mqtt.tls'],
        ['CA blank', { ...base, ca_certificate: '  \n' }, 'ca_certificate'],
        ['CA of 8193 characters', { ...base, ca_certificate: base.ca_certificate + ' '.repeat(8193 - base.ca_certificate.length) }, 'ca_certificate'],
        ['DER not a SEQUENCE', { ...base, ca_certificate: pem([0x31, 0x03, 0x30, 0x01, 0x00]) }, 'ca_certificate'],
        ['DER of 3 bytes', { ...base, ca_certificate: pem([0x30, 0x01, 0x30]) }, 'ca_certificate'],
        ['DER length longer than the data', { ...base, ca_certificate: pem([0x30, 0x04, 0x30, 0x01, 0x00]) }, 'ca_certificate'],
        ['DER length shorter than the data', { ...base, ca_certificate: pem([0x30, 0x02, 0x30, 0x00, 0x00]) }, 'ca_certificate'],
        ['DER first element not a SEQUENCE', { ...base, ca_certificate: pem([0x30, 0x03, 0x02, 0x01, 0x00]) }, 'ca_certificate'],
        ['DER long form of 0 bytes', { ...base, ca_certificate: pem([0x30, 0x80, 0x30, 0x00]) }, 'ca_certificate'],
        ['DER long form of 4 bytes', { ...base, ca_certificate: pem([0x30, 0x84, 0, 0, 0, 2, 0x30, 0x00]) }, 'ca_certificate'],
        ['DER long form cut short', { ...base, ca_certificate: pem([0x30, 0x82, 0x00]) }, 'ca_certificate'],
      ];
      for (const [what, value, field] of refused) equal(clientConfigurationProblem(value)?.field, field, what);
      // The reasons, as the 400 and the client's log give them.
      deepEqual(clientConfigurationProblem(wifi({ password: 'x' })), { field: 'wifi.password', reason: 'must be a WPA2 passphrase (8 to 63 printable ASCII characters, or 64 hex digits)' }, 'passphrase reason');
      deepEqual(clientConfigurationProblem(mqtt({ port: 0 })), { field: 'mqtt.port', reason: 'must be an integer from 1 to 65535' }, 'port reason');
      deepEqual(clientConfigurationProblem({ ...base, mqtt: 1 }), { field: 'mqtt', reason: 'is missing (an object with host and port)' }, 'mqtt reason');
      deepEqual(clientConfigurationProblem(mqtt({ host: '' })), { field: 'mqtt.host', reason: 'must be a host name or an IP address' }, 'host reason');
      deepEqual(clientConfigurationProblem(mqtt({ username: 1 })), { field: 'mqtt.username', reason: 'must be a string of at most 256 characters' }, 'username reason');
      deepEqual(clientConfigurationProblem(mqtt({ client_id: '' })), { field: 'mqtt.client_id', reason: 'must be 1 to 64 printable ASCII characters' }, 'client_id reason');
      deepEqual(clientConfigurationProblem(mqtt({ tls: 1 })), { field: 'mqtt.tls', reason: 'must be true or false' }, 'tls reason');
      deepEqual(clientConfigurationProblem(wifi({ ssid: '' })), { field: 'wifi.ssid', reason: 'must be a string of 1 to 32 bytes' }, 'ssid reason');
      deepEqual(clientConfigurationProblem({}), { field: 'wifi', reason: 'is missing (an object with ssid and password)' }, 'wifi reason');
      deepEqual(clientConfigurationProblem('x'), { field: 'record', reason: 'is not a JSON object' }, 'record reason');
      equal(pemCertificateProblem(undefined), 'is missing (a PEM CA certificate)', 'CA missing');
      equal(pemCertificateProblem('x'.repeat(8193)), 'is longer than 8192 characters', 'CA too long');
      equal(pemCertificateProblem('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'), 'block 1 is not a DER certificate', 'CA block 1');
      equal(pemCertificateProblem(`${TEST_CA_PEM}${pem([0x31, 0x00, 0x30, 0x00])}`), 'block 2 is not a DER certificate', 'the second block is named');
      equal(pemCertificateProblem('just words'), 'is not PEM (no -----BEGIN CERTIFICATE----- block)', 'not PEM');
      equal(pemCertificateProblem(`words\n${TEST_CA_PEM}`), 'has text outside its CERTIFICATE blocks', 'text outside');
    },
  },
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
