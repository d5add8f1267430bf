// npm run bench:firmware: the firmware the Moddable SDK built for the host, on virtual boards
// (SdkBoard: XS created as on the esp32s3, 78,848 chunk bytes, 4,927 slots, 512 stack slots),
// measured with the firmware's own XS counters and the host's view of its process. Figures, never
// assertions: timings depend on the machine.
//
// Each case runs twice: a timing run, then a heap run that samples what is live (heap-probe.ts).
//   case <name> wall_ms=<ms> cpu_ms=<firmware CPU> live_chunk_bytes=<most live> live_slots=<most live>
//        stack_peak=<slots>/512 chunk_peak_bytes=<XS's peak, garbage included>
// HTTP throughput (one request at a time, as a browser or the configurator makes them):
//   http <name> requests=<n> req_per_s=<r> p50_ms=<ms> p99_ms=<ms> cpu_ms_per_request=<ms>
// Boots (a new board's first power-up, with the factory's flash programming, and a power-up of a
// board with a flash already), the target procedure of spec 3.6 at 10/50 and 20/100 records with a
// 512 KB backup, and the resident memory of each board's firmware process (VmRSS, VmHWM).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../cloud/config.ts';
import { startCloudServer } from '../../cloud/server.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { type HeapFigures, SdkBoard, startSdkBoard, VirtualAir } from '../../harness/virtual-board.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { backupOfSize, boardApi as http, controllerIdentity as identity, processRss } from './firmware-bench-lib.ts';
import { measure, throughput, type CaseFigures } from './heap-probe.ts';
import { API_PATHS, recordPath } from '../../firmware/src/core/api-paths.ts';

const PASSWORD = 'bench-admin-password';
const JWT_SECRET = 'bench-secret-0123456789';
/** How often a heap run samples what is live. */
const SAMPLE_MS = 10;
/** The esp32s3's creation. */
const ESP32S3 = { chunkBytes: 78_848, slots: 4927, stackSlots: 512 };

const out = (line: string) => process.stdout.write(`${line}\n`);
const kb = (bytes: number) => (bytes / 1024).toFixed(1);

