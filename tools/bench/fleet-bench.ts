// npm run bench:fleet (docs/fleet-scale.md): in one run,
//   1. a boot storm of N simulated devices (default 10,000, all at once) on one cloud instance with SQLite,
//   2. the same on PostgreSQL (a real server, started by tools/postgres-server.ts as for the store tests) with two cloud
//      instances behind a small round-robin (in the simulator's client: requests alternate), while an
//      appconfig deployment runs, so the shared nonce cache and deployments are under load,
//   3. backup ingest against its own baseline: a bare node:http server that reads and discards the same
//      64 KB bodies, under the same load tool and concurrency (autocannon), and the ratio,
//   4. with --profile, a CPU profile of each cloud process (the storms' and the ingest's), summarised.
// Cloud instances run as child processes (`fleet serve`); the simulator and the load tool in this one.
// Ends with one `boot storm: …` line per configuration and `ingest ratio to bare: <r>`.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { signDeviceRequest, type DeviceSignatureHeaders } from '../device-signer.ts';
import { FleetSimulator, formatResult, type SimResult } from '../simulate/engine.ts';
import { formatProfile, summarizeProfile } from '../simulate/profile.ts';
import { startPostgres, type PostgresServer } from '../postgres-server.ts';
import { CloudClient } from '../client.ts';

const { values: args } = parseArgs({
  options: {
    devices: { type: 'string', default: '10000' },
    spread: { type: 'string', default: '0' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '2' },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
    deadline: { type: 'string', default: '900' },
    'keep-profiles': { type: 'string' },
    'sqlite-writer': { type: 'string', default: 'inline' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  process.stdout.write('usage: npm run bench:fleet -- [--devices 10000] [--spread <s>] [--deadline 900] [--only sqlite,postgres,ingest] [--profile [--keep-profiles <dir>]]\n' +
    '                           [--duration 10] [--connections 50] [--warmup 2]   (the ingest comparison)\n' +
    '                           [--sqlite-writer worker|inline|both|inline,worker,…]   (the SQLite store\'s upload writes: writer thread or event loop; several: each in one run, the storm uses the first)\n');
  process.exit(0);
}
const DEVICES = Number(args.devices);
const SPREAD_MS = Number(args.spread) * 1000;
const DURATION_S = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP_S = Number(args.warmup);
const DEADLINE_MS = Number(args.deadline) * 1000;
const ONLY = args.only ? new Set(args.only.split(',')) : undefined; // sqlite,postgres,ingest
// `both` is `worker,inline`; a list measures the ingest once per writer, in that order (the storm uses the first).
const WRITERS = (args['sqlite-writer'] === 'both' ? ['worker', 'inline'] : args['sqlite-writer']!.split(',')) as ('worker' | 'inline')[];
if (!WRITERS.every((w) => w === 'worker' || w === 'inline')) throw new Error(`--sqlite-writer: worker, inline, both or a list of them, not ${args['sqlite-writer']}`);
/** A SQLite DATABASE_URL with the chosen writer (cloud/store/sqlite.ts, sqliteOptionsFromUrl). */
const sqliteUrl = (path: string, writer = WRITERS[0]!) => `sqlite:${path}#writer=${writer}`;
const ROOT = new URL('../../', import.meta.url).pathname;
const JWT_SECRET = randomBytes(24).toString('hex');
const TRACK = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';

const err = (s: string) => process.stderr.write(s + '\n');

function waitForListening(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`timed out after 30 s waiting for ${what}; output so far: ${text.slice(-2000)}`)), 30_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        // From now on the output is read and dropped: a busy cloud's logs must not fill memory here.
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(m[1]!);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what}: exited with ${code}: ${text.slice(-2000)}`)));
  });
}

async function startCloud(env: Record<string, string>, nodeArgs: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, 'bin/fleet.js'), 'serve', '--port', '0'], {
    env: { ...process.env, JWT_SECRET, LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { url: await waitForListening(child, 'the cloud'), child };
}

async function startBareIngest(): Promise<{ url: string; child: ChildProcess }> {
  // Reads every body to its end and drops it, then answers a small JSON, as the cloud does.
  const code = `
    const http = require('node:http');
    const answer = Buffer.from(JSON.stringify({ message: 'Backup stored', last_backup_date: new Date().toISOString() }));
    const server = http.createServer((req, res) => {
      let n = 0;
      req.on('data', (c) => { n += c.length; });
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': answer.length });
        res.end(answer);
      });
    });
    server.keepAliveTimeout = 65000;
    server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port));
  `;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
  return { url: await waitForListening(child, 'the bare server'), child };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  // Killed, a child writes no CPU profile: say so rather than summarise another thread's.
  if (child.exitCode === null && child.signalCode === null) {
    err('  a child did not exit within 15 s of SIGTERM: killed (its CPU profile is lost)');
    child.kill('SIGKILL');
  }
}

/** An admin call as the bench's super user (the same client the `fleet` commands use). */
async function admin(url: string, method: string, path: string, body?: unknown): Promise<void> {
  const { mintToken } = await import('../../cloud/auth/jwt.ts');
  await new CloudClient(url, () => mintToken(new TextEncoder().encode(JWT_SECRET), { subject: 'bench' })).request(method, path, body);
}

async function seedReleases(url: string): Promise<void> {
  for (const v of ['2026.01.01', '2026.02.01', '2026.03.01']) {
    await admin(url, 'PUT', `${TRACK}/${v}`, { url: `https://fw.example/ctl-s3/${v}.bin`, size: 1_572_864, sha256: 'ab'.repeat(32) });
  }
}

