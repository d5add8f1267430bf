// The client procedure (spec 3.5) step by step, with the radio and the source's answers scripted:
// which AP it joins (the exact SSID, the strongest), at which TX power and with which password, what
// it sends for the token and the configuration, what each answer leads to, that the station always
// leaves the SoftAP again (it takes one device at a time, spec 2.5), and normal mode (step 6: Wi-Fi,
// then MQTT, with only the configuration received). The air-level runs are in client.cases.ts.
import type { ClientRequest, ClientResponse } from '../src/hal/network.ts';
import type { MqttOptions } from '../src/hal/system.ts';
import type { ScanResult } from '../src/hal/radio.ts';
import { utf8Decode, utf8Encode } from '../src/core/bytes.ts';
import { softApPassword } from '../src/core/provisioning/softap-password.ts';
import { bytesReader } from '../src/core/http/respond.ts';
import { storedClientConfiguration } from '../src/core/client-configuration.ts';
import { clientProvisioningAttempt, startClientNormalMode, type ClientContext } from '../src/core/provisioning/client.ts';
import { ClientMqtt } from '../src/core/provisioning/client-mqtt.ts';
import { deepEqual, equal, ok, type TestCase } from './assert.ts';
import { bench, board, clientConfig, readAll } from './fixtures.ts';
import { REBOOT_GRACE_MS } from '../src/core/reboot.ts';

const GATEWAY = 'http://192.168.4.1';
/** The wall clock the scripted client's MQTT state reads. */
const CLOCK_ISO = '2026-03-01T12:00:00.000Z';
const AP = (ssid: string, bssid: string, rssiDbm: number): ScanResult => ({ ssid, bssid, channel: 6, rssiDbm });
const json = (status: number, value: unknown): ClientResponse => ({ status, headers: { 'content-type': 'application/json' }, body: bytesReader(utf8Encode(JSON.stringify(value))) });
const html = (status: number): ClientResponse => ({ status, headers: { 'content-type': 'text/html' }, body: bytesReader(utf8Encode('<html>nope</html>')) });

interface Script {
  scan?: ScanResult[];
  connect?: (o: { ssid: string; password: string; bssid?: string; timeoutMs: number }) => Promise<{ gatewayUrl: string }>;
  answer?: (r: ClientRequest, body: string) => ClientResponse | Promise<ClientResponse>;
  mqtt?: (o: MqttOptions) => Promise<void>;
}

/** A client board whose radio, network and MQTT follow `script`; everything it does is recorded. */
function scripted(script: Script) {
  const b = bench();
  const tb = board(b, { role: 'client' });
  const steps: string[] = [];
  const requests: { r: ClientRequest; body: string }[] = [];
  const logs: string[] = [];
  const published: { topic: string; payload: string; retain: boolean }[] = [];
  const mqttOptions: MqttOptions[] = [];
  const hal = {
    ...tb.hal,
    radio: {
      ...tb.hal.radio,
      scan: async () => {
        steps.push('scan');
        return script.scan ?? [AP('Device-Provisioning', 'AA:BB:CC:00:00:01', -40)];
      },
      setTxPowerDbm: (dbm: number) => void steps.push(`tx ${dbm}`),
      connect: async (o: { ssid: string; password: string; bssid?: string; timeoutMs: number }) => {
        steps.push(`connect ${o.ssid} ${o.bssid ?? '-'} ${o.password} ${o.timeoutMs}`);
        return script.connect ? script.connect(o) : { gatewayUrl: GATEWAY };
      },
      disconnect: async () => void steps.push('disconnect'),
    },
    network: {
      ...tb.hal.network,
      request: async (r: ClientRequest) => {
        const body = r.body === undefined ? '' : utf8Decode(await readAll(r.body));
        requests.push({ r, body });
        steps.push(`${r.method} ${r.url}`);
        if (!script.answer) throw new Error('no route');
        return script.answer(r, body);
      },
    },
    mqtt: {
      connect: async (o: MqttOptions) => {
        steps.push(`mqtt ${o.host}:${o.port}`);
        mqttOptions.push(o);
        if (script.mqtt) await script.mqtt(o);
        return {
          publish: async (topic: string, payload: Uint8Array, flags?: { retain?: boolean }) => void published.push({ topic, payload: utf8Decode(payload), retain: flags?.retain === true }),
          close: async () => undefined,
        };
      },
    },
  };
  const ctx: ClientContext = { hal, settings: tb.device.settings, records: tb.device.records, mqtt: new ClientMqtt(() => CLOCK_ISO), log: (level, message) => void logs.push(`${level} ${message}`) };
  return { b, tb, ctx, steps, requests, logs, published, mqttOptions };
}

