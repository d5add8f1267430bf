// npm run bench:fleet (docs/fleet-scale.md): in one run,
//   1. a boot storm of N simulated devices (default 10,000, all at once) on one `fleet serve` (its
//      WORKERS processes, default every core) with SQLite: the storm's time, the service's RSS peak and
//      CPU, the simulator's own CPU (it shares the machine), SQLITE_BUSY met by the workers,
//      then the same storm against the fair server (baseline-server.ts --mode fair-storm: node:http,
//      each request's essential work on the same store, as many processes): the storm ratio,
//   2. the same on PostgreSQL (a real server, started by tools/postgres-server.ts as for the store
//      tests) with two `fleet serve` instances behind a small round-robin (in the simulator's client),
//      sharing the cores (--postgres-workers, default the workers over the instances), while an
//      appconfig deployment runs through one of them; then the fair server's storm, as many instances,
//   3. backup ingest against two baselines on the same number of processes (tools/bench/baseline-server.ts):
//      a bare node:http reader of the same 64 KB bodies, and the fair limit, a node:http server doing
//      the upload's essential work on the same store; same load tool (autocannon) and concurrency,
//   4. the OTA check against a bare node:http server answering the same manifest bytes,
//   5. health ingest (docs/device-health.md): N simulated devices sending a boot report and a heartbeat
//      each (every one read back), then signed heartbeats of one device against the fair limit's
//      counterpart for a report (tools/bench/baseline-server.ts, fair-health),
//   6. with --profile, a CPU profile of every cloud process and of the simulator, summarised, and the
//      ingest's CPU per upload by what it is spent on.
// Cloud instances run as child processes (`fleet serve`); the simulator and the load tool in this one.
// Ends with lines scripts can read: `boot storm: …`, `storm ratio store=<s> instances=<k> seconds=<x>
// fair_seconds=<y> ratio=<x/y>`, `ingest ratio to fair limit: <median> (spread <min>-<max> over <n> rounds)`,
// `ingest ratio to bare: <r>`, `ota ratio to bare: <r>`, `health ingest devices=<n> lost=<n> ratio_to_fair_limit=<r>`.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { withWorkerHeap } from '../../cloud/cluster/heap.ts';
import { sqliteOptionsFromUrl } from '../../cloud/store/database-url.ts';
import { signDeviceRequest, type DeviceSignatureHeaders } from '../device-signer.ts';
import { FleetSimulator, formatResult, type SimResult } from '../simulate/engine.ts';
import { simulatedReports } from '../simulate/health.ts';
import { formatProfile, profileClockUs, summarizeProfile, type ProfileWindow } from '../simulate/profile.ts';
import { startPostgres, type PostgresServer } from '../postgres-server.ts';
import { CloudClient } from '../client.ts';
import { busyShare, machineCpu, rssPeak, treeCpuSeconds, treePids } from './process-tree.ts';
import { formatPerf, PERF_NODE_FLAGS, perfAvailable, recordPerf, summarizePerf } from './perf-profile.ts';
import { wholeOption } from './args.ts';

