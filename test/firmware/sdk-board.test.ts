// The firmware the Moddable SDK builds for the host, on a virtual ESP32-S3 (SdkBoard) that provides
// flash (an image file and a folder), the fuse key, NTP and loopback addresses per interface, against
// the real cloud: local backup over HTTP, cloud backup push/304/retrieve/delete, a replacement board
// that cannot decrypt, 409/503, the console, OTA (and the reboot into the new image), automatic
// backup, and flash that survives a restart.
import { createDecipheriv, createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { firmwareImage, firmwareOf, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const FUSE_A = '11'.repeat(32);
const FUSE_B = '22'.repeat(32);
const PASSWORD = 'bench-admin-password';
const identity: DeviceIdentity = {
  uuid: 'ctl-sdk-0001',
  role: 'controller',
  ethernetMac: '24:0A:C4:E0:00:01',
  wifiMac: '24:0A:C4:10:00:01',
  hardwareClass: 'ctl-s3',
  productHex: '0x00c0ffee',
  firmwareVersion: '2026.01.01',
  build: 'production',
};

let cloud: TestCloud;
let dir: string;
let board: SdkBoard;
let visual: Record<string, string>;
/** The automatic backup's build settings: seconds instead of 30 s and a day (a build of their own). */
const AUTO_BACKUP_SETTINGS = { cloudBackupFirstDelaySeconds: 0.3, cloudBackupIntervalSeconds: 0.6 };
const backupText = JSON.stringify({ inputs: [], outputs: Array.from({ length: 800 }, (_, i) => ({ id: i, name: `Light ${i}`, level: i % 100 })) });

async function http(b: SdkBoard, method: string, path: string, o: { headers?: Record<string, string>; body?: string | Buffer; iface?: 'ethernet' | 'softap' } = {}) {
  const res = await fetch(b.urls[o.iface ?? 'ethernet']! + path, { method, headers: o.headers ?? {}, body: o.body });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, json };
}

async function startBoard(o: { fuse?: string; flash?: string; id?: DeviceIdentity; settings?: object; synced?: boolean } = {}) {
  return startSdkBoard({
    identity: o.id ?? identity,
    fuseKeyHex: o.fuse ?? FUSE_A,
    flashDir: o.flash ?? join(dir, 'flash-a'),
    adminPassword: PASSWORD,
    // Build settings are compiled into the firmware: a board with settings runs a build of its own.
    ...(o.settings ? { settings: o.settings } : {}),
    clockSynchronized: o.synced ?? true,
  });
}

async function loginTo(b: SdkBoard) {
  const r = await http(b, 'POST', '/api/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  expect(r.status).toBe(200);
  return { 'visual-token': r.json.token as string };
}

/** Enrolls the board's key: 201 for a UUID the cloud does not know yet, 200 when it replaces a key. */
async function enrollFromConsole(b: SdkBoard, expectedStatus: 200 | 201 = 201) {
  const answer = await b.typeLine('pubkey');
  expect(answer).toMatch(/^OK /);
  const pem = JSON.parse(answer.slice(3)).public_key_pem as string;
  const res = await cloud.admin('PUT', `/admin/devices/${b.identity.uuid}`, { public_key: pem });
  expect(res.status).toBe(expectedStatus);
  expect(await b.typeLine(`cloud ${cloud.url}`)).toMatch(/^OK /);
}

beforeAll(async () => {
  cloud = await startTestCloud();
  dir = mkdtempSync(join(tmpdir(), 'sdk-board-'));
  board = await startBoard();
  visual = await loginTo(board);
}, 120_000);
afterAll(async () => {
  await board?.close();
  await cloud?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a controller on a virtual board', () => {
  it('boots unconfigured when no provisioning AP is in range, and serves each interface on its own loopback address', () => {
    expect(board.bootResult).toMatchObject({ role: 'controller', provisioning: { kind: 'no_ap' } });
    expect(board.urls.ethernet).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    // platform/moddable binds the SoftAP listener only while the SoftAP is up (it has no address before).
    expect(board.urls.softap).toBeUndefined();
    expect(board.consoleLines.some((l) => l.startsWith('LOG INFO boot: controller ctl-sdk-0001'))).toBe(true);
  });

  it('stores a local backup streamed over HTTP and answers it with its ETag', async () => {
    const put = await http(board, 'PUT', '/backup', { headers: visual, body: backupText });
    expect(put.status).toBe(200);
    const etag = createHash('sha256').update(backupText).digest('hex');
    expect(put.json.etag).toBe(etag);
    const get = await http(board, 'GET', '/backup', { headers: visual });
    expect(get.status).toBe(200);
    expect(get.bytes.toString()).toBe(backupText);
    expect(get.headers.get('etag')).toBe(`"${etag}"`);
    const head = await http(board, 'HEAD', '/backup', { headers: visual });
    expect(head.headers.get('etag')).toBe(`"${etag}"`);
    expect(readFileSync(join(dir, 'flash-a', 'backup.json'), 'utf8')).toBe(backupText);
    expect(readFileSync(join(dir, 'flash-a', 'backup.etag'), 'utf8')).toBe(etag);
  });

  it('refuses a provisioning-token header on the Ethernet listener (403); no SoftAP listener while provisioning mode is off', async () => {
    const r = await http(board, 'GET', '/api/controllers', { headers: { 'provisioning-token': 'x'.repeat(32) } });
    expect(r.status).toBe(403);
    expect(board.listening('softap')).toBe(false); // the SoftAP side: sdk-board-provisioning.test.ts
  });

  it('answers 409 for cloud backup before the cloud is configured, 503 while the clock is unsynchronized', async () => {
    expect((await http(board, 'POST', '/api/cloud-backup', { headers: visual })).status).toBe(409);
    await enrollFromConsole(board);
    // A board whose SNTP server does not answer: its clock stays unsynchronized (platform/moddable's
    // clock, once set by SNTP, stays set; so this is a second board that never reached its server).
    const unsynced = await startBoard({ flash: join(dir, 'flash-unsynced'), id: { ...identity, uuid: 'ctl-sdk-0009' }, synced: false });
    try {
      await enrollFromConsole(unsynced);
      unsynced.clockSynchronized = false;
      const r = await http(unsynced, 'POST', '/api/cloud-backup', { headers: await loginTo(unsynced) });
      expect(r.status).toBe(503);
      expect(r.json.error).toBe('clock_not_synchronized');
      unsynced.clockSynchronized = true;
    } finally {
      await unsynced.close();
    }
  });

  it('pushes the backup encrypted on-device: the cloud holds an FFCE blob only this fuse key opens; unchanged gives 304', async () => {
    const push = await http(board, 'POST', '/api/cloud-backup', { headers: visual });
    expect(push.status).toBe(200);
    expect(push.json.result).toBe('stored');
    const stored = await cloud.store.getBackup(identity.uuid);
    expect(stored).not.toBeNull();
    const blob = stored!.blob;
    expect(blob.subarray(0, 4).toString()).toBe('FFCE');
    expect(blob.includes(Buffer.from('Light 1'))).toBe(false);
    // Decrypt on Node with the key the design derives from the fuse key.
    const key = createHmac('sha256', Buffer.from(FUSE_A, 'hex')).update(Buffer.concat([Buffer.from('device-backup-v1'), Buffer.from([1])])).digest();
    const d = createDecipheriv('aes-256-gcm', key, blob.subarray(4, 16));
    d.setAAD(Buffer.from('FFCE'));
    d.setAuthTag(blob.subarray(blob.length - 16));
    expect(Buffer.concat([d.update(blob.subarray(16, blob.length - 16)), d.final()]).toString()).toBe(backupText);
    expect(stored!.etag).toBe(createHash('sha256').update(backupText).digest('hex'));
    const again = await http(board, 'POST', '/api/cloud-backup', { headers: visual });
    expect(again.status).toBe(200);
    expect(again.json.result).toBe('unchanged');
  });

  it('retrieves after the local copy is deleted: decrypts on-device and rewrites /backup.json and its ETag', async () => {
    expect((await http(board, 'DELETE', '/backup', { headers: visual })).status).toBe(204);
    const r = await http(board, 'GET', '/api/cloud-backup', { headers: visual });
    expect(r.status).toBe(200);
    expect(r.bytes.toString()).toBe(backupText);
    const local = await http(board, 'GET', '/backup', { headers: visual });
    expect(local.bytes.toString()).toBe(backupText);
    expect(local.headers.get('etag')).toBe(`"${createHash('sha256').update(backupText).digest('hex')}"`);
  });

  it('a replacement board (another fuse key, same UUID) cannot decrypt, and keeps its own local backup', async () => {
    const replacement = await startBoard({ fuse: FUSE_B, flash: join(dir, 'flash-b') });
    try {
      const auth = await loginTo(replacement);
      await http(replacement, 'PUT', '/backup', { headers: auth, body: '{"mine":true}' });
      await enrollFromConsole(replacement, 200);
      const r = await http(replacement, 'GET', '/api/cloud-backup', { headers: auth });
      expect(r.status).toBe(422);
      expect(r.json.error).toBe('backup_decrypt_failed');
      expect((await http(replacement, 'GET', '/backup', { headers: auth })).bytes.toString()).toBe('{"mine":true}');
    } finally {
      await replacement.close();
      await enrollFromConsole(board, 200); // the original board's key again
    }
  });

  it('deletes the cloud backup (204) and the local copy; then 404', async () => {
    const del = await http(board, 'DELETE', '/api/cloud-backup', { headers: visual });
    expect(del.status).toBe(204);
    expect(await cloud.store.getBackup(identity.uuid)).toBeNull();
    expect((await http(board, 'GET', '/backup', { headers: visual })).status).toBe(404);
    expect((await http(board, 'GET', '/api/cloud-backup', { headers: visual })).status).toBe(404);
    expect((await http(board, 'DELETE', '/api/cloud-backup', { headers: visual })).status).toBe(404);
    expect((await http(board, 'POST', '/api/cloud-backup', { headers: visual })).status).toBe(404);
  });

  it('keeps its flash across a restart', async () => {
    await http(board, 'PUT', '/backup', { headers: visual, body: '{"persist":1}' });
    await board.close();
    board = await startBoard();
    visual = await loginTo(board);
    expect((await http(board, 'GET', '/backup', { headers: visual })).bytes.toString()).toBe('{"persist":1}');
  });
});

describe('OTA and automatic backup on a virtual board', () => {
  let images: Server;
  let imageUrl: string;
  // ESP-IDF app images of the firmware at 2026.02.01 and 2026.03.01, as `fleet image build` makes them.
  let image: Buffer;
  let next: Buffer;

  beforeAll(async () => {
    // The same build as the board's (its variant): another configuration would be another SDK build.
    image = Buffer.from(await firmwareImage('2026.02.01', { variant: board.variant }));
    next = Buffer.from(await firmwareImage('2026.03.01', { variant: board.variant }));
    images = createServer((req, res) => {
      const bytes = req.url === '/next.bin' ? next : image;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
      res.end(bytes);
    });
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
    imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/fw.bin`;
    // The automatic backup's board runs a build with other settings, which the suite's set-up does not
    // build ahead: built here, outside the test's time limit (cached afterwards).
    await firmwareOf(variantOf(identity, { settings: AUTO_BACKUP_SETTINGS }));
  }, 600_000);
  afterAll(() => images.close());

  it('installs the next release after verifying size and SHA-256, and reboots into it', { timeout: 60_000 }, async () => {
    const sha256 = createHash('sha256').update(image).digest('hex');
    expect((await cloud.admin('PUT', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01', { url: imageUrl, size: image.length, sha256 })).status).toBe(201);
    const answer = await board.typeLine('ota check');
    expect(answer).toMatch(/^OK /);
    expect(JSON.parse(answer.slice(3))).toEqual({ kind: 'installed', version: '2026.02.01', size: image.length });
    // Written into the passive slot (ota_1 at 0x310000 of the flash image beside the folder).
    expect(readFileSync(join(dir, 'flash-a.bin')).subarray(0x310000, 0x310000 + image.length).equals(image)).toBe(true);
    // The reboot comes a moment after the answer (core/reboot.ts), through the bootloader into ota_1.
    await expect.poll(() => board.reboots, { timeout: 10_000 }).toContain('ota 2026.02.01');
    await board.settled();
    expect(board.runningImage?.partition.name).toBe('ota_1');
    expect(JSON.parse((await board.typeLine('status')).slice(3)).firmware_version).toBe('2026.02.01');
    await expect.poll(() => board.consoleLines).toContain('LOG INFO ota: firmware 2026.02.01 in ota_1 is up: marked valid, rollback cancelled');
  });

  it('refuses an image whose SHA-256 does not match, and treats a 409 from the cloud as a hard error', { timeout: 60_000 }, async () => {
    // On the board now running 2026.02.01 (a board of another product would be another firmware build).
    const nextUrl = imageUrl.replace(/fw\.bin$/, 'next.bin');
    await cloud.admin('PUT', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.03.01', { url: nextUrl, size: next.length, sha256: '00'.repeat(32) });
    expect(await board.typeLine('ota check')).toMatch(/^ERR hash_mismatch/);
    expect(board.reboots).toEqual(['ota 2026.02.01']);
    await cloud.admin('POST', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.03.01/revoke');
    await cloud.admin('POST', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01/revoke');
    await cloud.admin('PUT', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2025.12.01', { no_image: true });
    expect(await board.typeLine('ota check')).toMatch(/^ERR check_failed update check answered 409/);
    // Still the image it runs, still valid.
    expect(board.runningImage?.partition.name).toBe('ota_1');
    expect(JSON.parse((await board.typeLine('status')).slice(3)).firmware_version).toBe('2026.02.01');
  });

  it('backs up automatically after the first delay, skipping silently without /backup.json', { timeout: 60_000 }, async () => {
    const id = { ...identity, uuid: 'ctl-sdk-0003' };
    const auto = await startBoard({ flash: join(dir, 'flash-d'), id, settings: AUTO_BACKUP_SETTINGS });
    try {
      await enrollFromConsole(auto);
      await new Promise((r) => setTimeout(r, 800));
      expect(await cloud.store.getBackup(id.uuid)).toBeNull();
      expect(auto.events.filter((e) => e.source === 'backup')).toEqual([]);
      const auth = await loginTo(auto);
      await http(auto, 'PUT', '/backup', { headers: auth, body: '{"auto":true}' });
      // Generous, bounded waits: signing and encrypting on the firmware is slow on a loaded machine.
      let deadline = Date.now() + 20_000;
      while (Date.now() < deadline && !(await cloud.store.getBackup(id.uuid))) await new Promise((r) => setTimeout(r, 100));
      expect((await cloud.store.getBackup(id.uuid))?.etag).toBe(createHash('sha256').update('{"auto":true}').digest('hex'));
      const logged = () => auto.events.some((e) => e.source === 'backup' && /automatic cloud backup: stored/.test(e.message));
      deadline = Date.now() + 20_000;
      while (Date.now() < deadline && !logged()) await new Promise((r) => setTimeout(r, 50));
      expect(logged(), JSON.stringify({ events: auto.events, lastHostCalls: auto.trace })).toBe(true);
    } finally {
      await auto.close();
    }
  });
});
