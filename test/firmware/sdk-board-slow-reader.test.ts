// A board that reads more slowly than its sender gets every download whole (issue 31). The reader is
// made slow on purpose by the flash's own time (firmware/virtual-esp32/flash-timing.ts): the GD25Q64C's
// typical page program and sector erase make a 512 KB backup take seconds to write, while the cloud on
// loopback sends it in milliseconds. The firmware reads the response only as fast as it writes it
// (hal/http-exchange.ts), so TCP holds the sender back: a 512 KB cloud backup and a 1.5 MB OTA image
// arrive byte for byte, with the chunk heap's peak what it is on a board whose flash takes no time.
// A sender that stalls mid-body still ends in the backup client's no-progress time-out (30 s).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { type HeapFigures, SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { firmwareImage, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import type { FlashTimingOption } from '../../firmware/virtual-esp32/flash-timing.ts';
import { backupOfSize } from '../../tools/bench/firmware-bench-lib.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const PASSWORD = 'slow-reader-password';
const BACKUP_BYTES = 524_256; // the largest local backup (docs: its FFCE blob is 512 KB)
const IMAGE_BYTES = 1536 * 1024;
const SLOT_1 = 0x310000;
const SAMPLE_MS = 20;
/**
 * One download piece (hal/http-exchange.ts RESPONSE_PIECE_BYTES, 4 KB) and its ArrayBuffer's header.
 * Where a sample falls, the slow board holds a whole piece where the fast one holds the window's
 * remainder (lwIP's 5,760-byte window read as 4,096 + 1,664): measured, the image's peaks differ by
 * 23,224 - 20,792 = 2,432 = 4,096 - 1,664, every run. The backup's piece is decrypted as it is
 * written, so its plaintext (as long as the piece, less 16 bytes held back for the tag) is live beside
 * it: two pieces (measured 4,016 and 4,496 bytes over the fast board). A board that queued what the
 * sender sent ahead would hold hundreds of KB: the sender on loopback is done in milliseconds.
 */
const PIECE_SLACK = 4096 + 64;
const IMAGE_SLACK = PIECE_SLACK;
const BACKUP_SLACK = 2 * PIECE_SLACK;

let cloud: TestCloud;
let dir: string;
let image: Buffer;
const boards: SdkBoard[] = [];