const { values: args } = parseArgs({
  options: {
    devices: { type: 'string', default: '10000' },
    spread: { type: 'string', default: '0' },
    duration: { type: 'string', default: '20' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    only: { type: 'string' },
    store: { type: 'string' },
    workers: { type: 'string', default: String(availableParallelism()) },
    'postgres-instances': { type: 'string', default: '2' },
    'postgres-workers': { type: 'string' },
    'no-fair-storm': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    perf: { type: 'boolean', default: false },
    deadline: { type: 'string', default: '900' },
    'keep-profiles': { type: 'string' },
    'sqlite-writer': { type: 'string', default: 'inline' },
    'fair-hash-body': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  process.stdout.write(
    'usage: npm run bench:fleet -- [--devices 10000] [--spread <s>] [--deadline 900] [--workers <n>] [--profile [--keep-profiles <dir>]] [--perf]\n' +
      '                           [--only sqlite,postgres,ingest,ota,health] [--store sqlite|postgres] [--postgres-instances 2] [--postgres-workers <n>] [--no-fair-storm]\n' +
      '                           (--postgres-workers: each instance\'s, default the workers over the instances; --no-fair-storm: no storm against the fair server)\n' +
      '                           [--duration 20] [--rounds 5] [--connections 50] [--warmup 2] [--fair-hash-body]   (the ingest and OTA comparisons: each case\'s duration, in rounds)\n' +
      '                           [--sqlite-writer worker|inline|both|inline,worker,…]   (the SQLite store\'s upload writes)\n' +
      '  --store postgres --devices 100000: the large storm alone (docs/fleet-scale.md), not run in CI\n' +
      '  --profile: V8 CPU profiles of every process (JavaScript detail); --perf: Linux perf, CPU time of every thread by component\n',
  );
  process.exit(0);
}

const DEVICES = wholeOption('devices', args.devices, 1);
const SPREAD_MS = wholeOption('spread', args.spread, 0) * 1000;
const DURATION_S = wholeOption('duration', args.duration, 1);
const CONNECTIONS = wholeOption('connections', args.connections, 1);
const WARMUP_S = wholeOption('warmup', args.warmup, 0);
const ROUNDS = wholeOption('rounds', args.rounds, 1);
const DEADLINE_MS = wholeOption('deadline', args.deadline, 1) * 1000;
const WORKERS = wholeOption('workers', args.workers, 1);
const PG_INSTANCES = wholeOption('postgres-instances', args['postgres-instances'], 1);
/**
 * Workers of each PostgreSQL instance: the instances share this machine, so together they take its
 * cores (docs/fleet-scale.md, sizing): the cores over the instances, at least 1, unless given.
 */
const PG_WORKERS = args['postgres-workers'] !== undefined ? wholeOption('postgres-workers', args['postgres-workers'], 1) : Math.max(1, Math.floor(WORKERS / PG_INSTANCES));
const FAIR_STORM = !args['no-fair-storm'];
if (args.perf && !perfAvailable()) {
  process.stderr.write('--perf: Linux perf is not installed here (apt-get install linux-perf)\n');
  process.exit(4);
}
// This process (the simulator, the load tool) names its JavaScript frames for perf too.
if (args.perf) (await import('node:v8')).setFlagsFromString(PERF_NODE_FLAGS[0]!);
/** node flags of every child when --perf: their JavaScript frames named in perf's samples. */
const PERF_ARGS = args.perf ? PERF_NODE_FLAGS : [];
const PARTS = ['sqlite', 'postgres', 'ingest', 'ota', 'health'] as const;
type Part = (typeof PARTS)[number];
const ONLY: Set<Part> = (() => {
  if (args.only) {
    const parts = args.only.split(',');
    const bad = parts.filter((p) => !(PARTS as readonly string[]).includes(p));
    if (bad.length) {
      process.stderr.write(`--only: ${bad.join(', ')} is not one of ${PARTS.join(', ')}\n`);
      process.exit(2);
    }
    return new Set(parts as Part[]);
  }
  if (args.store !== undefined) {
    if (args.store !== 'sqlite' && args.store !== 'postgres') {
      process.stderr.write(`--store: sqlite or postgres, not ${JSON.stringify(args.store)}\n`);
      process.exit(2);
    }
    return new Set<Part>([args.store]);
  }
  return new Set(PARTS);
})();
// `both` is `worker,inline`; a list measures the ingest once per writer, in that order (the storm uses the first).
const WRITERS = (args['sqlite-writer'] === 'both' ? ['worker', 'inline'] : args['sqlite-writer']!.split(',')) as ('worker' | 'inline')[];
if (!WRITERS.every((w) => w === 'worker' || w === 'inline')) {
  process.stderr.write(`--sqlite-writer: worker, inline, both or a list of them, not ${args['sqlite-writer']}\n`);
  process.exit(2);
}
/** A SQLite DATABASE_URL with the chosen writer (cloud/store/database-url.ts, sqliteOptionsFromUrl). */
const sqliteUrl = (path: string, writer = WRITERS[0]!) => `sqlite:${path}#writer=${writer}`;
const ROOT = new URL('../../', import.meta.url).pathname;
const BASELINE = join(ROOT, 'tools/bench/baseline-server.ts');
const TSX = import.meta.resolve('tsx');
const JWT_SECRET = randomBytes(24).toString('hex');
const TRACK = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';
const OTA_PATH = '/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=2026.01.01';
const procs = (n: number) => `${n} process${n === 1 ? '' : 'es'}`;

const err = (s: string) => process.stderr.write(s + '\n');

interface Child {
  url: string;
  child: ChildProcess;
  /** Lines the process wrote after it listened that say how it stopped (the `stopped: …` line). */
  said: string[];
}

function waitForListening(child: ChildProcess, what: string): Promise<Child> {
  return new Promise((resolve, reject) => {
    let text = '';
    const said: string[] = [];
    const timer = setTimeout(() => reject(new Error(`timed out after 60 s waiting for ${what}; output so far: ${text.slice(-2000)}`)), 60_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        // From now on only the lifecycle lines are kept: a busy cloud's logs must not fill memory here.
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        child.stdout?.resume();
        let tail = '';
        child.stderr?.on('data', (c: Buffer) => {
          tail = (tail + c.toString()).slice(-64 * 1024);
          const lines = tail.split('\n');
          tail = lines.pop()!;
          said.push(...lines.filter((l) => /^(stopped:|worker \d+ )/.test(l)));
        });
        resolve({ url: m[1]!, child, said });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what}: exited with ${code}: ${text.slice(-2000)}`)));
  });
}

/**
 * Every child this run started and not yet stopped, and its PostgreSQL server: on SIGINT or SIGTERM
 * they are stopped (and the work folder removed) before this process exits. A SIGKILL of this process
 * leaves the server to its watchdog (tools/postgres-server.ts).
 */
const live = new Set<ChildProcess>();
let onInterrupt: (() => void) | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    err(`${signal}: stopping the servers this run started`);
    // Every process of each (a serve's workers, a baseline's), at once: the run is over.
    for (const pid of [...live].flatMap((c) => (c.pid === undefined ? [] : treePids(c.pid)))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    onInterrupt?.();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function startCloud(env: Record<string, string>, nodeArgs: string[] = [], workers = WORKERS): Promise<Child> {
  // One worker serves in the `fleet serve` process itself: it gets the heap a worker gets from the
  // supervisor (cloud/cluster/heap.ts) as docs/fleet-scale.md tells an operator to give it.
  const heap = workers === 1 ? withWorkerHeap(nodeArgs) : nodeArgs;
  const child = track(
    spawn(process.execPath, [...PERF_ARGS, ...heap, join(ROOT, 'bin/fleet.js'), 'serve', '--port', '0'], {
      env: { ...process.env, JWT_SECRET, LOG_FORMAT: 'json', WORKERS: String(workers), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  return waitForListening(child, 'the cloud');
}

function startBaseline(mode: 'bare-ingest' | 'fair-ingest' | 'fair-health' | 'bare-ota' | 'fair-storm', extra: string[] = [], nodeArgs: string[] = [], workers = WORKERS): Promise<Child> {
  const child = track(spawn(process.execPath, [...PERF_ARGS, ...nodeArgs, '--import', TSX, BASELINE, '--mode', mode, '--workers', String(workers), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] }));
  return waitForListening(child, `the ${mode} baseline`);
}

/** The perf maps (--perf-basic-prof) processes of this run wrote into /tmp, removed when this one exits. */
const perfMaps = new Set<string>();
process.once('exit', () => {
  for (const f of perfMaps) rmSync(f, { force: true });
  if (args.perf) rmSync(`/tmp/perf-${process.pid}.map`, { force: true });
});

async function stop(c: Child): Promise<void> {
  const { child } = c;
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (args.perf && child.pid !== undefined) for (const pid of treePids(child.pid)) perfMaps.add(`/tmp/perf-${pid}.map`);
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
  // Killed, a child writes no CPU profile: say so rather than summarise another thread's.
  if (child.exitCode === null && child.signalCode === null) {
    err('  a child did not exit within 30 s of SIGTERM: killed (its CPU profile is lost)');
    child.kill('SIGKILL');
  }
}

/** An admin call as the bench's super user (the same client the `fleet` commands use). */
async function admin(url: string, method: string, path: string, body?: unknown): Promise<unknown> {
  return new CloudClient(url, () => mintToken(new TextEncoder().encode(JWT_SECRET), { subject: 'bench' })).request(method, path, body);
}

async function seedReleases(url: string): Promise<void> {
  for (const v of ['2026.01.01', '2026.02.01', '2026.03.01']) {
    await admin(url, 'PUT', `${TRACK}/${v}`, { url: `https://fw.example/ctl-s3/${v}.bin`, size: 1_572_864, sha256: 'ab'.repeat(32) });
  }
}

/** A CPU profile of this process (the simulator, the load tool) while `run` runs, when --profile. */
async function profiled<T>(dir: string, name: string, run: () => Promise<T>): Promise<{ value: T; file?: string }> {
  if (!args.profile) return { value: await run() };
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    const value = await run();
    const { profile } = await session.post('Profiler.stop');
    const file = join(dir, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    return { value, file };
  } finally {
    session.disconnect();
  }
}

interface StormCosts {
  /** From the first arrival to the last device done (the profiles' clock). */
  window: ProfileWindow;
  cloudCpuS: number;
  /** The PostgreSQL server's (postmaster and backends), when the store is one. */
  pgCpuS?: number;
  simCpuS: number;
  machineBusy: number;
  rssPeakBytes: number;
}

function stormLine(store: string, instances: number, r: SimResult): string {
  return `boot storm: devices=${r.devices} instances=${instances} store=${store} seconds=${r.stormSeconds.toFixed(1)} errors=${r.errorCount} lost=${r.lost}`;
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;

async function storm(
  clouds: Child[],
  store: string,
  dir: string,
  during?: () => Promise<void>,
  opts: { workers?: number; what?: string; postmasterPid?: number } = {},
): Promise<{ line: string; seconds: number; costs: StormCosts; simProfile?: string; perfLines: string[] }> {
  const workers = opts.workers ?? WORKERS;
  const what = opts.what ?? store;
  let costs: StormCosts | undefined;
  let perfStops: Promise<void>[] = [];
  let perfRecorders: { stop(): Promise<void> }[] = [];
  let at0 = { cloud: 0, pg: 0, sim: process.cpuUsage(), machine: machineCpu(), us: profileClockUs() };
  const peaks = clouds.map((c) => rssPeak(c.child.pid));
  const sim = new FleetSimulator({
    urls: clouds.map((c) => c.url),
    adminToken: await mintToken(new TextEncoder().encode(JWT_SECRET), { subject: 'bench', ttlSeconds: 3600 }),
    devices: DEVICES,
    spreadMs: SPREAD_MS,
    deadlineMs: DEADLINE_MS,
    onProgress: (p) =>
      err(`  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.devicesDone}/${p.devices} devices done, ${p.requests} requests, ${p.retries} retries, ${p.failures} failures`),
    onStormDone: () => {
      perfStops = perfRecorders.map((p) => p.stop());
      const sim = process.cpuUsage(at0.sim);
      costs = {
        window: { fromUs: at0.us, toUs: profileClockUs() },
        cloudCpuS: clouds.reduce((a, c) => a + treeCpuSeconds(c.child.pid), 0) - at0.cloud,
        ...(opts.postmasterPid !== undefined ? { pgCpuS: treeCpuSeconds(opts.postmasterPid) - at0.pg } : {}),
        simCpuS: (sim.user + sim.system) / 1e6,
        machineBusy: busyShare(at0.machine, machineCpu()),
        rssPeakBytes: peaks.reduce((a, p) => a + p.stop(), 0),
      };
    },
  });
  try {
    err(`${what}, ${clouds.length} instance(s) of ${procs(workers)}: enrolling ${DEVICES} devices…`);
    await sim.enroll();
    err(`${what}: boot storm of ${DEVICES} devices${SPREAD_MS ? ` over ${SPREAD_MS / 1000} s` : ', all at once'}`);
    const tag = what.replace(/[^a-z0-9]+/gi, '-');
    const perfFiles = { cloud: join(dir, `perf-storm-${tag}-cloud.data`), sim: join(dir, `perf-storm-${tag}-simulator.data`) };
    if (args.perf) perfRecorders = [recordPerf(clouds.flatMap((c) => treePids(c.child.pid!)), perfFiles.cloud), recordPerf([process.pid], perfFiles.sim)];
    at0 = { cloud: clouds.reduce((a, c) => a + treeCpuSeconds(c.child.pid), 0), pg: opts.postmasterPid !== undefined ? treeCpuSeconds(opts.postmasterPid) : 0, sim: process.cpuUsage(), machine: machineCpu(), us: profileClockUs() };
    const { value: r, file } = await profiled(dir, `simulator-${tag}`, async () => {
      const running = sim.run();
      if (during) await during();
      return running;
    });
    const c = costs!;
    process.stdout.write(
      [
        `-- ${what}, ${clouds.length} instance(s) of ${procs(workers)} (enrollment ${r.enrollSeconds.toFixed(1)} s, not counted)`,
        ...formatResult(r),
        `storm CPU: cloud ${c.cloudCpuS.toFixed(1)} s (all its processes and threads), ${c.pgCpuS !== undefined ? `PostgreSQL server ${c.pgCpuS.toFixed(1)} s, ` : ''}simulator ${c.simCpuS.toFixed(1)} s (this process: signing, blobs, HTTP client), machine ${(c.machineBusy * 100).toFixed(0)} % busy over ${r.stormSeconds.toFixed(1)} s`,
        `service RSS peak during the storm: ${mb(c.rssPeakBytes)} (every process of the serve${clouds.length > 1 ? 's' : ''})`,
      ].join('\n') + '\n',
    );
    await Promise.all(perfStops);
    const perfLines = args.perf
      ? [
          `-- CPU per device by component in the ${what} storm (perf; a device: its OTA check, push and 304 push, retries included): the cloud`,
          ...formatPerf(summarizePerf([perfFiles.cloud]), r.devices, 'device'),
          `-- the same for the simulator (this process: ${r.devices} devices' signatures, blobs and HTTP client)`,
          ...formatPerf(summarizePerf([perfFiles.sim]), r.devices, 'device'),
        ]
      : [];
    return { line: stormLine(store, clouds.length, r), seconds: r.stormSeconds, costs: c, perfLines, ...(file ? { simProfile: file } : {}) };
  } finally {
    sim.close();
  }
}

function load(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (e, result) => (e ? reject(e) : resolve(result)));
  });
}

interface Measured {
  name: string;
  /** Requests per second over every round, and each round's. */
  rps: number;
  roundRps: number[];
  /** Latency: the median of the rounds' p50 and p99. */
  p50: number;
  p99: number;
  bad: number;
  /** Requests of the measured rounds, and when they ran (the profiles' clock). */
  requests: number;
  windows: ProfileWindow[];
  /** perf.data of each round (--perf, cases asked for). */
  perfFiles: string[];
  cpuUsPerRequest: number;
  benchCpuUsPerRequest: number;
  machineBusy: number;
}

/** A case of a comparison: a server already listening, and the load to send it. */
interface Case {
  name: string;
  opts: autocannon.Options;
  pid: number | undefined;
  /** Recorded by perf during its rounds (--perf), into files under this prefix. */
  perfPrefix?: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

/**
 * The cases of one comparison, measured in turn, round after round (ROUNDS rounds of DURATION_S /
 * ROUNDS each, after a warm-up of each; every other round in the reverse order): the machine is shared and its load changes by the minute, so
 * a ratio is taken within each round (cases a few seconds apart) and the median of the rounds is
 * given. Besides the rate: the server's CPU per request (every process and thread of it) and this
 * process's (the load tool, and the signing of requests past the presigned ones), and how busy the
 * whole machine was (other work included): on a shared machine a server goes as fast as the CPU it gets.
 */
async function compare(cases: Case[]): Promise<Measured[]> {
  for (const c of cases) if (WARMUP_S > 0) await load({ ...c.opts, duration: WARMUP_S, connections: CONNECTIONS });
  const acc = cases.map(() => ({ seconds: 0, requests: 0, bad: 0, cpu: 0, bench: 0, busy: 0, p50: [] as number[], p99: [] as number[], roundRps: [] as number[], windows: [] as ProfileWindow[], perf: [] as string[] }));
  const seconds = DURATION_S / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating: every other round takes the cases in the reverse order (A B C, C B A, …), so that a
    // load that grows or falls during a round does not always favour the same case.
    const order = [...cases.entries()];
    if (round % 2 === 1) order.reverse();
    for (const [i, c] of order) {
      const a = acc[i]!;
      const fromUs = profileClockUs();
      const cpu0 = treeCpuSeconds(c.pid);
      const self0 = process.cpuUsage();
      const m0 = machineCpu();
      const perfFile = args.perf && c.perfPrefix && c.pid !== undefined ? `${c.perfPrefix}-${round}.data` : undefined;
      const perf = perfFile ? recordPerf(treePids(c.pid!), perfFile) : undefined;
      const r = await load({ ...c.opts, duration: seconds, connections: CONNECTIONS });
      await perf?.stop();
      if (perfFile) a.perf.push(perfFile);
      a.windows.push({ fromUs, toUs: profileClockUs() });
      a.busy += busyShare(m0, machineCpu());
      const self = process.cpuUsage(self0);
      a.cpu += treeCpuSeconds(c.pid) - cpu0;
      a.bench += (self.user + self.system) / 1e6;
      a.seconds += seconds;
      a.requests += r.requests.total;
      a.bad += r.non2xx + r.errors + r.timeouts;
      a.p50.push(r.latency.p50);
      a.p99.push(r.latency.p99);
      a.roundRps.push(r.requests.total / seconds);
    }
    err(`  round ${round + 1}/${ROUNDS}: ${cases.map((c, i) => `${c.name.split(',')[0]} ${acc[i]!.roundRps.at(-1)!.toFixed(0)} req/s`).join(', ')}`);
  }
  return cases.map((c, i) => {
    const a = acc[i]!;
    const n = Math.max(1, a.requests);
    return {
      name: c.name,
      rps: a.requests / a.seconds,
      roundRps: a.roundRps,
      p50: median(a.p50),
      p99: median(a.p99),
      bad: a.bad,
      requests: a.requests,
      windows: a.windows,
      perfFiles: a.perf,
      cpuUsPerRequest: (a.cpu * 1e6) / n,
      benchCpuUsPerRequest: (a.bench * 1e6) / n,
      machineBusy: a.busy / ROUNDS,
    };
  });
}

/** Each round's rate of a case divided by its baseline's in the same round. */
const roundRatios = (of: Measured, to: Measured) => of.roundRps.map((r, i) => r / Math.max(1e-9, to.roundRps[i]!));

/** The median over rounds of a case's rate divided by its baseline's in the same round. */
function ratio(of: Measured, to: Measured): string {
  return median(roundRatios(of, to)).toFixed(2);
}

/** The same median with its spread: `<median> (spread <min>-<max> over <n> rounds)`. */
function ratioWithSpread(of: Measured, to: Measured): string {
  const rs = roundRatios(of, to);
  return `${median(rs).toFixed(2)} (spread ${Math.min(...rs).toFixed(2)}-${Math.max(...rs).toFixed(2)} over ${rs.length} rounds)`;
}

/** node flags that make every process of a child write a CPU profile into `dir` when it exits. */
function profileArgs(dir: string): string[] {
  return args.profile ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

function profileFiles(dir: string): string[] {
  try {
    const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
    if (args['keep-profiles']) {
      mkdirSync(args['keep-profiles'], { recursive: true });
      for (const f of files) copyFileSync(f, join(args['keep-profiles'], f.split('/').at(-1)!));
    }
    return files;
  } catch {
    return [];
  }
}

/** The summary of the CPU profiles a stopped service (every process and thread of it) or this process wrote. */
function profileLines(files: string[], what: string, window?: ProfileWindow | ProfileWindow[]): string[] {
  if (!args.profile) return [];
  if (files.length === 0) return [`profile (${what}): none written`];
  return [`-- profile of ${what} (${files.length} threads' profiles summed${window ? ', the measured part only' : ''})`, ...formatProfile(summarizeProfile(files, 15, window))];
}

/**
 * Where an upload's CPU goes, per upload: the main threads' profiles (every process of the serve),
 * over the measured part of the load only, by category, divided by the uploads of that part; the
 * rest of the CPU the kernel counted for the service (/proc, every thread) ran off the main threads:
 * the signature check on libuv's pool, V8's helper threads, the SQLite checkpointer.
 */
function perUploadLines(files: string[], m: Measured): string[] {
  if (!args.profile || files.length === 0) return [];
  const s = summarizeProfile(files, 15, m.windows);
  const perUpload = (ms: number) => ((ms * 1000) / Math.max(1, m.requests)).toFixed(0).padStart(6);
  return [
    `-- where an upload's CPU goes (${m.name}; ${m.requests} uploads in the measured rounds, every process of the server)`,
    ...s.categories.map((c) => `${perUpload(c.ms)} µs  ${c.name}`),
    `${perUpload(s.busyMs)} µs  on the threads V8 profiles (sum of the above)`,
    `${m.cpuUsPerRequest.toFixed(0).padStart(6)} µs  all threads, from /proc: the difference ran where V8 does not sample (the signature check on libuv's pool, GC helper threads, the kernel's side of the sockets)`,
  ];
}

/** The profiles of the main threads (thread 0 in --cpu-prof's file names) and of the other threads (the SQLite checkpointer, the writer thread). */
function byThread(files: string[]): { main: string[]; others: string[] } {
  const main = files.filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  return { main, others: files.filter((f) => !main.includes(f)) };
}

/**
 * Where a storm's time goes, per device (its OTA check, push and 304 push, retries included), over
 * the storm only, from the V8 profiles: the cloud's main threads by category, its other threads, and
 * the CPU the kernel counted for it; the simulator (this process) by category, and its CPU.
 */
function perDeviceLines(store: string, cloudFiles: string[], simFile: string | undefined, costs: StormCosts): string[] {
  if (!args.profile) return [];
  const us = (ms: number) => ((ms * 1000) / DEVICES).toFixed(0).padStart(6);
  const { main, others } = byThread(cloudFiles);
  const m = summarizeProfile(main, 15, costs.window);
  const o = summarizeProfile(others, 15, costs.window);
  const lines = [
    `-- where a device's time goes in the ${store} storm (V8 profiles, µs per device: its OTA check, push and 304 push, retries included)`,
    'the cloud, main threads:',
    ...m.categories.map((c) => `${us(c.ms)} µs  ${c.name}`),
    `${us(m.busyMs)} µs  main threads (sum of the above: time on the thread, which includes being preempted on a busy machine)`,
    `${us(o.busyMs)} µs  other threads V8 profiles (the SQLite checkpointer: mostly waiting for its writes and fsync)`,
    `${us(costs.cloudCpuS * 1000)} µs  CPU of all its threads, from /proc`,
  ];
  if (simFile) {
    const sim = summarizeProfile(simFile, 15, costs.window);
    lines.push('the simulator (this process):', ...sim.categories.map((c) => `${us(c.ms)} µs  ${c.name}`), `${us(costs.simCpuS * 1000)} µs  CPU of all its threads (process.cpuUsage)`);
  }
  return lines;
}

/**
 * Signature headers made before the load starts (each a fresh nonce; the timestamps stay well inside
 * the cloud's window for a run of seconds): the load tool shares this machine with the servers, and
 * signing during the run cost it ~250 µs of CPU per request, CPU the servers then did not get. A
 * device signs on its own CPU. Past these, requests are signed as sent.
 */
function presign(privateKey: KeyObject, uuid: string, n: number): DeviceSignatureHeaders[] {
  const t0 = Date.now();
  const out = Array.from({ length: n }, () => signDeviceRequest(privateKey, uuid));
  err(`  signed ${n} requests ahead in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return out;
}

/** The fair limit's store: its own fresh file of the same store, the device enrolled in it directly; its DATABASE_URL. */
async function fairDatabase(path: string, writer: 'worker' | 'inline', uuid: string, pem: string): Promise<string> {
  const url = sqliteUrl(path, writer);
  const { SqliteStore } = await import('../../cloud/store/sqlite.ts');
  const seeded = new SqliteStore(sqliteOptionsFromUrl(url).path);
  await seeded.putDevice(uuid, pem, new Date().toISOString());
  await seeded.close();
  return url;
}

const caseLine = (f: Measured) =>
  `${f.name.padEnd(58)} ${f.rps.toFixed(0).padStart(7)} ${f.p50.toFixed(1).padStart(8)} ${f.p99.toFixed(1).padStart(8)} ${String(f.bad).padStart(8)} ${f.cpuUsPerRequest.toFixed(0).padStart(19)} ${f.benchCpuUsPerRequest.toFixed(0).padStart(18)} ${(f.machineBusy * 100).toFixed(0).padStart(12)} %`;
const CASE_HEADER = `${'case'.padEnd(58)}   req/s   p50 ms   p99 ms   failed   server CPU µs/req   bench CPU µs/req   machine busy`;

async function ingest(dir: string): Promise<string[]> {
  const blob = Buffer.concat([Buffer.from('FFCE'), randomBytes(64 * 1024 - 4)]);
  const etag = 'e'.repeat(64);
  const uuid = 'bench-device-0001';
  const path = `/devices/${uuid}/backup`;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const signedUpload = (): autocannon.Request => {
    const signed = presign(privateKey, uuid, Math.min(120_000, Math.ceil((WARMUP_S + DURATION_S) * 4000 * WORKERS)));
    return {
      method: 'POST',
      path,
      setupRequest: (req) => ({ ...req, headers: { ...(signed.pop() ?? signDeviceRequest(privateKey, uuid)), 'content-type': 'application/octet-stream', etag }, body: blob }),
    };
  };
  const lines: string[] = [];
  const ratios: string[] = [];
  for (const [i, writer] of WRITERS.entries()) {
    const writes = writer === 'worker' ? 'writer thread' : 'writes inline';
    const running: Child[] = [];
    try {
      const bare = await startBaseline('bare-ingest');
      running.push(bare);
      const fairDb = await fairDatabase(join(dir, `fair-${writer}.sqlite`), writer, uuid, pem);
      const fairProf = join(dir, `prof-fair-${writer}`);
      const fair = await startBaseline('fair-ingest', ['--database', fairDb, ...(args['fair-hash-body'] ? ['--hash-body'] : [])], profileArgs(fairProf));
      running.push(fair);
      const cloudProf = join(dir, `prof-ingest-${writer}`);
      const cloud = await startCloud({ DATABASE_URL: sqliteUrl(join(dir, `ingest-${writer}.sqlite`), writer) }, profileArgs(cloudProf));
      running.push(cloud);
      await admin(cloud.url, 'PUT', `/admin/devices/${uuid}`, { public_key: pem });
      const [b, f, c] = await compare([
        { name: 'bare node:http, reads and drops 64 KB bodies', opts: { url: bare.url, requests: [{ method: 'POST', path, headers: { 'content-type': 'application/octet-stream', etag }, body: blob }] }, pid: bare.child.pid },
        { name: `fair limit, the upload's work (SQLite ${writes})`, opts: { url: fair.url, requests: [signedUpload()] }, pid: fair.child.pid, perfPrefix: join(dir, `perf-fair-${writer}`) },
        { name: `cloud signed 64 KB upload (SQLite ${writes})`, opts: { url: cloud.url, requests: [signedUpload()] }, pid: cloud.child.pid, perfPrefix: join(dir, `perf-cloud-${writer}`) },
      ]);
      for (const r of running) await stop(r);
      const fairFiles = profileFiles(fairProf);
      const cloudFiles = profileFiles(cloudProf);
      lines.push(
        `-- backup ingest (64 KB bodies, autocannon, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S / ROUNDS} s; every server on ${procs(WORKERS)})`,
        CASE_HEADER,
        ...[b!, f!, c!].map(caseLine),
        `rounds, req/s: ${[b!, f!, c!].map((m) => `${m.name.split(',')[0]} ${m.roundRps.map((x) => x.toFixed(0)).join(' / ')}`).join('; ')}`,
        ...fair.said,
        ...cloud.said,
        ...perUploadLines(fairFiles, f!),
        ...perUploadLines(cloudFiles, c!),
        ...(args.perf ? [`-- CPU per upload by component (perf): ${f!.name}`, ...formatPerf(summarizePerf(f!.perfFiles), f!.requests, 'upload')] : []),
        ...(args.perf ? [`-- CPU per upload by component (perf): ${c!.name}`, ...formatPerf(summarizePerf(c!.perfFiles), c!.requests, 'upload')] : []),
        ...profileLines(cloudFiles, `the cloud during the ingest (SQLite ${writes})`, c!.windows),
      );
      // The first writer is the configuration under test (--sqlite-writer); the others' ratios follow.
      const tag = i === 0 ? '' : ` (SQLite writer ${writer})`;
      ratios.push(
        `ingest ratio to fair limit${tag}: ${ratioWithSpread(c!, f!)}`,
        `ingest ratio to bare${tag}: ${ratio(c!, b!)}`,
        // Less sensitive to what else the shared machine runs than a rate: the CPU each spends per upload.
        `ingest CPU ratio to fair limit${tag} (its CPU per upload / the cloud's): ${(f!.cpuUsPerRequest / Math.max(1, c!.cpuUsPerRequest)).toFixed(2)}`,
      );
    } finally {
      for (const r of running) await stop(r);
    }
  }
  process.stdout.write(lines.join('\n') + '\n');
  return ratios;
}