function stormLine(store: string, instances: number, r: SimResult): string {
  return `boot storm: devices=${r.devices} instances=${instances} store=${store} seconds=${r.stormSeconds.toFixed(1)} errors=${r.errorCount} lost=${r.lost}`;
}

async function storm(urls: string[], store: string, during?: () => Promise<void>): Promise<string> {
  const sim = new FleetSimulator({
    urls,
    adminToken: await mintToken(new TextEncoder().encode(JWT_SECRET), { subject: 'bench', ttlSeconds: 3600 }),
    devices: DEVICES,
    spreadMs: SPREAD_MS,
    deadlineMs: DEADLINE_MS,
    onProgress: (p) =>
      err(`  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.devicesDone}/${p.devices} devices done, ${p.requests} requests, ${p.retries} retries, ${p.failures} failures`),
  });
  try {
    err(`${store}, ${urls.length} instance(s): enrolling ${DEVICES} devices…`);
    await sim.enroll();
    err(`${store}: boot storm of ${DEVICES} devices${SPREAD_MS ? ` over ${SPREAD_MS / 1000} s` : ', all at once'}`);
    const running = sim.run();
    if (during) await during();
    const r = await running;
    process.stdout.write([`-- ${store}, ${urls.length} instance(s)`, ...formatResult(r)].join('\n') + '\n');
    return stormLine(store, urls.length, r);
  } finally {
    sim.close();
  }
}

function load(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (e, result) => (e ? reject(e) : resolve(result)));
  });
}

