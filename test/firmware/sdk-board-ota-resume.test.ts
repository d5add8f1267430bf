// A virtual board (the firmware the Moddable SDK builds for the host, SdkBoard) installs a release whose image the cloud hosts,
// through the manifest's url, while a proxy on loopback between board and cloud cuts the image's
// first download half way: the board reconnects, asks for the rest with a range request (If-Range:
// the image's ETag), checks the SHA-256 of the whole image and switches slots. Bytes fetched twice:
// at most one chunk (4 KB, what the OTA client takes at a time).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { firmwareImage, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { sha256Hex } from '../helpers/images.ts';

/** What the OTA client reads at a time (the platform's download pieces, hal/http-exchange.ts RESPONSE_PIECE_BYTES). */
const CHUNK_BYTES = 4096;
const SLOT_1 = 0x310000;

const identity: DeviceIdentity = {
  uuid: 'ctl-resume-01',
  role: 'controller',
  ethernetMac: '24:0A:C4:E0:00:21',
  wifiMac: '24:0A:C4:10:00:21',
  hardwareClass: 'ctl-s3',
  productHex: '0x00c0ffee',
  firmwareVersion: '2026.01.01',
  build: 'production',
};

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  status: number;
  /** Body bytes handed to the board. */
  sent: number;
}

/** An HTTP proxy on loopback that forwards to the cloud and cuts the first image response after `cutAt` bytes. */
function cuttingProxy(cutAt: number): { server: Server; seen: Seen[]; target: { url: string } } {
  const seen: Seen[] = [];
  const target = { url: '' };
  let cut = false;
  const server = createServer((req, res) => {
    const upstream = request(`${target.url}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
      const entry: Seen = { path: req.url ?? '', headers: req.headers, status: up.statusCode ?? 0, sent: 0 };
      seen.push(entry);
      res.writeHead(up.statusCode ?? 502, up.headers);
      const image = (req.url ?? '').startsWith('/images/');
      up.on('data', (chunk: Buffer) => {
        if (image && !cut && entry.sent + chunk.length >= cutAt) {
          cut = true;
          const part = chunk.subarray(0, cutAt - entry.sent);
          entry.sent += part.length;
          up.destroy();
          // The bytes before the cut reach the board, then the connection drops.
          res.write(part, () => res.socket?.destroy());
          return;
        }
        entry.sent += chunk.length;
        res.write(chunk);
      });
      up.on('end', () => res.end());
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return { server, seen, target };
}

let cloud: TestCloud;
let proxy: ReturnType<typeof cuttingProxy>;
let proxyUrl: string;
let dir: string;
let image: Buffer;

beforeAll(async () => {
  // The board's own build at the next version (another configuration would be another SDK build).
  image = Buffer.from(await firmwareImage('2026.02.01', { variant: variantOf(identity) }));
  proxy = cuttingProxy(Math.floor(image.length * 0.45));
  await new Promise<void>((r) => proxy.server.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
  // Devices reach the cloud through the proxy: the hosted image's url starts there.
  cloud = await startTestCloud({ env: { PUBLIC_URL: proxyUrl } });
  proxy.target.url = cloud.url;
  dir = mkdtempSync(join(tmpdir(), 'sdk-ota-resume-'));
}, 120_000);
afterAll(async () => {
  await cloud?.close();
  await new Promise<void>((r) => (proxy ? proxy.server.close(() => r()) : r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('OTA from an image the cloud hosts, cut half way', () => {
  it('resumes with a range request and installs the image, fetching at most one chunk twice', { timeout: 180_000 }, async () => {
    const up = await fetch(`${cloud.url}/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01/image`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/octet-stream' },
      body: image,
    });
    expect(up.status).toBe(201);
    expect(((await up.json()) as any).url).toBe(`${proxyUrl}/images/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01.bin`);

    const board = await startSdkBoard({ identity, fuseKeyHex: '33'.repeat(32), flashDir: join(dir, 'flash'), adminPassword: 'bench-admin-password' });
    try {
      const key = JSON.parse((await board.typeLine('pubkey')).slice(3)).public_key_pem as string;
      expect((await cloud.admin('PUT', `/admin/devices/${identity.uuid}`, { public_key: key })).status).toBe(201);
      expect(await board.typeLine(`cloud ${proxyUrl}`)).toMatch(/^OK /);

      const answer = await board.typeLine('ota check');
      expect(answer).toMatch(/^OK /);
      expect(JSON.parse(answer.slice(3))).toEqual({ kind: 'installed', version: '2026.02.01', size: image.length });

      // The check named the board (its health reports go to the cloud beside it, not counted here);
      // then two image requests: the cut one, and the rest by range.
      const checks = proxy.seen.filter((s) => s.path.startsWith('/ota/'));
      expect(checks).toHaveLength(1);
      expect(checks[0]).toMatchObject({ path: '/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=2026.01.01', status: 200 });
      expect(checks[0]!.headers['x-device-uuid']).toBe(identity.uuid);
      const downloads = proxy.seen.filter((s) => s.path.startsWith('/images/'));
      expect(downloads.map((d) => d.status)).toEqual([200, 206]);
      expect(downloads[0]!.headers.range).toBeUndefined();
      const resumedAt = Number(/^bytes=(\d+)-$/.exec(String(downloads[1]!.headers.range))?.[1]);
      expect(downloads[1]!.headers['if-range']).toBe(`"${sha256Hex(image)}"`);
      expect(resumedAt).toBeGreaterThan(0);
      expect(resumedAt).toBeLessThanOrEqual(downloads[0]!.sent);
      const fetchedTwice = downloads[0]!.sent + downloads[1]!.sent - image.length;
      expect(fetchedTwice).toBe(downloads[0]!.sent - resumedAt);
      expect(fetchedTwice).toBeLessThanOrEqual(CHUNK_BYTES);
      expect(downloads[0]!.sent).toBeGreaterThan(image.length * 0.4);

      // The whole image, byte for byte, in the passive slot; the board reboots into it (a moment after
      // its answer, core/reboot.ts) and runs it.
      expect(readFileSync(join(dir, 'flash.bin')).subarray(SLOT_1, SLOT_1 + image.length).equals(image)).toBe(true);
      await expect.poll(() => board.reboots, { timeout: 10_000 }).toContain('ota 2026.02.01');
      await board.settled();
      expect(board.runningImage?.partition.name).toBe('ota_1');
      expect(board.identity.firmwareVersion).toBe('2026.02.01');

      // The inventory saw the check and the offer.
      await cloud.cloud.inventory.flush();
      const device = (await cloud.adminJson('GET', `/admin/devices/${identity.uuid}`)).body;
      expect(device).toMatchObject({ last_check: { version: '2026.01.01', class: 'ctl-s3' }, offer: { version: '2026.02.01', from_version: '2026.01.01' } });
    } finally {
      await board.close();
    }
  });
});