/**
 * Health ingest (docs/device-health.md): DEVICES simulated devices (one serve, SQLite) each send a boot
 * report and a heartbeat after their update check, every one read back; then signed heartbeats of one
 * device, each a new seq, against the fair limit of a report (the essential work, on the same store).
 */
function healthIngest(dir: string): Promise<string[]> {
  return onSeededCloud(dir, 'health', async (cloud, running) => {
    const sim = new FleetSimulator({
      urls: [cloud.url],
      adminToken: await mintToken(new TextEncoder().encode(JWT_SECRET), { subject: 'bench', ttlSeconds: 3600 }),
      devices: DEVICES,
      spreadMs: SPREAD_MS,
      deadlineMs: DEADLINE_MS,
      health: true,
      backups: false,
      onProgress: (p) => err(`  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.devicesDone}/${p.devices} devices done, ${p.requests} requests, ${p.retries} retries, ${p.failures} failures`),
    });
    let r: SimResult;
    try {
      err(`health: enrolling ${DEVICES} devices…`);
      await sim.enroll();
      err(`health: ${DEVICES} devices send a boot report and a heartbeat${SPREAD_MS ? ` over ${SPREAD_MS / 1000} s` : ', all at once'}`);
      r = await sim.run();
    } finally {
      sim.close();
    }
    const uuid = 'bench-health-0001';
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const fair = await startBaseline('fair-health', ['--database', await fairDatabase(join(dir, 'fair-health.sqlite'), WRITERS[0]!, uuid, pem)]);
    running.push(fair);
    await admin(cloud.url, 'PUT', `/admin/devices/${uuid}`, { public_key: pem });
    /** Heartbeats of the device, a new seq each (a seq stored before is only answered, not stored). */
    const heartbeats = (): autocannon.Request => {
      const signed = presign(privateKey, uuid, Math.min(120_000, Math.ceil((WARMUP_S + DURATION_S) * 4000 * WORKERS)));
      const report = simulatedReports('2026.01.01', Date.now).heartbeat;
      let seq = 0;
      return {
        method: 'POST',
        path: `/devices/${uuid}/health`,
        setupRequest: (req) => ({ ...req, headers: { ...(signed.pop() ?? signDeviceRequest(privateKey, uuid)), 'content-type': 'application/json' }, body: JSON.stringify({ ...report(), seq: ++seq }) }),
      };
    };
    const [f, c] = await compare([
      { name: 'fair limit, a report\'s work (SQLite)', opts: { url: fair.url, requests: [heartbeats()] }, pid: fair.child.pid },
      { name: 'cloud signed health report (heartbeat)', opts: { url: cloud.url, requests: [heartbeats()] }, pid: cloud.child.pid },
    ]);
    process.stdout.write(
      [
        `-- health ingest: ${r.devices} devices, a boot report and a heartbeat each (one serve of ${procs(WORKERS)}, SQLite)`,
        ...formatResult(r),
        `-- health ingest against the fair limit (heartbeats of one device, autocannon, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S / ROUNDS} s)`,
        CASE_HEADER,
        caseLine(f!),
        caseLine(c!),
        `rounds, req/s: ${[f!, c!].map((m) => `${m.name.split(',')[0]} ${m.roundRps.map((x) => x.toFixed(0)).join(' / ')}`).join('; ')}`,
      ].join('\n') + '\n',
    );
    // A device that gave up a step, or whose reports are not both read back, lost reports.
    return [`health ingest devices=${r.devices} lost=${r.health?.lost ?? r.devices} ratio_to_fair_limit=${ratio(c!, f!)}`];
  });
}

