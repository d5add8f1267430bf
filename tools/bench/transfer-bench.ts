// npm run bench:transfer: the 512 KB backup a provisioning target downloads from its source (spec 3.6
// step 6), board to board over the virtual air, with the flash taking no time and taking the
// GD25Q64C's typical time (firmware/virtual-esp32/flash-timing.ts). The backup's share of the target
// procedure is its time with a 512 KB backup less its time with none (medians of RUNS), so the boot
// and the records do not count. Figures, never assertions:
//   transfer backup_512k flash=<off|typical> seconds=<median> kib_per_s=<rate> live_chunk_bytes=<most live> runs=<n>
// `--runs N` (default 5); `--flash off|typical` for one of the two.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HeapFigures, SdkBoard, startSdkBoard, VirtualAir } from '../../harness/virtual-board.ts';
import { backupOfSize, boardApi as http, controllerIdentity as identity } from './firmware-bench-lib.ts';
import { API_PATHS, recordPath } from '../../firmware/src/core/api-paths.ts';

const PASSWORD = 'bench-admin-password';
const BACKUP_BYTES = 524_256;
const SAMPLE_MS = 10;
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 5;
if (!Number.isInteger(RUNS) || RUNS < 1) {
  process.stderr.write(`--runs must be a positive integer, not ${process.argv[runsArg + 1]}\n`);
  process.exit(2);
}

const flashArg = process.argv.indexOf('--flash');
const TIMINGS = flashArg > 0 ? [process.argv[flashArg + 1]] : ['off', 'typical'];
if (!TIMINGS.every((t) => t === 'off' || t === 'typical')) {
  process.stderr.write(`--flash must be off or typical, not ${process.argv[flashArg + 1]}\n`);
  process.exit(2);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'transfer-bench-'));
  let n = 0;
  try {
    for (const flashTiming of TIMINGS as ('off' | 'typical')[]) {
      /** One target procedure from power-up; answers its wall time and, when sampled, the most chunk bytes live. */
      const procedure = async (backupBytes: number, sample: boolean): Promise<{ seconds: number; liveChunk: number }> => {
        const air = new VirtualAir();
        const sourceN = ++n;
        const targetN = ++n;
        const boards: SdkBoard[] = [];
        try {
          const source = await startSdkBoard({ identity: identity(sourceN), fuseKeyHex: '5a'.repeat(32), flashDir: join(dir, `flash-${sourceN}`), adminPassword: PASSWORD, air, panel: false, flashTiming });
          boards.push(source);
          const auth = { 'visual-token': (await http(source, 'POST', API_PATHS.login, { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token, 'content-type': 'application/json' };
          await http(source, 'PUT', recordPath('controllers', `bench-ctl-${targetN}`), auth, JSON.stringify({ ethernet_mac: identity(targetN).ethernetMac, name: 'target' }));
          if (backupBytes > 0) await http(source, 'PUT', API_PATHS.backup, auth, backupOfSize(backupBytes));
          await http(source, 'PUT', API_PATHS.provisioning, auth);
          const samples: HeapFigures[] = [];
          const t0 = performance.now();
          const target = await startSdkBoard({ identity: identity(targetN), fuseKeyHex: 'a5'.repeat(32), flashDir: join(dir, `flash-${targetN}`), adminPassword: PASSWORD, air, panel: false, flashTiming, ...(sample ? { heapSampleMs: SAMPLE_MS, onHeapSample: (f: HeapFigures) => samples.push({ ...f }) } : {}) });
          const seconds = (performance.now() - t0) / 1000;
          boards.push(target);
          const lines = (target.bootResult as { provisioning?: { lines?: string[] } }).provisioning?.lines ?? [];
          const expected = backupBytes > 0 ? 'Prov OK got backup' : 'Prov OK no backup';
          if (!lines.includes(expected)) throw new Error(`the target procedure ended ${JSON.stringify(lines)}, not "${expected}"`);
          return { seconds, liveChunk: samples.length > 0 ? Math.max(...samples.map((s) => s.chunkBytes)) : 0 };
        } finally {
          await Promise.all(boards.map((b) => b.close()));
        }
      };
      const withBackup: number[] = [];
      const without: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        withBackup.push((await procedure(BACKUP_BYTES, false)).seconds);
        without.push((await procedure(0, false)).seconds);
      }
      const live = (await procedure(BACKUP_BYTES, true)).liveChunk;
      const seconds = Math.max(0.001, median(withBackup) - median(without));
      process.stdout.write(`transfer backup_512k flash=${flashTiming} seconds=${seconds.toFixed(3)} kib_per_s=${(BACKUP_BYTES / 1024 / seconds).toFixed(0)} live_chunk_bytes=${live} runs=${RUNS}\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