/** The source's answers for a client whose record is `config`: a token, then the record. */
const source = (config: unknown, token: unknown = 'tok-123') => (r: ClientRequest): ClientResponse => {
  if (r.method === 'POST' && r.url === `${GATEWAY}/api/provisioning/token`) return json(200, { token, expires_in: 300 });
  if (r.method === 'GET' && r.headers['provisioning-token'] === token) return json(200, config);
  return json(404, { error: 'not_found' });
};

export const clientAttemptCases: TestCase[] = [
  {
    name: 'client attempt: joins the strongest AP with the exact SSID, at minimum TX power, with the password from its BSSID and the connect time-out',
    async run() {
      const s = scripted({
        scan: [
          AP('Device-Provisioning', 'AA:BB:CC:00:00:01', -70),
          AP('Device-Provisioning', '24:0A:C4:12:34:56', -40),
          AP('Device-Provisioning-2', 'AA:BB:CC:00:00:03', -10),
          AP('plant-floor', 'AA:BB:CC:00:00:04', -5),
          AP('Device-Provisioning', 'AA:BB:CC:00:00:05', -55),
        ],
        answer: () => json(404, { error: 'unknown_uuid' }),
      });
      equal(await clientProvisioningAttempt(s.ctx), 'unknown_uuid', 'result');
      deepEqual(s.steps.slice(0, 3), ['scan', 'tx 2', `connect Device-Provisioning 24:0A:C4:12:34:56 ${softApPassword('24:0A:C4:12:34:56')} 10000`], 'scan, lower TX power, then join');
      const none = scripted({ scan: [AP('plant-floor', 'AA:BB:CC:00:00:04', -5), AP('device-provisioning', 'AA:BB:CC:00:00:06', -30)] });
      equal(await clientProvisioningAttempt(none.ctx), 'no_ap', 'no AP with the exact SSID');
      deepEqual(none.steps, ['scan'], 'nothing else done');
    },
  },
  {
    name: 'client attempt: a failed join is connect_failed, logged with why; nothing is requested',
    async run() {
      const s = scripted({
        connect: async () => {
          throw new Error('WPA2 handshake timed out');
        },
      });
      equal(await clientProvisioningAttempt(s.ctx), 'connect_failed', 'result');
      equal(s.requests.length, 0, 'no request');
      equal(s.logs.length, 1, 'one log line');
      ok(s.logs[0]!.startsWith('warning ') && s.logs[0]!.includes('Device-Provisioning') && s.logs[0]!.includes('WPA2 handshake timed out'), `a warning naming the AP and the reason (got ${s.logs[0]})`);
    },
  },
  {
    name: 'client attempt: the token request is a JSON POST of its UUID and Wi-Fi MAC; the record is fetched with the token; success stores it and reboots',
    async run() {
      const s = scripted({ answer: source(clientConfig('02:00:00:C0:00:01')) });
      const me = s.tb.identity;
      equal(await clientProvisioningAttempt(s.ctx), 'provisioned', 'result');
      const [ex, get] = s.requests;
      equal(ex!.r.method, 'POST', 'exchange method');
      equal(ex!.r.url, `${GATEWAY}/api/provisioning/token`, 'exchange URL');
      equal(ex!.r.headers['content-type'], 'application/json', 'exchange content type');
      deepEqual(JSON.parse(ex!.body), { uuid: me.uuid, mac: me.wifiMac }, 'exchange body');
      equal(ex!.r.bodyLength, utf8Encode(ex!.body).length, 'declared length');
      equal(get!.r.method, 'GET', 'record method');
      equal(get!.r.url, `${GATEWAY}/api/clients/${encodeURIComponent(me.uuid)}`, 'record URL');
      equal(get!.r.headers['provisioning-token'], 'tok-123', 'the token in its header');
      equal(s.requests.length, 2, 'two requests');
      deepEqual(JSON.parse(s.tb.device.records.getText('clients', me.uuid)!), clientConfig('02:00:00:C0:00:01'), 'stored');
      equal(s.steps.at(-1), 'disconnect', 'leaves the SoftAP');
      ok(s.logs.length === 1 && s.logs[0]!.startsWith('info ') && s.logs[0]!.length > 'info '.length, `one info line (got ${JSON.stringify(s.logs)})`);
      equal(s.tb.reboots.length, 0, 'reboot not before the timer');
      await s.b.clock.advance(REBOOT_GRACE_MS - 1);
      equal(s.tb.reboots.length, 0, 'reboot not before the grace (core/reboot.ts)');
      await s.b.clock.advance(1);
      deepEqual(s.tb.reboots, ['provisioned'], 'rebooted into normal mode');
    },
  },
  {
    name: 'client attempt: 404 on the exchange is unknown_uuid (retry next cycle, logged at info); other refusals are refused; the SoftAP is left every time',
    async run() {
      const unknown = scripted({ answer: () => json(404, { error: 'unknown_uuid' }) });
      equal(await clientProvisioningAttempt(unknown.ctx), 'unknown_uuid', '404');
      ok(unknown.logs.length === 1 && unknown.logs[0]!.startsWith('info ') && unknown.logs[0]!.includes('next scan cycle'), `logged at info (got ${JSON.stringify(unknown.logs)})`);
      equal(unknown.requests.length, 1, '404: no record request');
      equal(unknown.steps.at(-1), 'disconnect', '404: disconnected');
      for (const status of [403, 409, 429, 500]) {
        const s = scripted({ answer: (r) => (r.method === 'POST' ? html(status) : json(200, clientConfig('02:00:00:C0:00:01'))) });
        equal(await clientProvisioningAttempt(s.ctx), 'refused', `${status}`);
        equal(s.requests.length, 1, `${status}: no record request`);
        equal(s.steps.at(-1), 'disconnect', `${status}: disconnected`);
        equal(s.tb.device.records.list('clients').length, 0, `${status}: nothing stored`);
      }
    },
  },
  {
    name: 'client attempt: a token that is not a string, or a refused record request, is refused; nothing stored',
    async run() {
      for (const token of [5, null, ['t']]) {
        const s = scripted({ answer: (r) => (r.method === 'POST' ? json(200, { token }) : json(200, clientConfig('02:00:00:C0:00:01'))) });
        equal(await clientProvisioningAttempt(s.ctx), 'refused', `token ${JSON.stringify(token)}`);
        equal(s.requests.length, 1, `token ${JSON.stringify(token)}: no record request`);
      }
      for (const status of [401, 403, 404, 500]) {
        const s = scripted({ answer: (r) => (r.method === 'POST' ? json(200, { token: 'tok-123' }) : html(status)) });
        equal(await clientProvisioningAttempt(s.ctx), 'refused', `record ${status}`);
        equal(s.tb.device.records.list('clients').length, 0, `record ${status}: nothing stored`);
        equal(s.steps.at(-1), 'disconnect', `record ${status}: disconnected`);
        await s.b.clock.advance(REBOOT_GRACE_MS);
        equal(s.tb.reboots.length, 0, `record ${status}: no reboot`);
      }
    },
  },
  {
    name: 'client attempt: a configuration that is not usable is not stored; a failing request is connect_failed; both logged as warnings, the SoftAP left',
    async run() {
      const bad = scripted({ answer: source({ ...clientConfig('02:00:00:C0:00:01'), mqtt: { host: 'broker.local', port: 0 } }) });
      equal(await clientProvisioningAttempt(bad.ctx), 'invalid_configuration', 'invalid');
      equal(bad.tb.device.records.list('clients').length, 0, 'not stored');
      ok(bad.logs.length === 1 && bad.logs[0]!.startsWith('warning ') && bad.logs[0]!.includes('mqtt.port'), `a warning naming the field (got ${JSON.stringify(bad.logs)})`);
      const down = scripted({
        answer: () => {
          throw new Error('connection reset by peer');
        },
      });
      equal(await clientProvisioningAttempt(down.ctx), 'connect_failed', 'request failed');
      ok(down.logs.length === 1 && down.logs[0]!.startsWith('warning ') && down.logs[0]!.includes('connection reset by peer'), `a warning with the reason (got ${JSON.stringify(down.logs)})`);
      equal(down.steps.at(-1), 'disconnect', 'disconnected after a failure too');
      const garbage = scripted({ answer: (r) => (r.method === 'POST' ? json(200, { token: 'tok-123' }) : { status: 200, headers: {}, body: bytesReader(utf8Encode('{"wifi": ')) }) });
      equal(await clientProvisioningAttempt(garbage.ctx), 'connect_failed', 'a record that is not JSON');
      equal(garbage.tb.device.records.list('clients').length, 0, 'not JSON: not stored');
    },
  },
  {
    name: 'client stored configuration: none, valid, damaged and not JSON are told apart',
    async run() {
      const s = scripted({});
      const uuid = s.tb.identity.uuid;
      deepEqual(storedClientConfiguration(s.ctx), {}, 'no record: nothing, no problem');
      s.tb.device.records.put('clients', uuid, '{"wifi": ');
      deepEqual(storedClientConfiguration(s.ctx), { problem: { field: 'record', reason: 'cannot be read (damaged or not JSON)' } }, 'not JSON');
      s.tb.device.records.put('clients', uuid, 'null');
      deepEqual(storedClientConfiguration(s.ctx), { problem: { field: 'record', reason: 'cannot be read (damaged or not JSON)' } }, 'JSON null');
      s.tb.device.records.put('clients', uuid, '[1]');
      deepEqual(storedClientConfiguration(s.ctx), { problem: { field: 'record', reason: 'is not a JSON object' } }, 'an array');
      const path = `/records/clients/${uuid}`;
      s.tb.device.records.put('clients', uuid, JSON.stringify(clientConfig('02:00:00:C0:00:01')));
      deepEqual(storedClientConfiguration(s.ctx), { config: clientConfig('02:00:00:C0:00:01') }, 'valid');
      const blob = s.tb.storage.read(path, 0, s.tb.storage.size(path)!);
      blob[blob.length - 1] = blob[blob.length - 1]! ^ 1;
      const f = s.tb.storage.create(path);
      f.write(blob);
      f.close();
      deepEqual(storedClientConfiguration(s.ctx), { problem: { field: 'record', reason: 'cannot be read (damaged or not JSON)' } }, 'damaged (tag fails)');
    },
  },
  {
    name: 'client normal mode: Wi-Fi with the stored SSID and password, then MQTT with its options; online status published; failures stop there',
    async run() {
      const none = scripted({});
      equal(await startClientNormalMode(none.ctx), 'no_configuration', 'no configuration');
      deepEqual(none.steps, [], 'nothing joined');

      const cfg = { ...clientConfig('02:00:00:C0:00:01'), mqtt: { host: 'broker.local', port: 8883 } } as Record<string, any>;
      const s = scripted({});
      s.tb.device.records.put('clients', s.tb.identity.uuid, JSON.stringify(cfg));
      equal(await startClientNormalMode(s.ctx), 'mqtt_connected', 'connected');
      deepEqual(s.steps, ['connect plant-floor - wifi-secret-123 15000', 'mqtt broker.local:8883'], 'Wi-Fi, then MQTT');
      const { will, ...options } = s.mqttOptions[0]!;
      deepEqual(options, { host: 'broker.local', port: 8883, clientId: s.tb.identity.uuid, ca: cfg.ca_certificate }, 'client id = UUID, TLS with the CA, no credentials');
      equal(will?.topic, `devices/${s.tb.identity.uuid}/status`, 'the will on the status topic');
      equal(will ? utf8Decode(will.payload) : '', '{"state":"offline"}', 'the will says offline');
      deepEqual(s.published, [{ topic: `devices/${s.tb.identity.uuid}/status`, payload: JSON.stringify({ state: 'online', version: s.tb.identity.firmwareVersion }), retain: true }], 'online status, retained');
      deepEqual(s.ctx.mqtt?.status(), { state: 'connected', broker: 'broker.local:8883', since: CLOCK_ISO, problem: null }, 'status: connected since');
      ok(s.logs.length === 1 && s.logs[0]!.startsWith('info ') && s.logs[0]!.includes('broker.local:8883'), `logged at info with the broker (got ${JSON.stringify(s.logs)})`);

      const creds = scripted({});
      creds.tb.device.records.put('clients', creds.tb.identity.uuid, JSON.stringify({ ...cfg, mqtt: { host: 'broker.local', port: 8883, username: 'lamp', password: 'pw', client_id: 'lamp-7' } }));
      equal(await startClientNormalMode(creds.ctx), 'mqtt_connected', 'with credentials');
      const { will: _w, ...credOptions } = creds.mqttOptions[0]!;
      deepEqual(credOptions, { host: 'broker.local', port: 8883, clientId: 'lamp-7', username: 'lamp', password: 'pw', ca: cfg.ca_certificate }, 'credentials and client id passed');

      const wifiDown = scripted({
        connect: async () => {
          throw new Error('no AP plant-floor');
        },
      });
      wifiDown.tb.device.records.put('clients', wifiDown.tb.identity.uuid, JSON.stringify(cfg));
      equal(await startClientNormalMode(wifiDown.ctx), 'wifi_failed', 'Wi-Fi failed');
      equal(wifiDown.mqttOptions.length, 0, 'no MQTT without Wi-Fi');
      deepEqual(wifiDown.ctx.mqtt?.status(), { state: 'never', broker: null, since: null, problem: null }, 'status: never tried');
      ok(wifiDown.logs.length === 1 && wifiDown.logs[0]!.startsWith('error ') && wifiDown.logs[0]!.includes('plant-floor') && wifiDown.logs[0]!.includes('no AP plant-floor'), `an error with why (got ${JSON.stringify(wifiDown.logs)})`);

      const mqttDown = scripted({
        mqtt: async () => {
          throw new Error('TLS handshake failed');
        },
      });
      mqttDown.tb.device.records.put('clients', mqttDown.tb.identity.uuid, JSON.stringify(cfg));
      equal(await startClientNormalMode(mqttDown.ctx), 'mqtt_failed', 'MQTT failed');
      equal(mqttDown.published.length, 0, 'nothing published');
      deepEqual(mqttDown.ctx.mqtt?.status(), { state: 'failed', broker: 'broker.local:8883', since: CLOCK_ISO, problem: 'TLS handshake failed' }, 'status: failed, with why');
      ok(mqttDown.logs.length === 1 && mqttDown.logs[0]!.startsWith('error ') && mqttDown.logs[0]!.includes('broker.local:8883') && mqttDown.logs[0]!.includes('TLS handshake failed'), `an error with why (got ${JSON.stringify(mqttDown.logs)})`);
    },
  },
];