/** A cloud (one serve, on SQLite in `dir`) with the bench's releases, and what `run` starts beside it: all stopped after it. */
async function onSeededCloud<T>(dir: string, name: string, run: (cloud: Child, running: Child[]) => Promise<T>): Promise<T> {
  const running: Child[] = [];
  try {
    const cloud = await startCloud({ DATABASE_URL: sqliteUrl(join(dir, `${name}.sqlite`)) });
    running.push(cloud);
    await seedReleases(cloud.url);
    return await run(cloud, running);
  } finally {
    for (const c of running) await stop(c);
  }
}

/** The manifest a seeded cloud answers the simulator's OTA check with, in a file (the fair storm answers it). */
async function manifestFile(url: string, dir: string): Promise<string> {
  const file = join(dir, 'storm-manifest.json');
  writeFileSync(file, Buffer.from(await (await fetch(url + OTA_PATH)).arrayBuffer()));
  return file;
}

const stormRatioLine = (store: string, instances: number, seconds: number, fairSeconds: number) =>
  `storm ratio store=${store} instances=${instances} seconds=${seconds.toFixed(1)} fair_seconds=${fairSeconds.toFixed(1)} ratio=${(seconds / fairSeconds).toFixed(2)}`;

/**
 * The same storm (the same simulator, devices and options) against the fair server
 * (baseline-server.ts --mode fair-storm): as many instances of as many processes as the cloud's, on
 * a fresh database of the same store. Its storm seconds.
 */
