// Controller provisioning between two boards whose firmware runs in XS, over real loopback sockets
// through a shared virtual air: the target joins the source's SoftAP with its Ethernet MAC, copies
// every record and the backup, shows the outcome and reboots.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/host/air.ts';
import { XsBoard } from '../../firmware/host/xs-board.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';

const PASSWORD = 'bench-admin-password';
let dir: string;
const boards: XsBoard[] = [];

function id(n: number): DeviceIdentity {
  const h = n.toString(16).padStart(2, '0').toUpperCase();
  return { uuid: `ctl-${n}`, role: 'controller', ethernetMac: `24:0A:C4:E0:00:${h}`, wifiMac: `24:0A:C4:10:00:${h}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' };
}

async function start(n: number, air: VirtualAir): Promise<XsBoard> {
  const b = await XsBoard.start({ identity: id(n), fuseKeyHex: n.toString(16).padStart(2, '0').repeat(32), flashDir: join(dir, `flash-${n}`), adminPassword: PASSWORD, air, settings: { resultDisplayMs: 300 } });
  boards.push(b);
  return b;
}

async function http(b: XsBoard, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await fetch(b.urls.ethernet + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

async function login(b: XsBoard) {
  return { 'visual-token': (await http(b, 'POST', '/api/login', {}, { password: PASSWORD })).json.token as string };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'xs-prov-'));
});
afterEach(async () => {
  await Promise.all(boards.splice(0).map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('controller provisioning in XS over the virtual air', () => {
  it('copies 3 controllers, 4 clients and the backup; "Prov OK 3C 4L" / "Prov OK got backup"; reboots', async () => {
    const air = new VirtualAir();
    const source = await start(1, air);
    const auth = await login(source);
    const backup = JSON.stringify({ outputs: [{ id: 1, name: 'Deck light' }] });
    expect((await http(source, 'PUT', '/api/controllers/ctl-2', auth, { ethernet_mac: id(2).ethernetMac })).status).toBe(201);
    for (const n of [3, 4]) await http(source, 'PUT', `/api/controllers/ctl-${n}`, auth, { ethernet_mac: id(n).ethernetMac });
    for (let i = 0; i < 4; i++) await http(source, 'PUT', `/api/clients/lamp-${i}`, auth, { mac: `02:00:00:C0:00:0${i}`, wifi: { ssid: 'plant', password: 'x12345678' }, mqtt: { host: '127.0.0.1', port: 1883 } });
    await http(source, 'PUT', '/backup', auth, backup);
    const on = await http(source, 'PUT', '/api/provisioning', auth);
    expect(on.status).toBe(200);
    expect(source.softAp).toMatchObject({ ssid: 'Device-Provisioning', txPowerDbm: 2 });

    const target = await start(2, air);
    expect(target.bootResult).toMatchObject({ role: 'controller', provisioning: { kind: 'finished', ok: true, controllers: [3, 3], clients: [4, 4], backup: 'received' } });
    expect(target.display).toEqual(['Prov OK 3C 4L', 'Prov OK got backup']);
    expect(target.events.some((e) => e.message === 'Prov OK 3C 4L / Prov OK got backup')).toBe(true);
    const tauth = await login(target);
    expect((await http(target, 'GET', '/api/clients', tauth)).json).toEqual(['lamp-0', 'lamp-1', 'lamp-2', 'lamp-3']);
    expect((await http(target, 'GET', '/api/controllers', tauth)).json).toEqual(['ctl-2', 'ctl-3', 'ctl-4']);
    const got = await fetch(`${target.urls.ethernet}/backup`, { headers: tauth });
    expect(await got.text()).toBe(backup);
    expect(got.headers.get('etag')).toBe(`"${createHash('sha256').update(backup).digest('hex')}"`);
    await new Promise((r) => setTimeout(r, 500));
    expect(target.reboots).toEqual(['provisioned']);
  });

  it('a target whose Ethernet MAC is not registered makes the source shut its SoftAP down', async () => {
    const air = new VirtualAir();
    const source = await start(5, air);
    const auth = await login(source);
    await http(source, 'PUT', '/api/clients/lamp-0', auth, { mac: '02:00:00:C0:00:01' });
    await http(source, 'PUT', '/api/provisioning', auth);
    const target = await start(6, air);
    expect(target.bootResult).toMatchObject({ provisioning: { kind: 'connect_failed' } });
    expect(source.softAp).toBeNull();
    expect(source.display.join(' ')).toContain(id(6).ethernetMac);
    expect(source.events.some((e) => e.level === 'warning' && e.message.includes('not in the allowlist'))).toBe(true);
  });
});