/** CPU seconds a process has used so far, all its threads (Linux /proc; 0 elsewhere). */
function processCpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/** The machine's CPU time so far, busy and total, over all cores (/proc/stat), in clock ticks. */
function machineCpu(): { busy: number; total: number } {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - f[3]! - (f[4] ?? 0), total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

interface Measured { name: string; rps: number; p50: number; p99: number; bad: number; cpuUsPerRequest: number; benchCpuUsPerRequest: number; machineBusy: number }

/**
 * One case under load. Besides the rate: the server's CPU per request (all its threads) and this
 * process's (the load tool, and the signing of every request), and how busy the whole machine was
 * (other work included): on a shared machine a server can only go as fast as the CPU it gets.
 */
async function measure(name: string, opts: autocannon.Options, serverPid?: number): Promise<Measured> {
  if (WARMUP_S > 0) await load({ ...opts, duration: WARMUP_S, connections: CONNECTIONS });
  const cpu0 = processCpuSeconds(serverPid);
  const self0 = process.cpuUsage();
  const m0 = machineCpu();
  const r = await load({ ...opts, duration: DURATION_S, connections: CONNECTIONS });
  const m1 = machineCpu();
  const self = process.cpuUsage(self0);
  const n = Math.max(1, r.requests.total);
  const f = {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    bad: r.non2xx + r.errors + r.timeouts,
    cpuUsPerRequest: ((processCpuSeconds(serverPid) - cpu0) * 1e6) / n,
    benchCpuUsPerRequest: (self.user + self.system) / n,
    machineBusy: m1.total > m0.total ? (m1.busy - m0.busy) / (m1.total - m0.total) : 0,
  };
  err(`  measured ${name}: ${f.rps.toFixed(0)} req/s, server ${f.cpuUsPerRequest.toFixed(0)} µs CPU/request, machine ${(f.machineBusy * 100).toFixed(0)} % busy`);
  return f;
}

/** node flags that make a cloud child write a CPU profile into `dir` when it exits. */
function profileArgs(dir: string): string[] {
  return args.profile ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** The summaries of the CPU profiles a stopped child (or children) wrote into `dir`. */
function profileLines(dir: string, what: string): string[] {
  if (!args.profile) return [];
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    files = [];
  }
  if (files.length === 0) return [`profile (${what}): none written`];
  if (args['keep-profiles']) {
    mkdirSync(args['keep-profiles'], { recursive: true });
    for (const f of files) copyFileSync(join(dir, f), join(args['keep-profiles'], f));
  }
  return files.flatMap((f, i) => [`-- profile of ${what}${files.length > 1 ? ` (process ${i + 1})` : ''}`, ...formatProfile(summarizeProfile(join(dir, f)))]);
}

/**
 * Signature headers made before the load starts (each a fresh nonce; the timestamps stay well inside
 * the cloud's window for a run of seconds): the load tool shares this machine with the cloud, and
 * signing during the run cost it ~250 µs of CPU per request (5× what the bare case costs it), CPU
 * the cloud then did not get. A device signs on its own CPU. Past these, requests are signed as sent.
 */
function presign(privateKey: KeyObject, uuid: string): DeviceSignatureHeaders[] {
  const n = Math.min(60_000, Math.ceil((WARMUP_S + DURATION_S) * 4000));
  const t0 = Date.now();
  const out = Array.from({ length: n }, () => signDeviceRequest(privateKey, uuid));
  err(`  signed ${n} requests ahead in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return out;
}

async function ingest(dir: string): Promise<string[]> {
  const blob = Buffer.concat([Buffer.from('FFCE'), randomBytes(64 * 1024 - 4)]);
  const etag = 'e'.repeat(64);
  const bare = await startBareIngest();
  let bareFigures;
  try {
    bareFigures = await measure('bare node:http, reads and drops 64 KB bodies', {
      url: bare.url,
      requests: [{ method: 'POST', path: '/devices/bench-device-0001/backup', headers: { 'content-type': 'application/octet-stream', etag }, body: blob }],
    }, bare.child.pid);
  } finally {
    await stop(bare.child);
  }
  const cases = [];
  const profiles: string[] = [];
  for (const writer of WRITERS) {
    const profDir = join(dir, `prof-ingest-${writer}`);
    const cloud = await startCloud({ DATABASE_URL: sqliteUrl(join(dir, `ingest-${writer}.sqlite`), writer) }, profileArgs(profDir));
    let cloudFigures;
    try {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      await admin(cloud.url, 'PUT', '/admin/devices/bench-device-0001', { public_key: publicKey.export({ type: 'spki', format: 'pem' }).toString() });
      const signed = presign(privateKey, 'bench-device-0001');
      cloudFigures = await measure(`cloud signed 64 KB upload, SQLite ${writer === 'worker' ? 'writer thread' : 'writes inline'}`, {
        url: cloud.url,
        requests: [
          {
            method: 'POST',
            path: '/devices/bench-device-0001/backup',
            setupRequest: (req) => ({ ...req, headers: { ...(signed.pop() ?? signDeviceRequest(privateKey, 'bench-device-0001')), 'content-type': 'application/octet-stream', etag }, body: blob }),
          },
        ],
      }, cloud.child.pid);
    } finally {
      await stop(cloud.child);
    }
    cases.push(cloudFigures);
    profiles.push(...profileLines(profDir, `the cloud during the ingest (SQLite ${writer === 'worker' ? 'writer thread' : 'writes inline'})`));
  }
  const lines = [
    '-- backup ingest (64 KB bodies, autocannon, same connections and duration)',
    `case                                               req/s   p50 ms   p99 ms   failed   server CPU µs/req   bench CPU µs/req   machine busy`,
    ...[bareFigures, ...cases].map(
      (f) =>
        `${f.name.padEnd(48)} ${f.rps.toFixed(0).padStart(7)} ${f.p50.toFixed(1).padStart(8)} ${f.p99.toFixed(1).padStart(8)} ${String(f.bad).padStart(8)} ${f.cpuUsPerRequest.toFixed(0).padStart(19)} ${f.benchCpuUsPerRequest.toFixed(0).padStart(18)} ${(f.machineBusy * 100).toFixed(0).padStart(12)} %`,
    ),
    ...profiles,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  // The first case is the configuration under test (--sqlite-writer); with `both`, the others' ratios follow.
  return cases.map((c, i) => (i === 0 ? `ingest ratio to bare: ${(c.rps / bareFigures.rps).toFixed(2)}` : `ingest ratio to bare (${c.name}): ${(c.rps / bareFigures.rps).toFixed(2)}`));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-'));
  const children: ChildProcess[] = [];
  const summary: string[] = [];
  let pgServer: PostgresServer | undefined;
  try {
    if (!ONLY || ONLY.has('sqlite')) {
      const one = await startCloud({ DATABASE_URL: sqliteUrl(join(dir, 'storm.sqlite')) }, profileArgs(join(dir, 'prof-sqlite')));
      children.push(one.child);
      await seedReleases(one.url);
      summary.push(await storm([one.url], 'sqlite'));
      await stop(one.child);
      process.stdout.write(profileLines(join(dir, 'prof-sqlite'), 'the cloud during the sqlite storm (enrollment included)').join('\n') + '\n');
    }
    if (!ONLY || ONLY.has('postgres')) {
      err('starting PostgreSQL…');
      pgServer = await startPostgres();
      const client = new pg.Client({ connectionString: pgServer.url });
      await client.connect();
      await client.query('CREATE DATABASE fleet_bench');
      await client.end();
      const dbUrl = pgServer.url.replace(/\/postgres$/, '/fleet_bench');
      const a = await startCloud({ DATABASE_URL: dbUrl }, profileArgs(join(dir, 'prof-postgres')));
      children.push(a.child);
      const b = await startCloud({ DATABASE_URL: dbUrl }, profileArgs(join(dir, 'prof-postgres')));
      children.push(b.child);
      await seedReleases(a.url);
      // A deployment during the storm: written through one instance, picked up by both from the store.
      // The admin calls share this process with the simulator and the cloud with the storm: under
      // overload they may be refused (408, 503); retried a few times, and a failure is reported, not fatal.
      const deploy = async () => {
        await new Promise((r) => setTimeout(r, 2000));
        for (let attempt = 1; ; attempt++) {
          try {
            await admin(b.url, 'PATCH', '/appconfig/svc-func-backup', { logging: 'WARNING' });
            await admin(b.url, 'POST', '/appconfig/svc-func-backup/deploy');
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
      summary.push(await storm([a.url, b.url], 'postgres', deploy));
      await stop(a.child);
      await stop(b.child);
      process.stdout.write(profileLines(join(dir, 'prof-postgres'), 'a cloud instance during the postgres storm (enrollment included)').join('\n') + '\n');
    }
    if (!ONLY || ONLY.has('ingest')) summary.push(...(await ingest(dir)));
  } finally {
    for (const c of children) await stop(c);
    pgServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write('\n' + summary.join('\n') + '\n');
}

await main();
