// The heap budget of a controller on the chip's own heaps: virtual boards run the firmware the
// Moddable SDK built for the host (SdkBoard), in XS created as on the esp32s3 (78,848 chunk bytes,
// 4,927 slots, a JavaScript stack of 512 slots), and the firmware's own XS counters are read
// (SdkBoard.heap; the stack's peak from the instrumented build). An out-of-memory is XS's own abort.
//
// The limits come from measurements (the bench: npm run bench:firmware), with a margin so that a
// change that needs markedly more fails here before it fails on a board:
// - live (after a collection, sampled every 10 ms while the board works: a sample is taken by the
//   firmware's main loop between two of its events):
//     the target procedure (4 C, 24 L, 128 KB backup) measured 1,485-1,533 slots and 22-45 KB of
//     chunks (the chunk figure depends on where the samples fall: a backup segment in flight);
//     requests on a configured controller 1,324 slots and 12-16 KB.
//   Limits: 2,300 slots (1.5 x the measured peak; under half of 4,927) and 59,136 chunk bytes (three
//   quarters of the chunk heap: a quarter stays free at every sample).
// - the JavaScript stack (its deepest point, exact: the instrumented build's low-water mark, kept
//   across the SDK's once-a-second instrumentation samples by natives/fw_host_channel.c): measured 256
//   slots in the boot and target procedure, 381 for a login, 414 for PUT /api/provisioning, 417 for a
//   cloud backup retrieve and 422 for a cloud push (the deepest measured; the bench). Limit: 448 (an
//   eighth of the 512 left).
// Not timed: figures of memory, not of speed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { type HeapFigures, SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { backupOfSize, boardApi as http, controllerIdentity } from '../../tools/bench/firmware-bench-lib.ts';
import { measure } from '../../tools/bench/heap-probe.ts';
import { ESP32S3, LIVE_CHUNK_LIMIT, LIVE_SLOT_LIMIT, STACK_LIMIT } from './fixtures/heap-limits.ts';

/** How many more slots the board may hold live after the procedure than when it started it. */
const GROWTH_TOLERANCE = 64;
const SAMPLE_MS = 10;

const PASSWORD = 'heap-budget-password';
const CONTROLLERS = 4;
const CLIENTS = 24;
let dir: string;
const boards: SdkBoard[] = [];

