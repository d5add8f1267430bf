// Every update ends in one outcome of the catalog (firmware/src/core/health/outcomes.ts), reported by
// the board itself (docs/device-health.md, "update"), each caused here on a virtual board running the
// firmware the Moddable SDK builds for the host: a download refused by its server, an image longer
// than announced, one whose SHA-256 is not the manifest's, one of another version, one the slot's
// esp_ota_end refuses, one larger than the slot, one that installs and then never comes up (the
// bootloader rolls it back), a power cut half way through the download, and one that succeeds.
// signature_invalid and secure_version_too_low: sdk-board-ota-signed-outcomes.test.ts; refused_unconfirmed:
// firmware/test-cases/health.cases.ts. The cloud is an HTTP server on loopback that answers the update
// check with the release the case sets, serves its image, and keeps the health reports.
import { createHash } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chipByName } from '../../firmware/image/chips.ts';
import { buildVirtualAppImage } from '../../firmware/image/virtual-payload.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { firmwareImage, UNLOADABLE_FIRMWARE, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { controllerIdentity } from '../../tools/bench/firmware-bench-lib.ts';

interface Release {
  version: string;
  image: Uint8Array;
  /** What the manifest says, when it is not the image's own. */
  size?: number;
  sha256?: string;
  /** The image's answer: 404, or cut after this many bytes and then nothing (a stalled sender). */
  imageStatus?: number;
  stallAfter?: number;
}

