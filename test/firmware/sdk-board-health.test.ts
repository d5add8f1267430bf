// A board's own health reports (docs/device-health.md) from the firmware the Moddable SDK builds for the
// host, on virtual boards: why each run ended (power-on, a software reboot and who asked, XS aborting
// for memory full or an exception nobody caught, the task watchdog), kept across the reset as the
// chip keeps it (RTC memory), the heartbeat within its 256 bytes, every report signed as a backup
// upload is, sent oldest first, and waiting in a bounded ring on flash while the cloud does not take
// it. The cloud here is an HTTP server on loopback that keeps what it is sent (the cloud's own ingest:
// test/cloud/health*.test.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RING_CAPACITY } from '../../firmware/src/core/health/ring.ts';
import { MAX_HEARTBEAT_BYTES } from '../../firmware/src/core/health/reports.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { controllerIdentity } from '../../tools/bench/firmware-bench-lib.ts';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  report: Record<string, any>;
  bytes: number;
}

/** The ingest route of the cloud, as far as a board is concerned: 201 for each report (200 for one it has), or `status` while set. */
class Ingest {
  readonly received: Received[] = [];
  status: number | null = null;
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || !/^\/devices\/[^/]+\/health$/.test(req.url ?? '')) return void res.writeHead(404).end();
        if (this.status !== null) return void res.writeHead(this.status, { 'content-type': 'application/json' }).end('{"error":"busy","message":"try later"}');
        const body = Buffer.concat(chunks);
        const report = JSON.parse(body.toString('utf8'));
        // A report sent again (the board reset before it read the answer) is answered 200 and kept once, as the cloud does.
        const again = this.received.some((r) => r.headers['x-device-uuid'] === req.headers['x-device-uuid'] && r.report.seq === report.seq);
        if (!again) this.received.push({ headers: req.headers, report, bytes: body.length });
        res.writeHead(again ? 200 : 201, { 'content-type': 'application/json' }).end(JSON.stringify({ seq: report.seq }));
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  /** What `uuid` sent of `kind`, in the order it came. */
  reports(uuid: string, kind: string): Record<string, any>[] {
    return this.received.filter((r) => r.headers['x-device-uuid'] === uuid && r.report.kind === kind).map((r) => r.report);
  }

  /** Waits until `n` reports of `kind` have come from `uuid`. */
  async await(uuid: string, kind: string, n: number, timeoutMs = 30_000): Promise<Record<string, any>[]> {
    for (const until = Date.now() + timeoutMs; this.reports(uuid, kind).length < n; ) {
      if (Date.now() > until) throw new Error(`${n} ${kind} reports of ${uuid} awaited, ${this.reports(uuid, kind).length} came: ${JSON.stringify(this.received.map((r) => r.report))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.reports(uuid, kind);
  }
}

const PASSWORD = 'health-board-password';
let dir: string;
const ingest = new Ingest();
const boards: SdkBoard[] = [];

async function debugBoard(n: number): Promise<SdkBoard> {
  // Debug builds have the `fault` console command (core/device.ts); the flash takes no time here:
  // nothing this file checks depends on it.
  const board = await startSdkBoard({ identity: { ...controllerIdentity(n, 'health-ctl'), build: 'debug' }, fuseKeyHex: n.toString(16).padStart(2, '0').repeat(32), flashDir: join(dir, `board-${n}`), adminPassword: PASSWORD, panel: false, flashTiming: 'off' });
  boards.push(board);
  expect(await board.typeLine(`cloud ${ingest.url}`)).toMatch(/^OK /);
  return board;
}

/** Types a fault and waits for the board to be back after the reset it causes (`fault memory` never answers: the heap is full first). */
async function crash(board: SdkBoard, fault: string): Promise<void> {
  const before = board.reboots.length;
  if (fault === 'memory') board.uartReceive(new TextEncoder().encode('fault memory\n'));
  else expect(await board.typeLine(`fault ${fault}`)).toMatch(/^OK /);
  for (const until = Date.now() + 30_000; board.reboots.length === before && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
  await board.settled();
  await board.boot();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'board-health-'));
  await ingest.start();
});
afterAll(async () => {
  await Promise.all(boards.splice(0).map((b) => b.close()));
  await ingest.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('why each run ended, reported at the next boot', () => {
  it('power-on, a reboot asked on the console, memory full, an exception nobody caught, the task watchdog', { timeout: 180_000 }, async () => {
    const board = await debugBoard(1);
    const uuid = board.identity.uuid;
    const [first] = await ingest.await(uuid, 'boot', 1);
    expect(first).toMatchObject({ kind: 'boot', reason: 'power_on', slot: 'ota_0', ota: 'valid', fw: '2026.01.01', sv: 0, boots: 1, dropped: 0 });
    expect(first!.crash).toBeUndefined();
    // Uptime counts from this boot, as the chip's ticks do (the host build's ticks are the epoch's).
    expect(first!.up).toBeLessThan(600);
    // Signed as a backup upload is: the board's UUID, a nonce, its time and the signature over them.
    const signed = ingest.received[0]!.headers;
    expect(signed['x-device-uuid']).toBe(uuid);
    expect(Buffer.from(String(signed['x-device-nonce']), 'base64')).toHaveLength(32);
    expect(String(signed['x-device-timestamp'])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(String(signed['x-device-signature']).length).toBeGreaterThan(60);

    expect(await board.typeLine('reboot')).toMatch(/^OK /);
    for (const until = Date.now() + 30_000; board.reboots.length === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    await board.settled();
    await board.boot();
    expect((await ingest.await(uuid, 'boot', 2))[1]).toMatchObject({ reason: 'software', by: 'console', boots: 2 });

    await crash(board, 'memory');
    const oom = (await ingest.await(uuid, 'boot', 3))[2]!;
    expect(oom).toMatchObject({ reason: 'abort', crash: { kind: 'memory_full', message: 'memory full' }, boots: 3 });

    await crash(board, 'throw');
    expect((await ingest.await(uuid, 'boot', 4))[3]).toMatchObject({ reason: 'abort', crash: { kind: 'unhandled_exception', message: 'injected fault: an exception nobody catches' } });

    await crash(board, 'hang');
    expect((await ingest.await(uuid, 'boot', 5))[4]).toMatchObject({ reason: 'watchdog', boots: 5 });
    expect(board.reboots).toEqual(['console', 'abort: memory full', expect.stringMatching(/^abort: unhandled exception/), 'watchdog: the main loop did not answer']);
    // The numbers never repeat and never go back.
    const seqs = ingest.received.filter((r) => r.headers['x-device-uuid'] === uuid).map((r) => r.report.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});

describe('the heartbeat and the ring', () => {
  it('a heartbeat fits in 256 bytes and says the heaps, the chip heap and the boots since the last', { timeout: 60_000 }, async () => {
    const board = await debugBoard(2);
    const uuid = board.identity.uuid;
    await ingest.await(uuid, 'boot', 1);
    const answer = await board.typeLine('health now');
    expect(answer).toMatch(/^OK /);
    const beat = (await ingest.await(uuid, 'heartbeat', 1)).at(-1)!;
    const wire = ingest.received.find((r) => r.report === beat)!;
    expect(wire.bytes).toBeLessThanOrEqual(MAX_HEARTBEAT_BYTES);
    expect(beat).toMatchObject({ kind: 'heartbeat', ota: 'valid', rssi: null, reboots: 1, dropped: 0 });
    expect(beat.chunk).toBeGreaterThan(4000);
    expect(beat.chunk_peak).toBeGreaterThanOrEqual(beat.chunk);
    expect(beat.slots).toBeGreaterThan(500);
    expect(beat.block).toBeGreaterThan(0);
    expect(beat.heap_min).toBeLessThanOrEqual(beat.block);
    expect(JSON.parse(answer.slice(3))).toEqual(beat);
    expect(await board.typeLine('health interval 60')).toMatch(/^ERR bad_interval .*300 to 86400 seconds/);
    expect(JSON.parse((await board.typeLine('health interval 900')).slice(3))).toMatchObject({ heartbeat_seconds: 900 });
  });

  it(`keeps what the cloud does not take in a ring of ${RING_CAPACITY} on flash, across a power cut, dropping the oldest, and sends it oldest first`, { timeout: 120_000 }, async () => {
    const board = await debugBoard(3);
    const uuid = board.identity.uuid;
    await ingest.await(uuid, 'boot', 1);
    ingest.status = 503;
    for (let i = 0; i < RING_CAPACITY + 5; i++) expect(await board.typeLine('health now')).toMatch(/^OK /);
    const status = JSON.parse((await board.typeLine('health')).slice(3));
    expect(status).toMatchObject({ waiting: RING_CAPACITY, dropped: 5, last_answer: '503' });
    // A power cut: the ring is on flash.
    await board.cutPower();
    const again = await startSdkBoard({ identity: { ...controllerIdentity(3, 'health-ctl'), build: 'debug' }, fuseKeyHex: '03'.repeat(32), flashDir: join(dir, 'board-3'), adminPassword: PASSWORD, panel: false, flashTiming: 'off' });
    boards.push(again);
    const before = ingest.received.length;
    ingest.status = null;
    await again.typeLine(`cloud ${ingest.url}`); // sends what waits at once
    const mine = () => ingest.received.slice(before).filter((r) => r.headers['x-device-uuid'] === uuid).map((r) => r.report);
    for (const until = Date.now() + 60_000; mine().length < RING_CAPACITY && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    const sent = mine();
    expect(sent.length).toBe(RING_CAPACITY);
    const seqs = sent.map((r) => r.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    // The power-on after the cut is the newest; the five oldest heartbeats (and the first boot report) went.
    expect(sent.at(-1)).toMatchObject({ kind: 'boot', reason: 'power_on', dropped: 5 }); // made before it pushed the sixth out
    // The cloud has the last report once its answer is written; the board forgets it once it has read
    // that answer, a moment later.
    let after = JSON.parse((await again.typeLine('health')).slice(3));
    for (const until = Date.now() + 10_000; after.waiting !== 0 && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 50));
      after = JSON.parse((await again.typeLine('health')).slice(3));
    }
    expect(after).toMatchObject({ waiting: 0, dropped: 6 });
  });
});