function identityOf(n: number): DeviceIdentity {
  const hex = n.toString(16).padStart(2, '0').toUpperCase();
  return { uuid: `ctl-slow-${n}`, role: 'controller', ethernetMac: `24:0A:C4:E0:31:${hex}`, wifiMac: `24:0A:C4:10:31:${hex}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' };
}

async function api(b: SdkBoard, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string) {
  const res = await fetch(b.urls.ethernet! + path, { method, headers, ...(body !== undefined ? { body } : {}) });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: res.status, bytes, json };
}

/** A board enrolled with the cloud, sampling its heaps (SAMPLE_MS) into `samples`. */
async function boardAt(n: number, flashTiming: FlashTimingOption, cloudUrl: string) {
  const samples: HeapFigures[] = [];
  const board = await startSdkBoard({ identity: identityOf(n), fuseKeyHex: n.toString(16).padStart(2, '0').repeat(32), flashDir: join(dir, `board-${n}`), adminPassword: PASSWORD, flashTiming, heapSampleMs: SAMPLE_MS, onHeapSample: (f) => samples.push({ ...f }) });
  boards.push(board);
  const login = await api(board, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }));
  const auth = { 'visual-token': login.json.token as string };
  const pem = JSON.parse((await board.typeLine('pubkey')).slice(3)).public_key_pem as string;
  expect((await cloud.admin('PUT', `/admin/devices/${board.identity.uuid}`, { public_key: pem })).status).toBe(201);
  expect(await board.typeLine(`cloud ${cloudUrl}`)).toMatch(/^OK /);
  return { board, auth, samples, flashImage: join(dir, `board-${n}.bin`) };
}

/** The most chunk bytes live in the samples taken while `work` ran. */
async function chunkPeakDuring(samples: HeapFigures[], work: () => Promise<void>): Promise<number> {
  const from = samples.length;
  await work();
  const during = samples.slice(from);
  expect(during.length).toBeGreaterThan(2);
  return Math.max(...during.map((s) => s.chunkBytes));
}

/** A 512 KB backup pushed to the cloud, the local copy deleted, then retrieved: downloaded, decrypted and written to flash. */
async function retrieveBackup(b: Awaited<ReturnType<typeof boardAt>>, backup: string): Promise<number> {
  expect((await api(b.board, 'PUT', '/backup', b.auth, backup)).status).toBe(200);
  expect((await api(b.board, 'POST', '/api/cloud-backup', b.auth)).status).toBe(200);
  expect((await api(b.board, 'DELETE', '/backup', b.auth)).status).toBe(204);
  return chunkPeakDuring(b.samples, async () => {
    const r = await api(b.board, 'GET', '/api/cloud-backup', b.auth);
    expect(r.status).toBe(200);
    expect(createHash('sha256').update(r.bytes).digest('hex')).toBe(createHash('sha256').update(backup).digest('hex'));
  });
}

/** The 1.5 MB release installed: downloaded into the passive slot byte for byte. */
async function installImage(b: Awaited<ReturnType<typeof boardAt>>): Promise<number> {
  return chunkPeakDuring(b.samples, async () => {
    const answer = await b.board.typeLine('ota check');
    expect(JSON.parse(answer.slice(3))).toEqual({ kind: 'installed', version: '2026.02.01', size: image.length });
    const flash = readFileSync(b.flashImage);
    expect(flash.subarray(SLOT_1, SLOT_1 + image.length).equals(image)).toBe(true);
  });
}

beforeAll(async () => {
  cloud = await startTestCloud();
  dir = mkdtempSync(join(tmpdir(), 'slow-reader-'));
  image = Buffer.from(await firmwareImage('2026.02.01', { variant: variantOf(identityOf(1)), dataBytes: 0 }));
  image = Buffer.from(await firmwareImage('2026.02.01', { variant: variantOf(identityOf(1)), dataBytes: IMAGE_BYTES - image.length }));
  expect(image.length).toBeGreaterThanOrEqual(IMAGE_BYTES);
  const up = await fetch(`${cloud.url}/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01/image`, { method: 'PUT', headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/octet-stream' }, body: image });
  expect(up.status).toBe(201);
}, 180_000);
afterAll(async () => {
  await Promise.all(boards.splice(0).map((b) => b.close()));
  await cloud?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a board whose flash takes its time reads its downloads at the flash's pace", () => {
  // Each download on a board of its own, fresh: the automatic cloud backup (30 s after boot) is then
  // never running beside it (it would push the 512 KB backup meanwhile, and its heap would count).
  it('gets a 512 KB cloud backup and a 1.5 MB OTA image whole, its chunk heap peak within one download piece of a flash that takes no time', { timeout: 300_000 }, async () => {
    const backup = backupOfSize(BACKUP_BYTES);
    const fastBackupPeak = await retrieveBackup(await boardAt(1, 'off', cloud.url), backup);
    const slowBackupBoard = await boardAt(2, 'typical', cloud.url);
    const started = Date.now();
    const slowBackupPeak = await retrieveBackup(slowBackupBoard, backup);
    const slowSeconds = (Date.now() - started) / 1000;
    const fastImagePeak = await installImage(await boardAt(3, 'off', cloud.url));
    const slowImagePeak = await installImage(await boardAt(4, 'typical', cloud.url));
    console.log(`slow reader: chunk heap peak during the backup ${slowBackupPeak} bytes (flash without time: ${fastBackupPeak}), during the image ${slowImagePeak} (${fastImagePeak}); the slow board's backup took ${slowSeconds.toFixed(1)} s`);

    // At most the piece the flash is writing live beyond the fast board (and, for the backup, its
    // plaintext) where a sample falls; a queue of what the sender sent ahead would be hundreds of KB.
    expect(slowBackupPeak).toBeLessThanOrEqual(fastBackupPeak + BACKUP_SLACK);
    expect(slowImagePeak).toBeLessThanOrEqual(fastImagePeak + IMAGE_SLACK);
  });
});

describe('a sender that stalls mid-body', () => {
  let stalling: Server;
  let held: import('node:http').ServerResponse[] = [];

  afterAll(async () => {
    for (const res of held) res.destroy();
    await new Promise<void>((r) => (stalling ? stalling.close(() => r()) : r()));
  });

  it('ends in the no-progress time-out (30 s), and the local backup is unchanged', { timeout: 120_000 }, async () => {
    // A cloud that answers the backup download with 512 KB announced, sends 64 KB, and then nothing.
    stalling = createServer((req, res) => {
      if (req.method !== 'GET' || !/\/backup$/.test(req.url ?? '')) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(512 * 1024), etag: '"00"' });
      res.write(Buffer.concat([Buffer.from('FFCE'), randomBytes(64 * 1024)]));
      held.push(res);
    });
    await new Promise<void>((r) => stalling.listen(0, '127.0.0.1', r));
    const b = await boardAt(5, 'typical', `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`);
    const local = Buffer.from('{"kept":true}');
    expect((await api(b.board, 'PUT', '/backup', b.auth, local)).status).toBe(200);

    const r = await api(b.board, 'GET', '/api/cloud-backup', b.auth);
    expect(r.status).toBe(409);
    expect(r.json.error).toBe('cloud_unreachable');
    expect(r.json.message).toMatch(/no progress for 30000 ms/);
    expect((await api(b.board, 'GET', '/backup', b.auth)).bytes.equals(local)).toBe(true);
  });
});
