// npm run bench:firmware: the firmware inside the real XS engine on virtual boards, measured with the
// worker's meters. For each case one line:
//   case <name> compute=<XS computrons> heap_growth_bytes=<growth of meterUsage.allocate>
// The ESP32 budget is about 79 KB of chunk heap and 79 KB of slot heap; growth must stay well inside
// it and must not grow with the backup's size. xsnap starts XS with a 32 MiB chunk heap, so allocate
// stays flat for small work; each line therefore also gives chunk_peak_kb<=N, the smallest free chunk
// heap the case ran in without the engine growing its heap (heap-probe.ts), and slots=+L..+U above
// the slots live when the case started: L the most live between commands, U the most in use at a
// command's end with its garbage (the board collects garbage before every command:
// XsBoardOptions.slotMeter); the live peak lies between. Against the esp32s3 creation's 4,928
// slots. Figures, not assertions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../cloud/config.ts';
import { startCloudServer } from '../../cloud/server.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { XsBoard, type MeterTotals } from '../../firmware/virtual-esp32/xs-board.ts';
import { XsWorker } from '../../firmware/xs/worker.ts';
import { backupOfSize, boardApi as http, controllerIdentity as identity } from './firmware-bench-lib.ts';
import { HEADROOMS_KB, leaveHeadroom, smallestFit, type ProbeCase } from './heap-probe.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';

const PASSWORD = 'bench-admin-password';
const ESP32_HEAP_BYTES = 79 * 1024;
/** Moddable's esp32s3 creation: 4,928 slots of 16 bytes (docs/firmware-bench.md). */
const ESP32S3_SLOTS = 4928;


async function measure(board: XsBoard, work: () => Promise<unknown>): Promise<MeterTotals> {
  await board.idle();
  board.resetMeter();
  await work();
  await board.idle();
  return { ...board.meter };
}

function line(name: string, m: MeterTotals, peakKb: number | null): string {
  return `case ${name} compute=${m.compute} heap_growth_bytes=${m.allocate} chunk_peak_kb<=${peakKb ?? `>${HEADROOMS_KB[HEADROOMS_KB.length - 1]}`} slots=+${m.slotLive - m.slotsAtStart}..+${m.slotPeak - m.slotsAtStart}`;
}