/** A cloud: the update check, the image, the health reports. */
class FakeCloud {
  release: Release | null = null;
  readonly reports: Record<string, any>[] = [];
  readonly stalled: ServerResponse[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.answer(req.method ?? '', req.url ?? '', Buffer.concat(chunks), res));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    for (const res of this.stalled) res.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }

  updates(version: string): Record<string, any>[] {
    return this.reports.filter((r) => r.kind === 'update' && r.version === version);
  }

  async awaitEnd(version: string, timeoutMs = 60_000): Promise<Record<string, any>[]> {
    const ended = () => this.updates(version).some((r) => r.outcome === 'succeeded' || r.outcome === 'failed');
    for (const until = Date.now() + timeoutMs; !ended(); ) {
      if (Date.now() > until) throw new Error(`no end of the update to ${version}: ${JSON.stringify(this.updates(version))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.updates(version);
  }

  private answer(method: string, url: string, body: Buffer, res: ServerResponse): void {
    if (method === 'POST' && /\/health$/.test(url)) {
      const report = JSON.parse(body.toString('utf8'));
      this.reports.push(report);
      return void res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ seq: report.seq }));
    }
    const r = this.release;
    if (url.startsWith('/ota/')) {
      if (!r) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no_release","message":"none"}');
      const manifest = { class: 'ctl-s3', product_hex: '0x00c0ffee', application: 'ctl-s3', version: r.version, status: 'RELEASED', released_at: '2026-11-28T00:00:00Z', url: `${this.url}/images/${r.version}.bin`, size: r.size ?? r.image.length, sha256: r.sha256 ?? createHash('sha256').update(r.image).digest('hex') };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(manifest));
    }
    if (r && url === `/images/${r.version}.bin`) {
      if (r.imageStatus) return void res.writeHead(r.imageStatus).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(r.image.length) });
      if (r.stallAfter === undefined) return void res.end(Buffer.from(r.image));
      res.write(Buffer.from(r.image.subarray(0, r.stallAfter)));
      this.stalled.push(res);
      return;
    }
    res.writeHead(404).end();
  }
}

const PASSWORD = 'outcomes-password';
const S3 = chipByName('esp32s3');
const identity = controllerIdentity(1, 'outcome-ctl');
let dir: string;
const cloud = new FakeCloud();
const boards: SdkBoard[] = [];

function startBoard(): Promise<SdkBoard> {
  // The flash takes no time: these cases are about how an update ends, and each writes an image.
  return startSdkBoard({ identity, fuseKeyHex: '5e'.repeat(32), flashDir: join(dir, 'board'), adminPassword: PASSWORD, panel: false, flashTiming: 'off' }).then((b) => {
    boards.push(b);
    return b;
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'update-outcomes-'));
  await cloud.start();
}, 60_000);
afterAll(async () => {
  await Promise.all(boards.splice(0).map((b) => b.close()));
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('how an update ends, reported by the board', () => {
  it('each failure the download and the slot can end in, then a success, then an image that never comes up, then a power cut half way', { timeout: 300_000 }, async () => {
    const variant = variantOf(identity);
    const next = Buffer.from(await firmwareImage('2026.02.01', { variant }));
    let board = await startBoard();
    expect(await board.typeLine(`cloud ${cloud.url}`)).toMatch(/^OK /);

    const failures: [string, Release, string][] = [
      ['download_failed', { version: '2026.02.01', image: next, imageStatus: 404 }, 'image download answered 404'],
      ['size_mismatch', { version: '2026.02.01', image: next, size: next.length - 1000 }, 'larger than'],
      ['hash_mismatch', { version: '2026.02.01', image: next, sha256: '00'.repeat(32) }, 'SHA-256 does not match'],
      ['image_mismatch', { version: '2026.02.01', image: Buffer.from(await firmwareImage('2026.09.01', { variant })) }, '2026.09.01'],
      ['no_space', { version: '2026.02.01', image: next, size: 0x300001 }, 'the passive slot holds'],
    ];
    // One byte of the firmware changed after the image was made: its appended SHA-256 no longer
    // agrees, which esp_ota_end finds (the manifest's SHA-256 is of the changed image).
    const damaged = Buffer.from(next);
    damaged[0x2000] = damaged[0x2000]! & (damaged[0x2000]! - 1);
    failures.push(['image_invalid', { version: '2026.02.01', image: damaged }, 'the passive slot refused the image']);
    for (const [reason, release, detail] of failures) {
      cloud.reports.length = 0;
      cloud.release = release;
      expect(await board.typeLine('ota check'), reason).toMatch(/^ERR /);
      const updates = await cloud.awaitEnd('2026.02.01');
      expect(updates.at(-1), reason).toMatchObject({ outcome: 'failed', reason, detail: expect.stringContaining(detail) });
      // The steps it had reached before, never one after its end.
      expect(updates.slice(0, -1).map((u) => u.outcome), reason).toEqual(reason === 'no_space' ? [] : reason === 'image_invalid' ? ['downloading', 'installing'] : ['downloading']);
    }

    // A success: downloaded, installed, rebooted into, confirmed.
    cloud.reports.length = 0;
    cloud.release = { version: '2026.02.01', image: next };
    expect(JSON.parse((await board.typeLine('ota check')).slice(3))).toMatchObject({ kind: 'installed', version: '2026.02.01' });
    await expect.poll(() => board.reboots, { timeout: 20_000 }).toContain('ota 2026.02.01');
    await board.settled();
    await board.boot();
    expect((await cloud.awaitEnd('2026.02.01')).map((u) => u.outcome)).toEqual(['downloading', 'installing', 'succeeded']);
    // Its boot report comes before it confirms itself: the new image is still on trial then.
    expect(cloud.reports.find((r) => r.kind === 'boot')).toMatchObject({ reason: 'software', by: 'ota 2026.02.01', fw: '2026.02.01', slot: 'ota_1', ota: 'pending_verify' });

    // An image that installs and never comes up: the bootloader rolls it back, and the board says so.
    cloud.reports.length = 0;
    cloud.release = { version: '2026.03.01', image: buildVirtualAppImage({ chip: S3, version: '2026.03.01', firmware: UNLOADABLE_FIRMWARE }) };
    expect(await board.typeLine('ota check')).toMatch(/^OK /);
    const ended = await cloud.awaitEnd('2026.03.01', 90_000);
    expect(ended.map((u) => u.outcome)).toEqual(['downloading', 'installing', 'failed']);
    expect(ended.at(-1)).toMatchObject({ reason: 'rolled_back', fw: '2026.02.01', detail: expect.stringContaining('did not come up') });
    expect(cloud.reports.find((r) => r.kind === 'boot')).toMatchObject({ reason: 'panic', rolled_back: { slot: 'ota_0', version: '2026.03.01' }, fw: '2026.02.01' });

    // The power goes half way through a download: the next boot reports where it was.
    cloud.reports.length = 0;
    cloud.release = { version: '2026.04.01', image: Buffer.from(await firmwareImage('2026.04.01', { variant })), stallAfter: 300_000 };
    board.uartReceive(new TextEncoder().encode('ota check\n'));
    // The image is asked for (the marker says downloading); while it downloads the board sends
    // nothing: the heap holds one download's exchange (core/health/reporter.ts).
    await expect.poll(() => cloud.stalled.length, { timeout: 20_000 }).toBe(1);
    expect(cloud.updates('2026.04.01')).toEqual([]);
    await board.cutPower();
    board = await startBoard();
    const interrupted = await cloud.awaitEnd('2026.04.01');
    expect(interrupted.at(-1)).toMatchObject({ outcome: 'failed', reason: 'interrupted', detail: 'the board reset while downloading', fw: '2026.02.01' });
  });
});
