// Controller provisioning between two virtual boards (the firmware the Moddable SDK builds for the
// host, SdkBoard), over real loopback sockets through a shared virtual air: the target joins the
// source's SoftAP with its Ethernet MAC, copies every record and the backup, shows the outcome and
// reboots. Also: the virtual air refuses anything but a WPA2-PSK AP, the login throttle's 429 over a
// real socket, a client's API on its station interface and its MQTT session with a real broker. The
// boards run the builds they ship with (default settings): the target shows its outcome for 5 s
// before it reboots.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualAir, type AirAp } from '../../firmware/virtual-esp32/air.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { startBroker } from '../../harness/broker.ts';
import { freeLoopbackPort } from '../../harness/ports.ts';

const PASSWORD = 'bench-admin-password';
let dir: string;
const boards: SdkBoard[] = [];

function id(n: number): DeviceIdentity {
  const h = n.toString(16).padStart(2, '0').toUpperCase();
  return { uuid: `ctl-${n}`, role: 'controller', ethernetMac: `24:0A:C4:E0:00:${h}`, wifiMac: `24:0A:C4:10:00:${h}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' };
}

/** The JSON of a console's `OK {…}` answer to `status`. */
function consoleStatus(answer: string): { mqtt: { state: string; broker: string | null; since: string | null; problem: string | null } } {
  expect(answer.startsWith('OK ')).toBe(true);
  return JSON.parse(answer.slice(3));
}

/** The retained message on a client's status topic, as a subscriber that comes later reads it. */
async function retainedStatus(port: number, uuid: string): Promise<string | null> {
  const reader = await connectAsync({ host: '127.0.0.1', port, clientId: `retained-reader-${process.pid}` });
  try {
    const got = new Promise<string | null>((resolve) => {
      reader.on('message', (_topic, payload) => resolve(payload.toString()));
      setTimeout(() => resolve(null), 1000);
    });
    await reader.subscribeAsync(`devices/${uuid}/status`);
    return await got;
  } finally {
    await reader.endAsync();
  }
}

async function start(n: number, air: VirtualAir): Promise<SdkBoard> {
  const b = await startSdkBoard({ identity: id(n), fuseKeyHex: n.toString(16).padStart(2, '0').repeat(32), flashDir: join(dir, `flash-${n}`), adminPassword: PASSWORD, air });
  boards.push(b);
  return b;
}

async function http(b: SdkBoard, method: string, path: string, headers: Record<string, string> = {}, body?: unknown, iface: 'ethernet' | 'station' = 'ethernet') {
  const res = await fetch((b.urls as Record<string, string>)[iface] + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}

async function login(b: SdkBoard) {
  return { 'visual-token': (await http(b, 'POST', '/api/login', {}, { password: PASSWORD })).json.token as string };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-prov-'));
});
afterEach(async () => {
  await Promise.all(boards.splice(0).map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('controller provisioning between virtual boards over the virtual air', () => {
  it('copies 3 controllers, 4 clients and the backup; "Prov OK 3C 4L" / "Prov OK got backup"; reboots', { timeout: 90_000 }, async () => {
    const air = new VirtualAir();
    const source = await start(1, air);
    const auth = await login(source);
    const backup = JSON.stringify({ outputs: [{ id: 1, name: 'Deck light' }] });
    expect((await http(source, 'PUT', '/api/controllers/ctl-2', auth, { ethernet_mac: id(2).ethernetMac })).status).toBe(201);
    for (const n of [3, 4]) await http(source, 'PUT', `/api/controllers/ctl-${n}`, auth, { ethernet_mac: id(n).ethernetMac });
    for (let i = 0; i < 4; i++) await http(source, 'PUT', `/api/clients/lamp-${i}`, auth, { mac: `02:00:00:C0:00:0${i}`, wifi: { ssid: 'plant', password: 'x12345678' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM });
    await http(source, 'PUT', '/backup', auth, backup);
    const on = await http(source, 'PUT', '/api/provisioning', auth);
    expect(on.status).toBe(200);
    expect(source.softAp).toMatchObject({ ssid: 'Device-Provisioning', txPowerDbm: 2 });

    const target = await start(2, air);
    expect(target.bootResult).toMatchObject({ role: 'controller', provisioning: { kind: 'finished', ok: true, controllers: [3, 3], clients: [4, 4], backup: 'received' } });
    expect(target.displayHistory).toContainEqual(['Prov OK 3C 4L', 'Prov OK got backup']);
    expect(target.events.some((e) => e.message === 'Prov OK 3C 4L / Prov OK got backup')).toBe(true);
    // The outcome stays on the panel for resultDisplayMs (5 s), then the target reboots; what it
    // copied is in its flash after the reboot.
    await expect.poll(() => target.reboots, { timeout: 30_000 }).toEqual(['provisioned']);
    await target.settled();
    const tauth = await login(target);
    expect((await http(target, 'GET', '/api/clients', tauth)).json).toEqual(['lamp-0', 'lamp-1', 'lamp-2', 'lamp-3']);
    expect((await http(target, 'GET', '/api/controllers', tauth)).json).toEqual(['ctl-2', 'ctl-3', 'ctl-4']);
    const got = await fetch(`${target.urls.ethernet}/backup`, { headers: tauth });
    expect(await got.text()).toBe(backup);
    expect(got.headers.get('etag')).toBe(`"${createHash('sha256').update(backup).digest('hex')}"`);
    expect(target.reboots).toEqual(['provisioned']);
  });

  it('a target whose Ethernet MAC is not registered makes the source shut its SoftAP down', { timeout: 60_000 }, async () => {
    const air = new VirtualAir();
    const source = await start(5, air);
    const auth = await login(source);
    await http(source, 'PUT', '/api/clients/lamp-0', auth, { mac: '02:00:00:C0:00:01', wifi: { ssid: 'plant', password: 'x12345678' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM });
    await http(source, 'PUT', '/api/provisioning', auth);
    const target = await start(6, air);
    expect(target.bootResult).toMatchObject({ provisioning: { kind: 'connect_failed' } });
    expect(source.softAp).toBeNull();
    expect(source.display.join(' ')).toContain(id(6).ethernetMac);
    expect(source.events.some((e) => e.level === 'warning' && e.message.includes('not in the allowlist'))).toBe(true);
  });
});

describe('the virtual air', () => {
  const ap = (o: Partial<AirAp> & Record<string, unknown> = {}) =>
    ({ ssid: 'Device-Provisioning', bssid: '24:0A:C4:10:00:02', auth: 'wpa2-psk', password: 'ABCDEF012345', txPowerDbm: 2, maxStations: 1, channel: 6, position: () => ({ x: 0, y: 0 }), gatewayUrl: () => 'http://127.0.0.3:1', associate: async () => undefined, ...o }) as Omit<AirAp, 'station'>;

  it('refuses an open AP, WPA1 or a mixed mode, and a passphrase outside 8-63 characters, with a clear error', () => {
    const air = new VirtualAir();
    expect(() => air.start(ap({ auth: 'open' as never }))).toThrow('SoftAP refused: an open AP (no authentication mode); only WPA2-PSK with CCMP ("wpa2-psk") is allowed');
    expect(() => air.start(ap({ auth: undefined as never }))).toThrow(/open AP/);
    expect(() => air.start(ap({ auth: 'wpa-psk' as never }))).toThrow('SoftAP refused: authentication mode "wpa-psk"; only WPA2-PSK with CCMP ("wpa2-psk") is allowed');
    expect(() => air.start(ap({ auth: 'wpa-wpa2-psk' as never }))).toThrow(/"wpa-wpa2-psk"/);
    expect(() => air.start(ap({ password: '1234567' }))).toThrow('SoftAP refused: a WPA2 passphrase is 8 to 63 printable ASCII characters');
    expect(() => air.start(ap({ password: 'x'.repeat(64) }))).toThrow(/8 to 63/);
    expect(air.scan({ mac: '02:00:00:00:00:01', position: { x: 0, y: 0 }, txPowerDbm: 2 })).toEqual([]);
    air.start(ap());
    expect(air.scan({ mac: '02:00:00:00:00:01', position: { x: 0, y: 0 }, txPowerDbm: 2 }).map((a) => a.ssid)).toEqual(['Device-Provisioning']);
  });

  it("a board's provisioning mode reaches the air as WPA2-PSK", async () => {
    const air = new VirtualAir();
    const seen: unknown[] = [];
    const realStart = air.start.bind(air);
    air.start = (a) => (seen.push(a.auth), realStart(a));
    const source = await start(7, air);
    const auth = await login(source);
    expect((await http(source, 'PUT', '/api/provisioning', auth)).status).toBe(200);
    expect(seen).toEqual(['wpa2-psk']);
    // The SoftAP's listener follows the mode: closed when it ends (the board is told by the socket's
    // close), bound again, on the same port, when it starts again.
    for (let i = 0; i < 200 && !source.listening('softap'); i++) await new Promise((r) => setTimeout(r, 10));
    const url = source.urls.softap;
    expect(url).toBeDefined();
    expect((await http(source, 'DELETE', '/api/provisioning', auth)).status).toBe(204);
    for (let i = 0; i < 200 && source.listening('softap'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(source.listening('softap')).toBe(false);
    expect(source.softAp).toBeNull();
    expect((await http(source, 'PUT', '/api/provisioning', auth)).status).toBe(200);
    for (let i = 0; i < 200 && !source.listening('softap'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(source.urls.softap).toBe(url);
  });
});

describe('virtual boards over real sockets', () => {
  it('failed logins earn 429 with a Retry-After header; the board serves other requests meanwhile', async () => {
    const b = await start(8, new VirtualAir());
    const auth = await login(b);
    for (let i = 0; i < 5; i++) expect((await http(b, 'POST', '/api/login', {}, { password: 'wrong-password' })).status).toBe(401);
    const refused = await http(b, 'POST', '/api/login', {}, { password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.json).toMatchObject({ error: 'too_many_attempts', details: { retry_after_seconds: 1, failed_attempts: 5 } });
    expect((await http(b, 'GET', '/api/status', auth)).status).toBe(200);
    expect(b.events.some((e) => e.source === 'auth' && e.level === 'warning' && e.message.includes('5 failed attempts'))).toBe(true);
    expect(b.consoleLines.some((l) => l.startsWith('LOG WARNING auth: login: 5 failed attempts'))).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await http(b, 'POST', '/api/login', {}, { password: PASSWORD })).status).toBe(200);
  });

  it('a provisioned client joins the site Wi-Fi, serves its local API (GET/PUT /backup) on its station interface, and connects to the MQTT broker its record names', { timeout: 90_000 }, async () => {
    const air = new VirtualAir();
    air.addInfrastructureAp({ ssid: 'plant-floor', password: 'plant-floor-wpa2', bssid: 'AC:DE:48:00:00:01', position: { x: 0, y: 3 } });
    const source = await start(9, air);
    // The broker's port, free at first: the client's first session finds nobody there.
    const mqttPort = await freeLoopbackPort();
    const identity: DeviceIdentity = { uuid: 'lamp-sdk-1', role: 'client', wifiMac: '24:0A:C4:10:00:31', hardwareClass: 'lamp-c3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' };
    const config = { mac: identity.wifiMac, wifi: { ssid: 'plant-floor', password: 'plant-floor-wpa2' }, mqtt: { host: '127.0.0.1', port: mqttPort, tls: false }, ca_certificate: TEST_CA_PEM };
    const sauth = await login(source);
    expect((await http(source, 'PUT', `/api/clients/${identity.uuid}`, sauth, { ...config, ca_certificate: 'not a certificate' })).json).toMatchObject({ error: 'invalid_record', details: { field: 'ca_certificate' } });
    expect((await http(source, 'PUT', `/api/clients/${identity.uuid}`, sauth, config)).status).toBe(201);
    expect((await http(source, 'PUT', '/api/provisioning', sauth)).status).toBe(200);
    const boot = () => startSdkBoard({ identity, fuseKeyHex: '31'.repeat(32), flashDir: join(dir, 'flash-client'), adminPassword: PASSWORD, air, position: { x: 0, y: 0.5 } }).then((b) => (boards.push(b), b));
    const first = await boot();
    expect(first.bootResult).toMatchObject({ role: 'client', provisioning: 'provisioned' });
    await first.close();
    // After the reboot: the site Wi-Fi (MQTT fails: no broker listens yet), and the API on the station interface.
    const client = await boot();
    expect(client.bootResult).toMatchObject({ role: 'client', provisioning: 'configured', normal: 'mqtt_failed' });
    // Its console's `status` says so: the broker it tried, since when, and why it failed.
    const failed = consoleStatus(await client.typeLine('status'));
    expect(failed.mqtt).toMatchObject({ state: 'failed', broker: `127.0.0.1:${mqttPort}` });
    expect(failed.mqtt.problem).toMatch(/\S/);
    const urls = client.urls as Record<string, string | undefined>;
    expect(urls.station).toBeDefined();
    expect(urls.softap).toBeUndefined();
    expect(urls.ethernet).toBeUndefined();
    const auth = { 'visual-token': (await http(client, 'POST', '/api/login', {}, { password: PASSWORD }, 'station')).json.token as string };
    expect((await http(client, 'GET', '/backup', auth, undefined, 'station')).status).toBe(404);
    expect((await http(client, 'PUT', '/backup', auth, '{"scene":2}', 'station')).status).toBe(200);
    const got = await http(client, 'GET', '/backup', auth, undefined, 'station');
    expect(got.status).toBe(200);
    expect(got.text).toBe('{"scene":2}');
    expect((await http(client, 'GET', '/backup', { 'provisioning-token': 'x'.repeat(32) }, undefined, 'station')).status).toBe(403);
    await client.close();
    // With the broker up (the board's own MQTT client, over its station): connected, and its status published.
    const broker = await startBroker('aedes', mqttPort);
    try {
      const online = await boot();
      expect(online.bootResult).toMatchObject({ role: 'client', provisioning: 'configured', normal: 'mqtt_connected' });
      // QoS 0: the board's publish is done once written; the broker reads it a moment later.
      await expect.poll(() => broker.connections).toContain(identity.uuid);
      await expect.poll(() => broker.publishes).toContainEqual({ clientId: identity.uuid, topic: `devices/${identity.uuid}/status`, payload: JSON.stringify({ state: 'online', version: '2026.01.01' }) });
      const connected = consoleStatus(await online.typeLine('status'));
      expect(connected.mqtt).toMatchObject({ state: 'connected', broker: `127.0.0.1:${mqttPort}`, problem: null });
      expect(connected.mqtt.since === null || !Number.isNaN(Date.parse(connected.mqtt.since))).toBe(true);
      // Retained: a subscriber that comes later reads it; when the board goes without a DISCONNECT, its will says offline.
      expect(await retainedStatus(mqttPort, identity.uuid)).toBe(JSON.stringify({ state: 'online', version: '2026.01.01' }));
      await online.close();
      await expect.poll(() => retainedStatus(mqttPort, identity.uuid), { timeout: 10_000 }).toBe('{"state":"offline"}');
    } finally {
      await broker.close();
    }
  });
});