const identity = (n: number) => controllerIdentity(n, 'budget-ctl');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'heap-budget-'));
});
afterAll(async () => {
  await Promise.all(boards.splice(0).map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('heap budget of a controller on the esp32s3 heaps', () => {
  let target: SdkBoard;

  it(`the target procedure (${CONTROLLERS} C, ${CLIENTS} L, 128 KB backup) holds at most ${LIVE_SLOT_LIMIT} slots and ${LIVE_CHUNK_LIMIT} chunk bytes live, its stack below ${STACK_LIMIT} slots, and nothing accumulates`, async () => {
    const air = new VirtualAir();
    const source = await startSdkBoard({ identity: identity(1), fuseKeyHex: '01'.repeat(32), flashDir: join(dir, 'source'), adminPassword: PASSWORD, air, panel: false });
    boards.push(source);
    const auth = { 'visual-token': (await http(source, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token, 'content-type': 'application/json' };
    await http(source, 'PUT', '/api/controllers/budget-ctl-2', auth, JSON.stringify({ ethernet_mac: identity(2).ethernetMac, name: 'target' }));
    for (let i = 0; i < CONTROLLERS - 1; i++) await http(source, 'PUT', `/api/controllers/ctl-${i}`, auth, JSON.stringify({ ethernet_mac: identity(100 + i).ethernetMac, name: `controller ${i}` }));
    for (let i = 0; i < CLIENTS; i++) {
      await http(source, 'PUT', `/api/clients/lamp-${i}`, auth, JSON.stringify({ mac: identity(200 + i).wifiMac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
    }
    await http(source, 'PUT', '/backup', auth, backupOfSize(128 * 1024));
    await http(source, 'PUT', '/api/provisioning', auth);

    // The procedure runs in the target's boot: the board samples its own heaps from its start.
    const samples: HeapFigures[] = [];
    target = await startSdkBoard({ identity: identity(2), fuseKeyHex: '02'.repeat(32), flashDir: join(dir, 'target'), adminPassword: PASSWORD, air, heapSampleMs: SAMPLE_MS, onHeapSample: (f) => samples.push({ ...f }) });
    boards.push(target);
    const result = target.bootResult as { provisioning: { ok?: boolean; lines?: string[] } };
    expect(result.provisioning.lines).toEqual([`Prov OK ${CONTROLLERS}C ${CLIENTS}L`, 'Prov OK got backup']);
    const end = await target.heap({ collect: true });

    const live = { slots: Math.max(...samples.map((s) => s.slots)), chunkBytes: Math.max(...samples.map((s) => s.chunkBytes)) };
    process.stdout.write(`heap budget: target procedure live at most ${live.slots} slots, ${live.chunkBytes} chunk bytes (${samples.length} samples); stack peak ${end.stackPeak} of ${end.stackMax}; after it ${end.slots} slots, ${end.chunkBytes} bytes\n`);
    // The samples saw the procedure: more than a handful, on the chip's creation.
    expect(samples.length).toBeGreaterThanOrEqual(5);
    expect(end).toMatchObject({ chunkMaxBytes: ESP32S3.chunkBytes, slotMax: ESP32S3.slots, stackMax: ESP32S3.stackSlots });
    expect(live.slots).toBeLessThanOrEqual(LIVE_SLOT_LIMIT);
    expect(live.chunkBytes).toBeLessThanOrEqual(LIVE_CHUNK_LIMIT);
    expect(end.stackPeak).toBeGreaterThan(0);
    expect(end.stackPeak).toBeLessThanOrEqual(STACK_LIMIT);
    // Nothing the procedure handled (records, the backup's segments) stays behind.
    expect(end.slots).toBeLessThanOrEqual(samples[0]!.slots + GROWTH_TOLERANCE);
  }, 120_000);

  it(`requests on the configured controller (login, backup GET and 64 KB PUT, records, provisioning mode) stay within ${LIVE_SLOT_LIMIT} slots and ${LIVE_CHUNK_LIMIT} bytes live, the stack below ${STACK_LIMIT}`, async () => {
    expect(target, 'the first test configured the target').toBeDefined();
    const figures = await measure(
      target,
      async () => {
        const auth = { 'visual-token': (await http(target, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token };
        await http(target, 'GET', '/backup', auth);
        await http(target, 'PUT', '/backup', auth, backupOfSize(64 * 1024));
        await http(target, 'GET', '/backup', auth);
        await http(target, 'GET', '/api/controllers', auth);
        await http(target, 'GET', '/api/clients', auth);
        for (let i = 0; i < 4; i++) await http(target, 'GET', `/api/clients/lamp-${i}`, auth);
        await http(target, 'PUT', '/api/clients/lamp-0', { ...auth, 'content-type': 'application/json' }, JSON.stringify({ mac: identity(200).wifiMac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-456' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
        await http(target, 'PUT', '/api/provisioning', auth);
        await http(target, 'GET', '/api/status', auth);
        await http(target, 'DELETE', '/api/provisioning', auth);
      },
      { sampleMs: SAMPLE_MS },
    );
    process.stdout.write(`heap budget: requests live at most ${figures.liveSlots} slots, ${figures.liveChunkBytes} chunk bytes (${figures.samples} samples); stack peak ${figures.stackPeak}\n`);
    expect(figures.samples).toBeGreaterThanOrEqual(5);
    expect(figures.liveSlots).toBeLessThanOrEqual(LIVE_SLOT_LIMIT);
    expect(figures.liveChunkBytes).toBeLessThanOrEqual(LIVE_CHUNK_LIMIT);
    expect(figures.stackPeak).toBeLessThanOrEqual(STACK_LIMIT);
    // (What requests leave live is state by design: a session per login, up to MAX_TOKENS, and the
    // SoftAP's objects until their timers end; so no growth check here.)
  }, 60_000);
});

describe('out of memory', () => {
  it('is what it is on a chip: XS aborts (memory full), the chip restarts through its bootloader, and the flash keeps the records and the backup', async () => {
    // `fault memory` exists in debug builds only (core/device.ts): it holds memory until the heap is full.
    const board = await startSdkBoard({ identity: { ...controllerIdentity(7, 'oom-ctl'), build: 'debug' }, fuseKeyHex: '07'.repeat(32), flashDir: join(dir, 'oom'), adminPassword: PASSWORD, panel: false });
    boards.push(board);
    const token = (await http(board, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token as string;
    const auth = { 'visual-token': token, 'content-type': 'application/json' };
    const backup = backupOfSize(32 * 1024);
    await http(board, 'PUT', '/backup', auth, backup);
    await http(board, 'PUT', '/api/controllers/ctl-kept', auth, JSON.stringify({ ethernet_mac: '02:00:00:E0:00:77', name: 'kept' }));
    await http(board, 'PUT', '/api/clients/lamp-kept', auth, JSON.stringify({ mac: '02:00:00:C0:00:77', wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
    const records = { controller: await http(board, 'GET', '/api/controllers/ctl-kept', auth), client: await http(board, 'GET', '/api/clients/lamp-kept', auth) };
    const etag = (await fetch(`${board.urls.ethernet}/backup`, { method: 'HEAD', headers: auth })).headers.get('etag');
    const pid = board.firmwarePid;
    const mark = board.consoleLines.length;

    board.uartReceive(new TextEncoder().encode('fault memory\n'));
    for (const until = Date.now() + 30_000; board.reboots.length === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    await board.settled();
    await board.boot();

    // The loader's exit status 65 (64 + XS's memory-full status 1) is what the board reads as this abort.
    expect(board.reboots).toEqual(['abort: memory full']);
    const after = board.consoleLines.slice(mark);
    const at = (re: RegExp) => after.findIndex((l) => re.test(l));
    expect(at(/^XS XS abort: memory full$/)).toBeGreaterThanOrEqual(0);
    expect(at(/^HOST firmware fault \(XS abort: memory full\): reset$/)).toBeGreaterThan(at(/^XS XS abort: memory full$/));
    // Then the ROM and the bootloader, as after a panic, and the firmware's boot again.
    expect(at(/^rst:0x/)).toBeGreaterThan(at(/^HOST firmware fault/));
    expect(at(/boot: Loaded app from partition/)).toBeGreaterThan(at(/^rst:0x/));
    expect(at(/^EVT \{"event":"target_provisioning"/)).toBeGreaterThan(at(/boot: Loaded app from partition/));
    expect(after.some((l) => l.startsWith('OK '))).toBe(false); // the command never answered
    expect(board.firmwarePid).toBeDefined();
    expect(board.firmwarePid).not.toBe(pid);

    // The RAM is gone (the session with it); the flash is not.
    expect((await fetch(`${board.urls.ethernet}/api/status`, { headers: auth })).status).toBe(401);
    const again = { 'visual-token': (await http(board, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token };
    const get = await fetch(`${board.urls.ethernet}/backup`, { headers: again });
    expect(get.status).toBe(200);
    expect(get.headers.get('etag')).toBe(etag);
    expect(await get.text()).toBe(backup);
    expect(await http(board, 'GET', '/api/controllers/ctl-kept', again)).toEqual(records.controller);
    expect(await http(board, 'GET', '/api/clients/lamp-kept', again)).toEqual(records.client);
  }, 120_000);
});