/** Live slots of an engine that has loaded nothing: XS's own built-ins, in ROM on a device. */
async function emptyEngineSlots(): Promise<number> {
  const w = await XsWorker.start({ name: 'slot-baseline' });
  try {
    return (await w.evaluate('gc()')).meterUsage.currentHeapCount;
  } finally {
    await w.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fw-bench-'));
  const store = new SqliteStore(':memory:');
  const cloud = await startCloudServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: ':memory:', JWT_SECRET: 'bench-secret-0123456789' }), { store, sink: () => undefined });
  const air = new VirtualAir();
  const boards: XsBoard[] = [];
  const start = async (n: number, settings = {}, deferBoot = false) => {
    const b = await XsBoard.start({ identity: identity(n), fuseKeyHex: n.toString(16).padStart(2, '0').repeat(32), flashDir: join(dir, `flash-${n}`), adminPassword: PASSWORD, air, settings, slotMeter: true, deferBoot });
    boards.push(b);
    return b;
  };
  const lines: string[] = [];
  const report = (name: string, m: MeterTotals, peakKb: number | null) => {
    const l = line(name, m, peakKb);
    lines.push(l);
    process.stdout.write(l + '\n');
  };
  /** Meters one run, then brackets the chunk-heap peak with repeated runs. */
  const bench = async (name: string, board: XsBoard, c: ProbeCase) => {
    await c.prepare?.();
    const m = await measure(board, c.work);
    report(name, m, await smallestFit(board, HEADROOMS_KB, c));
  };
  try {
    process.stdout.write('platform/moddable on the emulated Moddable SDK (docs/moddable-emulation.md)\n');
    // Slots: XS's built-ins and the loaded modules are in flash on a device (preloaded); what the
    // boot creates is in the slot heap.
    const board = await start(1, {}, true);
    const empty = await emptyEngineSlots();
    const loaded = await board.liveSlots();
    await board.boot();
    const booted = await board.liveSlots();
    process.stdout.write(`slots live: empty engine ${empty}, modules loaded ${loaded} (+${loaded - empty}), booted ${booted} (the boot's +${booted - loaded}); esp32s3 budget ${ESP32S3_SLOTS}\n`);
    const auth = { 'visual-token': (await http(board, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token };
    const pem = JSON.parse((await board.typeLine('pubkey')).slice(3)).public_key_pem;
    const { mintToken } = await import('../../cloud/auth/jwt.ts');
    const token = await mintToken(new TextEncoder().encode('bench-secret-0123456789'));
    await fetch(`${cloud.url}/admin/devices/${board.identity.uuid}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ public_key: pem }) });
    await board.typeLine(`cloud ${cloud.url}`);

    // Warm-up: the first request of each kind grows the heap for code paths, not for data.
    await http(board, 'PUT', '/backup', auth, backupOfSize(4096));
    await http(board, 'POST', '/api/cloud-backup', auth);

    let variant = 0;
    // A different backup each run, so that a push is never answered 304.
    const fresh = (size: number) => backupOfSize(size).replace('"pad":"', `"pad":"${String(++variant).padStart(6, '0')}`).slice(0, size - 2) + '"}';
    for (const [label, size] of [['64k', 65_536], ['512k', 524_256]] as const) {
      await bench(`put_backup_${label}`, board, { work: () => http(board, 'PUT', '/backup', auth, fresh(size)) });
      await bench(`cloud_push_${label}`, board, { prepare: () => http(board, 'PUT', '/backup', auth, fresh(size)), work: () => http(board, 'POST', '/api/cloud-backup', auth) });
    }
    await bench('cloud_retrieve_512k', board, { prepare: () => http(board, 'DELETE', '/backup', auth), work: () => http(board, 'GET', '/api/cloud-backup', auth) });

    // Target procedure: a source with N controllers (one is the target), M clients, a 512 KB backup;
    // twice, to show that the target's heap does not grow with the number of records.
    let sourceN = 10;
    for (const [controllers, clients] of [[10, 50], [20, 100]] as const) {
      const source = await start(++sourceN);
      const targetN = ++sourceN;
      const sauth = { 'visual-token': (await http(source, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token, 'content-type': 'application/json' };
      await http(source, 'PUT', `/api/controllers/bench-ctl-${targetN}`, sauth, JSON.stringify({ ethernet_mac: identity(targetN).ethernetMac, name: 'target' }));
      for (let i = 0; i < controllers - 1; i++) await http(source, 'PUT', `/api/controllers/ctl-${i}`, sauth, JSON.stringify({ ethernet_mac: identity(100 + i).ethernetMac, name: `controller ${i}` }));
      for (let i = 0; i < clients; i++) {
        await http(source, 'PUT', `/api/clients/lamp-${i}`, sauth, JSON.stringify({ mac: identity(200 + i).wifiMac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
      }
      await http(source, 'PUT', '/backup', sauth, backupOfSize(524_256));
      await http(source, 'PUT', '/api/provisioning', sauth);
      const t0 = Date.now();
      const target = await start(targetN, { resultDisplayMs: 60_000 });
      const wallMs = Date.now() - t0;
      const outcome = target.bootResult as { provisioning: { kind: string; lines?: string[] } };
      await target.close();
      // The same procedure on fresh targets whose heap has only a given headroom left.
      let peak: number | null = null;
      for (const h of HEADROOMS_KB) {
        const t = await XsBoard.start({ identity: identity(targetN), fuseKeyHex: targetN.toString(16).padStart(2, '0').repeat(32), flashDir: join(dir, `flash-${targetN}-${h}`), adminPassword: PASSWORD, air, settings: { resultDisplayMs: 60_000 }, deferBoot: true });
        try {
          await leaveHeadroom(t, h);
          const before = (await t.evaluate('1')).allocate;
          const r = (await t.boot()) as { provisioning: { ok?: boolean } };
          await t.idle();
          if (!r.provisioning.ok) throw new Error('the probed target procedure did not succeed');
          if ((await t.evaluate('1')).allocate === before) {
            peak = h;
            break;
          }
        } finally {
          await t.close();
        }
      }
      report(`target_procedure_${controllers}c_${clients}l_512k`, target.meter, peak);
      process.stdout.write(`  target outcome: ${JSON.stringify(outcome.provisioning.lines ?? outcome.provisioning.kind)}, wall time ${wallMs} ms (including XS start)\n`);
      await source.close();
    }
  } finally {
    await Promise.all(boards.map((b) => b.close()));
    await cloud.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const growth = (name: string) => Number(/heap_growth_bytes=(\d+)/.exec(lines.find((l) => l.includes(` ${name} `)) ?? '')?.[1]);
  const peakOf = (name: string) => /chunk_peak_kb<=(\S+)/.exec(lines.find((l) => l.includes(` ${name} `)) ?? '')?.[1];
  for (const kind of ['put_backup', 'cloud_push']) {
    const a = growth(`${kind}_64k`);
    const b = growth(`${kind}_512k`);
    process.stdout.write(`${kind}: heap growth 64k=${a} 512k=${b}; chunk peak 64k<=${peakOf(`${kind}_64k`)} KB, 512k<=${peakOf(`${kind}_512k`)} KB\n`);
  }
  process.stdout.write(`largest heap growth: ${Math.max(...lines.map((l) => Number(/heap_growth_bytes=(\d+)/.exec(l)?.[1] ?? 0)))} bytes (ESP32 budget about ${ESP32_HEAP_BYTES} + ${ESP32_HEAP_BYTES})\n`);
  const most = (at: 1 | 2) => Math.max(...lines.map((l) => Number(/slots=\+(\d+)\.\.\+(\d+)/.exec(l)?.[at] ?? 0)));
  process.stdout.write(`largest slot use above the case's start: live between commands +${most(1)}, with a command's garbage +${most(2)} (esp32s3 budget ${ESP32S3_SLOTS} slots)\n`);
}

await main();