async function fairStorm(dir: string, store: 'sqlite' | 'postgres', databaseUrls: string[], workers: number, manifest: string, postmasterPid?: number): Promise<number> {
  const running: Child[] = [];
  try {
    for (const url of databaseUrls) running.push(await startBaseline('fair-storm', ['--database', url, '--manifest-file', manifest], [], workers));
    const s = await storm(running, store, dir, undefined, { workers, what: `fair server, ${store}`, ...(postmasterPid !== undefined ? { postmasterPid } : {}) });
    for (const c of running) await stop(c);
    const said = running.flatMap((c) => c.said);
    if (said.length) process.stdout.write(said.join('\n') + '\n');
    return s.seconds;
  } finally {
    for (const c of running) await stop(c);
  }
}

function ota(dir: string): Promise<string[]> {
  return onSeededCloud(dir, 'ota', async (cloud, running) => {
    const manifest = Buffer.from(await (await fetch(cloud.url + OTA_PATH)).arrayBuffer());
    const file = join(dir, 'manifest.json');
    writeFileSync(file, manifest);
    const bare = await startBaseline('bare-ota', ['--manifest-file', file]);
    running.push(bare);
    const [b, c] = await compare([
      { name: 'bare node:http, the same manifest bytes', opts: { url: bare.url + OTA_PATH }, pid: bare.child.pid },
      { name: 'cloud OTA check (fast path)', opts: { url: cloud.url + OTA_PATH }, pid: cloud.child.pid },
    ]);
    process.stdout.write(
      [
        `-- OTA check (autocannon, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S / ROUNDS} s; both on ${procs(WORKERS)})`,
        CASE_HEADER,
        caseLine(b!),
        caseLine(c!),
        `rounds, req/s: ${[b!, c!].map((m) => `${m.name.split(',')[0]} ${m.roundRps.map((x) => x.toFixed(0)).join(' / ')}`).join('; ')}`,
      ].join('\n') + '\n',
    );
    return [`ota ratio to bare: ${ratio(c!, b!)}`];
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-'));
  const children: Child[] = [];
  const summary: string[] = [];
  /** The storm ratios, printed last with the ingest's. */
  const ratios: string[] = [];
  let pgServer: PostgresServer | undefined;
  onInterrupt = () => {
    try {
      pgServer?.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const [l1, l5, l15] = loadavg();
  process.stdout.write(`machine: ${availableParallelism()} cores available to node, load average ${l1!.toFixed(2)} ${l5!.toFixed(2)} ${l15!.toFixed(2)} at the start; every server on ${procs(WORKERS)}${ONLY.has('postgres') ? `, each of the ${PG_INSTANCES} PostgreSQL instances on ${procs(PG_WORKERS)}` : ''}\n`);
  try {
    if (ONLY.has('sqlite')) {
      const profDir = join(dir, 'prof-sqlite');
      const one = await startCloud({ DATABASE_URL: sqliteUrl(join(dir, 'storm.sqlite')) }, profileArgs(profDir));
      children.push(one);
      await seedReleases(one.url);
      const manifest = await manifestFile(one.url, dir);
      const s = await storm([one], 'sqlite', dir);
      await stop(one);
      summary.push(s.line, ...one.said.filter((l) => l.startsWith('stopped:')).map((l) => `sqlite storm, ${l}`), `service RSS peak (sqlite storm): ${mb(s.costs.rssPeakBytes)}`);
      process.stdout.write(
        [
          ...one.said,
          ...s.perfLines,
          ...perDeviceLines('sqlite', profileFiles(profDir), s.simProfile, s.costs),
          ...profileLines(profileFiles(profDir), 'the cloud during the sqlite storm', s.costs.window),
          ...profileLines(s.simProfile ? [s.simProfile] : [], 'the simulator during the sqlite storm', s.costs.window),
        ].join('\n') + '\n',
      );
      if (FAIR_STORM) {
        const fair = await fairStorm(dir, 'sqlite', [sqliteUrl(join(dir, 'fair-storm.sqlite'))], WORKERS, manifest);
        ratios.push(stormRatioLine('sqlite', 1, s.seconds, fair));
      }
    }
    if (ONLY.has('postgres')) {
      err('starting PostgreSQL…');
      pgServer = await startPostgres();
      const client = new pg.Client({ connectionString: pgServer.url });
      await client.connect();
      await client.query('CREATE DATABASE fleet_bench');
      await client.end();
      const dbUrl = pgServer.url.replace(/\/postgres$/, '/fleet_bench');
      const profDir = join(dir, 'prof-postgres');
      const instances: Child[] = [];
      for (let i = 0; i < PG_INSTANCES; i++) {
        const c = await startCloud({ DATABASE_URL: dbUrl }, profileArgs(profDir), PG_WORKERS);
        children.push(c);
        instances.push(c);
      }
      await seedReleases(instances[0]!.url);
      const manifest = await manifestFile(instances[0]!.url, dir);
      // A deployment during the storm: written through one instance, picked up by every worker of each.
      // The admin calls share this process with the simulator and the cloud with the storm: under
      // overload they may be refused (408, 503); retried a few times, and a failure is reported, not fatal.
      const deployThrough = instances.at(-1)!.url;
      const deploy = async () => {
        await new Promise((r) => setTimeout(r, 2000));
        for (let attempt = 1; ; attempt++) {
          try {
            await admin(deployThrough, 'PATCH', '/appconfig/svc-func-backup', { logging: 'WARNING' });
            await admin(deployThrough, 'POST', '/appconfig/svc-func-backup/deploy');
            err(`  appconfig svc-func-backup deployed during the storm (attempt ${attempt})`);
            summary.push('appconfig deployment during the postgres storm: done');
            return;
          } catch (e) {
            if (attempt >= 5) {
              summary.push(`appconfig deployment during the postgres storm: failed (${e instanceof Error ? e.message.slice(0, 160) : String(e)})`);
              return;
            }
            await new Promise((r) => setTimeout(r, 3000));
          }
        }
      };
      const postmasterPid = Number(readFileSync(join(pgServer.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      const s = await storm(instances, 'postgres', dir, deploy, { workers: PG_WORKERS, postmasterPid });
      for (const c of instances) await stop(c);
      summary.push(s.line, `service RSS peak (postgres storm, ${PG_INSTANCES} instances): ${mb(s.costs.rssPeakBytes)}`);
      process.stdout.write(
        [
          ...instances.flatMap((c) => c.said),
          ...s.perfLines,
          ...perDeviceLines('postgres', profileFiles(profDir), s.simProfile, s.costs),
          ...profileLines(profileFiles(profDir), 'the clouds during the postgres storm', s.costs.window),
          ...profileLines(s.simProfile ? [s.simProfile] : [], 'the simulator during the postgres storm', s.costs.window),
        ].join('\n') + '\n',
      );
      if (FAIR_STORM) {
        const admin = new pg.Client({ connectionString: pgServer.url });
        await admin.connect();
        await admin.query('CREATE DATABASE fleet_fair');
        await admin.end();
        const fairUrl = pgServer.url.replace(/\/postgres$/, '/fleet_fair');
        const fair = await fairStorm(dir, 'postgres', Array.from({ length: PG_INSTANCES }, () => fairUrl), PG_WORKERS, manifest, postmasterPid);
        ratios.push(stormRatioLine('postgres', PG_INSTANCES, s.seconds, fair));
      }
    }
    if (ONLY.has('ingest')) ratios.push(...(await ingest(dir)));
    if (ONLY.has('ota')) summary.push(...(await ota(dir)));
    if (ONLY.has('health')) summary.push(...(await healthIngest(dir)));
  } finally {
    for (const c of children) await stop(c);
    pgServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write('\n' + [...summary, ...ratios].join('\n') + '\n');
}

await main();
