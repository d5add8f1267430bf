// npm run bench:farm: the board farm under load (docs/board-farm.md). A labgrid coordinator from the
// shared source; one `fleet farm export` process per pair of virtual boards (farm-1 … farm-<jobs>, each its
// own bench and air); then three phases, one after the other:
//   farm       <jobs> jobs at once, each `fleet bench --farm … --repeat <runs>` of the two-board scenario:
//              every run reserves a pair by tags, checks it, runs, releases it;
//   killed     <jobs> more jobs, each killed (SIGKILL) at a random moment while it waits, checks or
//              runs; 60 s after the last kill, every place must be free again;
//   dedicated  the same jobs as the farm phase on rigs of their own: each job names one exporter's two
//              boards by their RFC 2217 ports (the same boards and firmware), without the farm.
// A double acquisition is a place given to a job while another job that had not given it back still
// ran (only a lease wrongly ended can do that: the coordinator never hands a held place over), seen in
// the coordinator's own stream of place updates. Waits are from the jobs' "acquired … after <s> s".
// Last line:
//   farm jobs=8 acquisitions=<n> double=<n> leaked_after_60s=<n> wait_p50_seconds=<x> wait_p99_seconds=<x> throughput_ratio=<r>
// Options: --jobs 8 --runs 32 (per farm job; 8 × 32 × 2 = 512 acquisitions, plus the killed jobs')
// --scenario controller-ok-backup --kill-within 40 (seconds) --no-dedicated. Figures, not assertions.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ClientSession } from '../../harness/farm/client.ts';
import { labgridMissing, startCoordinator } from '../../harness/farm/coordinator.ts';
import type { Place } from '../../harness/farm/labgrid/messages.ts';
import { freeLoopbackPort } from '../../harness/ports.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '8' },
    runs: { type: 'string', default: '32' },
    scenario: { type: 'string', default: 'controller-ok-backup' },
    'kill-within': { type: 'string', default: '40' },
    'no-dedicated': { type: 'boolean', default: false },
  },
});
const JOBS = Number(values.jobs);
const RUNS = Number(values.runs);
const KILL_WITHIN_S = Number(values['kill-within']);
for (const [name, n, max] of [['--jobs', JOBS, 64], ['--runs', RUNS, 100], ['--kill-within', KILL_WITHIN_S, 600]] as const) {
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${name} must be a whole number from 1 to ${max}, got ${n}`);
}
const RIG_PATH = fileURLToPath(new URL('../../harness/rigs/farm-two-board.json', import.meta.url));
const FLEET_JS = fileURLToPath(new URL('../../bin/fleet.js', import.meta.url));
const LEAK_CHECK_MS = 60_000;

const missing = labgridMissing();
if (missing) {
  process.stderr.write(`bench:farm: ${missing}\n`);
  process.exit(1);
}

const say = (line: string) => process.stderr.write(`bench:farm: ${line}\n`);
const dir = mkdtempSync(join(tmpdir(), 'farm-bench-'));

interface Job {
  pid: number;
  exited: Promise<number | null>;
  alive: boolean;
  killed: boolean;
  stdout: string;
  stderr: string;
  kill(): void;
}

/** `fleet …` as a job; its "acquired … after <s> s" lines feed the waits. */
function startJob(args: string[], waits: number[]): Job {
  const child = spawn(process.execPath, [FLEET_JS, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
  const job: Job = { pid: child.pid!, alive: true, killed: false, stdout: '', stderr: '', exited: undefined as never, kill: () => ((job.killed = true), child.kill('SIGKILL')) };
  child.stdout!.on('data', (c) => (job.stdout += c));
  let partial = '';
  child.stderr!.on('data', (c) => {
    job.stderr += c;
    const lines = (partial + c).split('\n');
    partial = lines.pop()!;
    for (const l of lines) {
      const m = /^farm: acquired \S+ \(.*\) after ([\d.]+) s/.exec(l);
      if (m) waits.push(Number(m[1]));
    }
  });
  job.exited = new Promise((r) => child.on('close', (code) => ((job.alive = false), r(code))));
  jobsByPid.set(job.pid, job);
  return job;
}
const jobsByPid = new Map<number, Job>();

interface Exporter {
  name: string;
  published: Promise<void>;
  /** Board id → rfc2217:// URL, from its `place <exporter>-<board> rfc2217=<url> …` lines. */
  ports: Map<string, string>;
  stop(): Promise<void>;
}

/** `fleet farm export` of the two-board rig as `name`, each stderr line to `log`. */
function startExporter(name: string, coordinator: string, log: (line: string) => void): Exporter {
  const child = spawn(process.execPath, [FLEET_JS, 'farm', 'export', RIG_PATH, '--coordinator', coordinator, '--name', name], { stdio: ['ignore', 'pipe', 'pipe'] });
  const ports = new Map<string, string>();
  child.stdout!.on('data', (c) => {
    for (const m of String(c).matchAll(/^place \S+?-(source|target) rfc2217=(\S+)/gm)) ports.set(m[1]!, m[2]!);
  });
  const exited = new Promise<void>((r) => child.on('close', () => r()));
  let partial = '';
  let all = '';
  const published = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (c) => {
      all += c;
      const lines = (partial + c).split('\n');
      partial = lines.pop()!;
      for (const l of lines) {
        if (/published to/.test(l)) resolve();
        log(l);
      }
    });
    void exited.then(() => reject(new Error(`fleet farm export ${name} ended:\n${all}`)));
  });
  published.catch(() => undefined);
  return {
    name,
    published,
    ports,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Completed scenario runs of a `--repeat` job (passed, flaky or failed), and those that failed twice. */
function runsOf(job: Job): { done: number; failed: number } {
  const m = /passed (\d+)\/\d+\s+flakes (\d+)\s+failed (\d+)/.exec(job.stdout);
  return m ? { done: Number(m[1]) + Number(m[2]) + Number(m[3]), failed: Number(m[3]) } : { done: 0, failed: 0 };
}

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

const benchArgs = (i: number, phase: string, runs: number) => ['--scenario', values.scenario!, '--no-figures', '--repeat', String(runs), '--report', join(dir, `${phase}-${i}`)];
const farmArgs = (coordinator: string) => ['bench', '--farm', coordinator, '--place-tags', 'role=controller,build=debug', '--place-tags', 'role=controller,build=production', '--farm-wait', '900'];

const coordinator = await startCoordinator(`127.0.0.1:${await freeLoopbackPort()}`);
const exporters: Exporter[] = [];
let watch: ClientSession | undefined;
try {
  // The coordinator's own stream of places: acquisitions, and who lost a place to a warden.
  watch = await ClientSession.start(coordinator.address, 'bench-host/farm-bench');
  const holders = new Map<string, string>();
  const reapedFrom = new Map<string, string>();
  const takenFromLiving = new Map<string, string>();
  let acquisitions = 0;
  let double = 0;
  const pidOf = (holder: string) => Number(/\/fleet-job-(\d+)$/.exec(holder)?.[1] ?? 0);
  watch.onPlace.add((p: Place) => {
    const name = p.name!;
    const before = holders.get(name) ?? '';
    const now = p.acquired ?? '';
    if (before === now) return;
    holders.set(name, now);
    if (before && now) double++; // handed over without a release: the coordinator never does this
    if (before && !now && reapedFrom.get(name) === before) {
      const job = jobsByPid.get(pidOf(before));
      if (job?.alive && !job.killed) takenFromLiving.set(name, before);
    }
    if (now) {
      reapedFrom.delete(name);
      if (pidOf(now)) acquisitions++;
      const lost = takenFromLiving.get(name);
      if (lost && jobsByPid.get(pidOf(lost))?.alive) double++;
      takenFromLiving.delete(name);
    }
  });
  // One `fleet farm export` process per pair, as one per rig host: its boards' serial traffic in its own process.
  await Promise.all(
    Array.from({ length: JOBS }, async (_, k) => {
      const name = `farm-${k + 1}`;
      const e = startExporter(name, coordinator.address, (line) => {
        const m = /^warden: (\S+): held by (\S+) past its lease/.exec(line);
        if (m) reapedFrom.set(m[1]!, m[2]!);
        if (/quarantin|repair|ended|warden/.test(line)) say(`${name}: ${line}`);
      });
      exporters.push(e);
      await e.published;
      say(`exporter ${name} published its boards`);
    }),
  );
  const waits: number[] = [];

  // Farm: every job takes and gives back a pair per run.
  say(`farm phase: ${JOBS} jobs × ${RUNS} runs of ${values.scenario}`);
  let t0 = performance.now();
  const farmJobs = Array.from({ length: JOBS }, (_, i) => startJob([...farmArgs(coordinator.address), ...benchArgs(i, 'farm', RUNS)], waits));
  await Promise.all(farmJobs.map((j) => j.exited));
  const farmMs = performance.now() - t0;
  const farmRuns = farmJobs.map(runsOf);
  for (const [i, j] of farmJobs.entries()) if (runsOf(j).done !== RUNS || runsOf(j).failed) say(`farm job ${i + 1}: ${runsOf(j).done}/${RUNS} runs, ${runsOf(j).failed} failed twice; its end:\n${j.stderr.split('\n').slice(-8).join('\n')}`);
  const farmDone = farmRuns.reduce((n, r) => n + r.done, 0);
  say(`farm phase: ${farmDone} runs in ${(farmMs / 1000).toFixed(1)} s (${((farmDone / farmMs) * 60_000).toFixed(2)} per minute)`);

  // Killed: jobs die at random moments; the places must all be free 60 s after the last death.
  say(`killed phase: ${JOBS} jobs, each killed within ${KILL_WITHIN_S} s`);
  const killedJobs = Array.from({ length: JOBS }, (_, i) => startJob([...farmArgs(coordinator.address), ...benchArgs(i, 'killed', 100)], waits));
  let lastKill = 0;
  await Promise.all(
    killedJobs.map(async (j) => {
      await new Promise((r) => setTimeout(r, 1000 + Math.random() * (KILL_WITHIN_S * 1000 - 1000)));
      j.kill();
      lastKill = Math.max(lastKill, Date.now());
      await j.exited;
    }),
  );
  // The measurement is "held 60 s after the last kill": a moment to look at, not a wait for something.
  await new Promise((r) => setTimeout(r, Math.max(0, lastKill + LEAK_CHECK_MS - Date.now())));
  await watch.sync();
  const leaked = [...watch.placesByName.values()].filter((p) => p.name?.startsWith('farm-') && (p.acquired || p.reservation || p.tags?.lease));
  for (const p of leaked) say(`leaked: ${p.name} held by ${p.acquired ?? '-'} reservation ${p.reservation ?? '-'} lease ${p.tags?.lease ?? '-'}`);


  // Dedicated: the same jobs, each on a rig of its own.
  let ratio = Number.NaN;
  if (!values['no-dedicated']) {
    // Each job's own rig: one exporter's two boards named by their ports, so the same boards with the
    // same firmware run the same scenario, without reservations, leases and health checks.
    const text = JSON.parse(readFileSync(RIG_PATH, 'utf8'));
    const rigs = exporters.map((e, i) => {
      const file = join(dir, `dedicated-${i}.json`);
      const boards = text.boards.map((b: { id: string; role: string; build?: string }) => ({ id: b.id, role: b.role, kind: 'rfc2217', port: e.ports.get(b.id), ...(b.build ? { build: b.build } : {}) }));
      writeFileSync(file, JSON.stringify({ name: `dedicated-${i + 1}`, description: `the boards of ${e.name}, held by one job`, site_wifi: text.site_wifi, boards }));
      return file;
    });
    say(`dedicated phase: ${JOBS} jobs × ${RUNS} runs, each on one exporter's boards by their ports`);
    t0 = performance.now();
    const dedicatedJobs = Array.from({ length: JOBS }, (_, i) => startJob(['bench', rigs[i]!, ...benchArgs(i, 'dedicated', RUNS)], []));
    await Promise.all(dedicatedJobs.map((j) => j.exited));
    const dedicatedMs = performance.now() - t0;
    const dedicatedDone = dedicatedJobs.map(runsOf).reduce((n, r) => n + r.done, 0);
    for (const [i, j] of dedicatedJobs.entries()) if (runsOf(j).done !== RUNS || runsOf(j).failed) say(`dedicated job ${i + 1}: ${runsOf(j).done}/${RUNS} runs, ${runsOf(j).failed} failed twice; its end:\n${j.stderr.split('\n').slice(-8).join('\n')}`);
    say(`dedicated phase: ${dedicatedDone} runs in ${(dedicatedMs / 1000).toFixed(1)} s (${((dedicatedDone / dedicatedMs) * 60_000).toFixed(2)} per minute)`);
    ratio = farmDone / farmMs / (dedicatedDone / dedicatedMs);
  }
  await Promise.all(exporters.splice(0).map((e) => e.stop()));
  process.stdout.write(
    `farm jobs=${JOBS} acquisitions=${acquisitions} double=${double} leaked_after_60s=${leaked.length} wait_p50_seconds=${percentile(waits, 50).toFixed(1)} wait_p99_seconds=${percentile(waits, 99).toFixed(1)} throughput_ratio=${Number.isNaN(ratio) ? 'n/a' : ratio.toFixed(2)}\n`,
  );
} finally {
  for (const j of jobsByPid.values()) if (j.alive) j.kill();
  await Promise.all(exporters.map((e) => e.stop()));
  watch?.close();
  await coordinator.stop();
  rmSync(dir, { recursive: true, force: true });
}