function rssLine(name: string, b: SdkBoard): string {
  const { rssKb, peakKb } = processRss(b.firmwarePid);
  return `rss ${name} vm_rss_kb=${rssKb} vm_hwm_kb=${peakKb}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fw-bench-'));
  const store = new SqliteStore(':memory:');
  const cloud = await startCloudServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: ':memory:', JWT_SECRET }), { store, sink: () => undefined });
  const air = new VirtualAir();
  const boards: SdkBoard[] = [];
  const options = (n: number, extra: Partial<Parameters<typeof SdkBoard.start>[0]> = {}) => ({ identity: identity(n), fuseKeyHex: n.toString(16).padStart(2, '0').repeat(32), flashDir: join(dir, `flash-${n}`), adminPassword: PASSWORD, air, panel: false, ...extra });
  const start = async (n: number, extra: Partial<Parameters<typeof SdkBoard.start>[0]> = {}) => {
    const b = await startSdkBoard(options(n, extra));
    boards.push(b);
    return b;
  };
  const caseLine = (name: string, timing: CaseFigures, heaps: CaseFigures) =>
    `case ${name} wall_ms=${timing.wallMs.toFixed(0)} cpu_ms=${timing.cpuMs} node_cpu_ms=${timing.nodeCpuMs.toFixed(0)} live_chunk_bytes=${heaps.liveChunkBytes} live_slots=${heaps.liveSlots} stack_peak=${Math.max(timing.stackPeak, heaps.stackPeak)}/${heaps.stackMax} chunk_peak_bytes=${Math.max(timing.chunkPeakBytes, heaps.chunkPeakBytes)} samples=${heaps.samples}`;
  try {
    out(`platform/moddable built by the Moddable SDK for the host (firmware/sdk-host), esp32s3 heaps: ${ESP32S3.chunkBytes} chunk bytes, ${ESP32S3.slots} slots, ${ESP32S3.stackSlots} stack slots`);

    // Boots: the first power-up of a new board (the factory programs its flash: image built once per
    // process, 8 MB written), then power-ups of the same board with its flash (the median of 5).
    let t0 = performance.now();
    let board = await start(1);
    out(`boot first_power_up wall_ms=${(performance.now() - t0).toFixed(0)} cpu_ms=${board.cpuMs()} (factory flash programming included)`);
    const boots: { wall: number; cpu: number }[] = [];
    for (let i = 0; i < 5; i++) {
      await board.close();
      boards.splice(boards.indexOf(board), 1);
      t0 = performance.now();
      board = await start(1);
      boots.push({ wall: performance.now() - t0, cpu: board.cpuMs() });
    }
    boots.sort((a, b) => a.wall - b.wall);
    const booted = await board.heap({ collect: true });
    out(`boot power_up wall_ms=${boots[2]!.wall.toFixed(0)} cpu_ms=${boots[2]!.cpu} (median of ${boots.length}; unconfigured controller: the target procedure finds no source) live_chunk_bytes=${booted.chunkBytes} live_slots=${booted.slots} stack_peak=${booted.stackPeak}/${booted.stackMax}`);
    out(rssLine('booted', board));

    const auth = { 'visual-token': (await http(board, 'POST', API_PATHS.login, { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token };
    const pem = JSON.parse((await board.typeLine('pubkey')).slice(3)).public_key_pem;
    const { mintToken } = await import('../../cloud/auth/jwt.ts');
    const token = await mintToken(new TextEncoder().encode(JWT_SECRET));
    await fetch(`${cloud.url}/admin/devices/${board.identity.uuid}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ public_key: pem }) });
    await board.typeLine(`cloud ${cloud.url}`);

    // Warm-up: the first request of each kind.
    await http(board, 'PUT', API_PATHS.backup, auth, backupOfSize(4096));
    await http(board, 'POST', API_PATHS.cloudBackup, auth);

    let variant = 0;
    // A different backup each run, so that a push is never answered 304.
    const fresh = (size: number) => backupOfSize(size).replace('"pad":"', `"pad":"${String(++variant).padStart(6, '0')}`).slice(0, size - 2) + '"}';
    const bench = async (name: string, prepare: (() => Promise<unknown>) | undefined, work: () => Promise<unknown>) => {
      await prepare?.();
      const timing = await measure(board, work);
      await prepare?.();
      const heaps = await measure(board, work, { sampleMs: SAMPLE_MS });
      out(caseLine(name, timing, heaps));
    };
    await bench('login', undefined, () => http(board, 'POST', API_PATHS.login, { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD })));
    for (const [label, size] of [['64k', 65_536], ['512k', 524_256]] as const) {
      await bench(`put_backup_${label}`, undefined, () => http(board, 'PUT', API_PATHS.backup, auth, fresh(size)));
      await bench(`cloud_push_${label}`, () => http(board, 'PUT', API_PATHS.backup, auth, fresh(size)), () => http(board, 'POST', API_PATHS.cloudBackup, auth));
    }
    await bench('cloud_retrieve_512k', () => http(board, 'DELETE', API_PATHS.backup, auth), () => http(board, 'GET', API_PATHS.cloudBackup, auth));

    // Throughput, one request at a time.
    await http(board, 'PUT', API_PATHS.backup, auth, fresh(65_536));
    const rate = async (name: string, n: number, request: () => Promise<unknown>) => {
      await board.heap({ collect: true, resetPeaks: true });
      const cpu0 = board.cpuMs();
      const node0 = process.cpuUsage();
      const r = await throughput(n, request);
      const node = process.cpuUsage(node0);
      const peaks = await board.heap();
      out(`http ${name} requests=${r.requests} req_per_s=${r.perSecond.toFixed(1)} p50_ms=${r.p50Ms.toFixed(1)} p99_ms=${r.p99Ms.toFixed(1)} max_ms=${r.maxMs.toFixed(1)} cpu_ms_per_request=${((board.cpuMs() - cpu0) / n).toFixed(2)} node_cpu_ms_per_request=${((node.user + node.system) / 1000 / n).toFixed(2)} stack_peak=${peaks.stackPeak}`);
    };
    await rate('get_backup_64k', 200, () => http(board, 'GET', API_PATHS.backup, auth));
    const put64 = fresh(65_536);
    await rate('put_backup_64k', 50, () => http(board, 'PUT', API_PATHS.backup, auth, put64));
    await rate('get_status', 200, () => http(board, 'GET', API_PATHS.status, auth));
    out(rssLine('after_cases', board));

    // Target procedure: a source with N controllers (one is the target), M clients, a 512 KB backup;
    // at two sizes, to show that what the target holds does not grow with the number of records.
    let n = 10;
    for (const [controllers, clients] of [[10, 50], [20, 100]] as const) {
      const source = await start(++n);
      const targetN = ++n;
      const sauth = { 'visual-token': (await http(source, 'POST', API_PATHS.login, { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token, 'content-type': 'application/json' };
      await http(source, 'PUT', recordPath('controllers', `bench-ctl-${targetN}`), sauth, JSON.stringify({ ethernet_mac: identity(targetN).ethernetMac, name: 'target' }));
      for (let i = 0; i < controllers - 1; i++) await http(source, 'PUT', recordPath('controllers', `ctl-${i}`), sauth, JSON.stringify({ ethernet_mac: identity(100 + i).ethernetMac, name: `controller ${i}` }));
      for (let i = 0; i < clients; i++) {
        await http(source, 'PUT', recordPath('clients', `lamp-${i}`), sauth, JSON.stringify({ mac: identity(200 + i).wifiMac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
      }
      await http(source, 'PUT', API_PATHS.backup, sauth, backupOfSize(524_256));
      await http(source, 'PUT', API_PATHS.provisioning, sauth);
      // Timing run: no sampling.
      t0 = performance.now();
      const node0 = process.cpuUsage();
      const source0 = source.cpuMs();
      const target = await start(targetN);
      const wallMs = performance.now() - t0;
      const cpuMs = target.cpuMs();
      const node = process.cpuUsage(node0);
      const sourceCpuMs = source.cpuMs() - source0;
      const outcome = target.bootResult as { provisioning: { kind: string; lines?: string[] } };
      const rss = rssLine(`target_${controllers}c_${clients}l`, target);
      await target.close();
      // Heap run: the same procedure on a fresh target that samples its own heaps.
      const samples: HeapFigures[] = [];
      const probed = await start(targetN, { flashDir: join(dir, `flash-${targetN}-probed`), heapSampleMs: SAMPLE_MS, onHeapSample: (f) => samples.push({ ...f }) });
      const end = await probed.heap();
      const live = { chunk: Math.max(...samples.map((s) => s.chunkBytes)), slots: Math.max(...samples.map((s) => s.slots)) };
      await probed.close();
      out(`case target_procedure_${controllers}c_${clients}l_512k wall_ms=${wallMs.toFixed(0)} cpu_ms=${cpuMs} source_cpu_ms=${sourceCpuMs} node_cpu_ms=${((node.user + node.system) / 1000).toFixed(0)} live_chunk_bytes=${live.chunk} live_slots=${live.slots} stack_peak=${end.stackPeak}/${end.stackMax} chunk_peak_bytes=${end.chunkPeakBytes} samples=${samples.length}`);
      out(`  target outcome: ${JSON.stringify(outcome.provisioning.lines ?? outcome.provisioning.kind)}; wall time from power-up (bootloader, firmware start, procedure)`);
      out(rss);
      out(rssLine(`source_${controllers}c_${clients}l`, source));
      await source.close();
    }
  } finally {
    await Promise.all(boards.map((b) => b.close()));
    await cloud.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  out(`(live figures: the most held after a collection, sampled every ${SAMPLE_MS} ms; chunk_peak_bytes: XS's own peak counter, garbage included, by its accounting (a little over the heap's ${ESP32S3.chunkBytes} = ${kb(ESP32S3.chunkBytes)} KB at times); the heap does not grow: XS collects when it is full, and aborts with memory full when that is not enough)`);
}

await main();
