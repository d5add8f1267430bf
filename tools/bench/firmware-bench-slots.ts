// Heap probe of the controller-provisioning target procedure on a virtual board (the SDK's host build
// of the firmware, XS with the esp32s3's heaps): the target samples its own heaps every few
// milliseconds from its power-up (a collection first, so each sample is what is live; the firmware's
// main loop answers between two of its events), each sample with the console line the firmware wrote
// last, so that what the procedure holds can be followed through its steps (docs/firmware-bench.md).
// `npx tsx tools/bench/firmware-bench-slots.ts [controllers=10] [clients=50] [backup bytes=524256] [sample ms=5]`;
// with SAMPLES=1 one line per sample: live slots, live chunk bytes, the stack's peak so far, the line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SdkBoard, startSdkBoard, VirtualAir } from '../../harness/virtual-board.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { backupOfSize, boardApi as http, controllerIdentity as identity } from './firmware-bench-lib.ts';
import { API_PATHS, recordPath } from '../../firmware/src/core/api-paths.ts';

const PASSWORD = 'bench-admin-password';

const controllers = Number(process.argv[2] ?? 10);
const clients = Number(process.argv[3] ?? 50);
const backupBytes = Number(process.argv[4] ?? 524_256);
const sampleMs = Number(process.argv[5] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'fw-slots-'));
const air = new VirtualAir();
const boards: SdkBoard[] = [];
try {
  const source = await startSdkBoard({ identity: identity(1), fuseKeyHex: '01'.repeat(32), flashDir: join(dir, 'src'), adminPassword: PASSWORD, air, panel: false });
  boards.push(source);
  const sauth = { 'visual-token': (await http(source, 'POST', API_PATHS.login, { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token, 'content-type': 'application/json' };
  await http(source, 'PUT', recordPath('controllers', 'bench-ctl-2'), sauth, JSON.stringify({ ethernet_mac: identity(2).ethernetMac, name: 'target' }));
  for (let i = 0; i < controllers - 1; i++) await http(source, 'PUT', recordPath('controllers', `ctl-${i}`), sauth, JSON.stringify({ ethernet_mac: identity(100 + i).ethernetMac, name: `controller ${i}` }));
  for (let i = 0; i < clients; i++) {
    await http(source, 'PUT', recordPath('clients', `lamp-${i}`), sauth, JSON.stringify({ mac: identity(200 + i).wifiMac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
  }
  if (backupBytes > 0) await http(source, 'PUT', API_PATHS.backup, sauth, backupOfSize(backupBytes));
  await http(source, 'PUT', API_PATHS.provisioning, sauth);

  const samples: string[] = [];
  const most = { slots: 0, chunkBytes: 0, count: 0 };
  let lastLine = '';
  const target = await startSdkBoard({
    identity: identity(2),
    fuseKeyHex: '02'.repeat(32),
    flashDir: join(dir, 'tgt'),
    adminPassword: PASSWORD,
    air,
    panel: false,
    heapSampleMs: sampleMs,
    onConsoleLine: (line) => {
      if (/^(LOG|EVT|OK|ERR) /.test(line)) lastLine = line;
    },
    onHeapSample: (f) => {
      most.slots = Math.max(most.slots, f.slots);
      most.chunkBytes = Math.max(most.chunkBytes, f.chunkBytes);
      most.count++;
      samples.push(`${String(f.slots).padStart(5)} ${String(f.chunkBytes).padStart(6)} ${String(f.stackPeak).padStart(3)}  ${lastLine.slice(0, 100)}`);
    },
  });
  boards.push(target);
  const end = await target.heap({ collect: true });
  process.stdout.write(`outcome ${JSON.stringify((target.bootResult as { provisioning: { lines?: string[] } }).provisioning.lines)}\n`);
  process.stdout.write(`live at most ${most.slots} slots and ${most.chunkBytes} chunk bytes in ${most.count} samples (every ${sampleMs} ms); after the procedure ${end.slots} slots, ${end.chunkBytes} bytes; stack peak ${end.stackPeak}/${end.stackMax}; of ${end.slotMax} slots and ${end.chunkMaxBytes} bytes\n`);
  if (process.env.SAMPLES) {
    process.stdout.write('slots  bytes stack  last console line\n');
    for (const s of samples) process.stdout.write(`${s}\n`);
  }
} finally {
  await Promise.all(boards.map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
}
