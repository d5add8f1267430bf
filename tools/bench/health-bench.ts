// npm run bench:health (docs/device-health.md, "Figures"): what device health costs, measured on
// virtual boards running the firmware the Moddable SDK builds for the host, against the real cloud
// (SQLite, on loopback):
//   1. bytes: a board's boot report and heartbeat as they cross the wire (an HTTP proxy between the
//      board and the cloud counts the request line, headers and body), and per device per day at the
//      defaults (a heartbeat every 3,600 s: 24 a day; a day without a reboot sends no boot report);
//   2. crash to visible: crashes injected on debug boards (`fault throw`, `fault memory`, `fault hang`
//      in turn), several boards at once, each at most 5 faults a minute (a virtual board stays down
//      after more than 5 resets within a minute): the time from typing the fault to its boot report
//      in the admin API's timeline (`GET /admin/devices/{uuid}/health`, what `fleet device health`
//      prints), polled every 100 ms;
//   3. heap: what the board's XS heaps hold live while it makes, keeps and sends a heartbeat (sampled
//      every 5 ms with a collection first, tools/bench/heap-probe.ts), against an idle window of the
//      same length;
//   4. ingest: `bench:fleet --only health` run as it is (tools/bench/fleet-bench.ts, part 5), its line
//      passed through.
// Ends with the lines of issue 34:
//   health bytes boot_report=<n> heartbeat=<n> per_device_day=<n>
//   health crash_to_visible crashes=<n> p50_seconds=<x> p99_seconds=<x>
//   health ingest devices=10000 lost=<n> ratio_to_fair_limit=<r>
//   health heap reporting chunk_bytes=<n> slots=<n> idle_chunk_bytes=<n> idle_slots=<n>
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { loadConfig } from '../../cloud/config.ts';
import { startCloudServer, type RunningCloud } from '../../cloud/server.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { controllerIdentity } from './firmware-bench-lib.ts';
import { measure } from './heap-probe.ts';
import { wholeOption } from './args.ts';

const { values: args } = parseArgs({
  options: {
    crashes: { type: 'string', default: '60' },
    boards: { type: 'string', default: '6' },
    devices: { type: 'string', default: '10000' },
    'no-ingest': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  process.stdout.write('usage: npm run bench:health -- [--crashes 60] [--boards 6] [--devices 10000] [--no-ingest]\n');
  process.exit(0);
}
const CRASHES = wholeOption('crashes', args.crashes, 1);
const BOARDS = wholeOption('boards', args.boards, 1);
const DEVICES = wholeOption('devices', args.devices, 1);

/** A virtual board resets more than this many times within a minute: it stays down (firmware/virtual-esp32/boot-loop.ts). */
const FAULTS_PER_MINUTE = 5;
const MINUTE_MS = 60_000;
/** The default heartbeat interval (firmware/src/core/health/ring.ts), and so heartbeats a day. */
const HEARTBEATS_A_DAY = 86_400 / 3_600;
const VISIBLE_WAIT_MS = 120_000;

const err = (line: string) => process.stderr.write(line + '\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request a board made, as it crossed the wire. */
interface WireRequest {
  uuid: string;
  kind: string;
  seq: number;
  /** The request line and headers, as the proxy received them. */
  headBytes: number;
  bodyBytes: number;
}

/** An HTTP proxy between boards and the cloud that counts each health report's bytes. */
class WireCounter {
  readonly requests: WireRequest[] = [];
  private server!: Server;
  url = '';
  constructor(private readonly target: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        void this.forward(req, body).then(
          (answer) => res.writeHead(answer.status, answer.headers).end(answer.body),
          () => res.writeHead(502).end(),
        );
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    if (req.method === 'POST' && /\/health$/.test(req.url ?? '')) {
      const head = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n` + pairs(req.rawHeaders).map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n';
      const report = JSON.parse(body.toString('utf8')) as { kind: string; seq: number };
      this.requests.push({ uuid: String(req.headers['x-device-uuid']), kind: report.kind, seq: report.seq, headBytes: Buffer.byteLength(head), bodyBytes: body.length });
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of pairs(req.rawHeaders)) if (!['host', 'connection', 'content-length', 'transfer-encoding'].includes(k.toLowerCase())) headers[k] = v;
    const res = await fetch(this.target + req.url, { method: req.method!, headers, ...(body.length ? { body } : {}) });
    const out: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) out[k] = v;
    });
    return { status: res.status, headers: out, body: Buffer.from(await res.arrayBuffer()) };
  }

  async await(uuid: string, kind: string, afterSeq: number): Promise<WireRequest> {
    for (const until = Date.now() + VISIBLE_WAIT_MS; ; await sleep(20)) {
      const found = this.requests.find((r) => r.uuid === uuid && r.kind === kind && r.seq > afterSeq);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no ${kind} report of ${uuid} after seq ${afterSeq} crossed the proxy`);
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

function pairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/** The cloud the boards report to, and a super user's view of it. */
class BenchCloud {
  private constructor(
    readonly running: RunningCloud,
    private readonly token: string,
  ) {}

  static async start(dir: string): Promise<BenchCloud> {
    const secret = createHash('sha256').update(dir).digest('hex');
    const running = await startCloudServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: join(dir, 'cloud.sqlite'), JWT_SECRET: secret }), { sink: () => undefined });
    return new BenchCloud(running, await mintToken(new TextEncoder().encode(secret), { subject: 'bench' }));
  }

  async admin(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(this.running.url + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) : undefined;
  }

  /** The device's reports newest first, as `fleet device health <uuid> --json` reads them. */
  async reports(uuid: string, limit = 10): Promise<Record<string, any>[]> {
    return ((await this.admin('GET', `/admin/devices/${uuid}/health?limit=${limit}`)) as { reports: { report: Record<string, any> }[] }).reports.map((r) => r.report);
  }

  close(): Promise<void> {
    return this.running.close();
  }
}

/** A debug controller (it has the `fault` command), enrolled with the cloud and pointed at `cloudUrl`. */
async function debugBoard(dir: string, cloud: BenchCloud, n: number, cloudUrl: string): Promise<SdkBoard> {
  const board = await startSdkBoard({
    identity: { ...controllerIdentity(n, 'hbench'), build: 'debug' },
    fuseKeyHex: (n + 0x40).toString(16).padStart(2, '0').repeat(32),
    flashDir: join(dir, `board-${n}`),
    adminPassword: 'health-bench-password',
    panel: false,
  });
  const { public_key_pem } = JSON.parse((await board.typeLine('pubkey')).slice(3)) as { public_key_pem: string };
  await cloud.admin('PUT', `/admin/devices/${board.identity.uuid}`, { public_key: public_key_pem });
  const answer = await board.typeLine(`cloud ${cloudUrl}`);
  if (!answer.startsWith('OK ')) throw new Error(`cloud ${cloudUrl}: ${answer}`);
  return board;
}

async function visible(cloud: BenchCloud, uuid: string, afterSeq: number, kind: string): Promise<Record<string, any>> {
  for (const until = Date.now() + VISIBLE_WAIT_MS; ; await sleep(100)) {
    const found = (await cloud.reports(uuid)).find((r) => r.seq > afterSeq && r.kind === kind);
    if (found) return found;
    if (Date.now() > until) throw new Error(`no ${kind} report of ${uuid} after seq ${afterSeq} in the cloud within ${VISIBLE_WAIT_MS / 1000} s`);
  }
}

const newest = async (cloud: BenchCloud, uuid: string) => (await cloud.reports(uuid, 1))[0]?.seq ?? 0;

// -- 1. bytes on the wire, and 3. the heap, on one board behind the proxy ------------------------------

async function bytesAndHeap(dir: string, cloud: BenchCloud): Promise<string[]> {
  const wire = new WireCounter(cloud.running.url);
  await wire.start();
  const board = await debugBoard(dir, cloud, 1, wire.url);
  try {
    const uuid = board.identity.uuid;
    const boot = await wire.await(uuid, 'boot', 0);
    await board.typeLine('health now');
    const beat = await wire.await(uuid, 'heartbeat', boot.seq);
    await visible(cloud, uuid, boot.seq, 'heartbeat');
    // A boot report after a crash carries its summary: the larger one a fleet sees.
    await board.typeLine('fault throw');
    const crashed = await wire.await(uuid, 'boot', beat.seq);
    await visible(cloud, uuid, beat.seq, 'boot');
    await board.settled();
    err(`bytes: boot report ${boot.bodyBytes} (after a crash ${crashed.bodyBytes}), heartbeat ${beat.bodyBytes}; with the request line and headers ${boot.headBytes + boot.bodyBytes}, ${crashed.headBytes + crashed.bodyBytes}, ${beat.headBytes + beat.bodyBytes}`);

    // The heap: a heartbeat made, kept in the ring and sent (the cloud's answer read), against as long idle.
    err('heap: 5 heartbeats, each against an idle window as long (live heap sampled every 5 ms)…');
    let last = beat.seq;
    const reporting = { chunk: 0, slots: 0, samples: 0 };
    const idle = { chunk: 0, slots: 0, samples: 0 };
    for (let i = 0; i < 5; i++) {
      let ms = 0;
      const r = await measure(
        board,
        async () => {
          const t0 = performance.now();
          await board.typeLine('health now');
          last = (await visible(cloud, uuid, last, 'heartbeat')).seq;
          // The board forgets the report once it has read the cloud's answer: wait until it has.
          for (let w = 0; w < 200 && JSON.parse((await board.typeLine('health')).slice(3)).waiting !== 0; w++) await sleep(10);
          ms = performance.now() - t0;
        },
        { sampleMs: 5 },
      );
      const q = await measure(board, () => sleep(ms), { sampleMs: 5 });
      reporting.chunk = Math.max(reporting.chunk, r.liveChunkBytes - r.before.chunkBytes);
      reporting.slots = Math.max(reporting.slots, r.liveSlots - r.before.slots);
      reporting.samples += r.samples;
      idle.chunk = Math.max(idle.chunk, q.liveChunkBytes - q.before.chunkBytes);
      idle.slots = Math.max(idle.slots, q.liveSlots - q.before.slots);
      idle.samples += q.samples;
    }
    const heapInfo = await board.heap({ collect: true });
    err(`heap: reporting +${reporting.chunk} chunk bytes, +${reporting.slots} slots over the live heap before it (${reporting.samples} samples); idle +${idle.chunk}, +${idle.slots} (${idle.samples} samples); live at rest ${heapInfo.chunkBytes} of ${heapInfo.chunkMaxBytes} chunk bytes, ${heapInfo.slots} of ${heapInfo.slotMax} slots`);
    return [
      `health bytes detail boot_report_after_crash=${crashed.bodyBytes} requests_with_headers boot_report=${boot.headBytes + boot.bodyBytes} heartbeat=${beat.headBytes + beat.bodyBytes} per_device_day=${HEARTBEATS_A_DAY * (beat.headBytes + beat.bodyBytes)}`,
      `health bytes boot_report=${boot.bodyBytes} heartbeat=${beat.bodyBytes} per_device_day=${HEARTBEATS_A_DAY * beat.bodyBytes}`,
      `health heap reporting chunk_bytes=${reporting.chunk} slots=${reporting.slots} idle_chunk_bytes=${idle.chunk} idle_slots=${idle.slots}`,
    ];
  } finally {
    await board.close();
    await wire.close();
  }
}

// -- 2. crash to visible ------------------------------------------------------------------------------

const FAULTS = ['throw', 'memory', 'hang'] as const;
const EXPECTED: Record<(typeof FAULTS)[number], string> = { throw: 'abort', memory: 'abort', hang: 'watchdog' };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function crashToVisible(dir: string, cloud: BenchCloud): Promise<string> {
  err(`crash to visible: ${BOARDS} debug boards, ${CRASHES} crashes (throw, memory, hang in turn), at most ${FAULTS_PER_MINUTE} faults a minute per board…`);
  const boards = await Promise.all(Array.from({ length: BOARDS }, (_, i) => debugBoard(dir, cloud, 10 + i, cloud.running.url)));
  const seconds: number[] = [];
  const byFault = new Map<string, number[]>(FAULTS.map((f) => [f, []]));
  let next = 0;
  try {
    await Promise.all(
      boards.map(async (board, b) => {
        const uuid = board.identity.uuid;
        await visible(cloud, uuid, 0, 'boot');
        const resetTimes: number[] = [];
        for (let k = b; ; k++) {
          if (next >= CRASHES) return;
          next++;
          // The board's own resets: no more than FAULTS_PER_MINUTE in any minute (and a second to spare),
          // counted from when each reset was over (its report seen): a watchdog resets 5 s after the fault.
          if (resetTimes.length >= FAULTS_PER_MINUTE) await sleep(Math.max(0, resetTimes[resetTimes.length - FAULTS_PER_MINUTE]! + MINUTE_MS + 1000 - Date.now()));
          const fault = FAULTS[k % FAULTS.length]!;
          const seq = await newest(cloud, uuid);
          const t0 = performance.now();
          if (fault === 'memory') board.uartReceive(new TextEncoder().encode('fault memory\n'));
          else await board.typeLine(`fault ${fault}`);
          const report = await visible(cloud, uuid, seq, 'boot');
          resetTimes.push(Date.now());
          const s = (performance.now() - t0) / 1000;
          if (report.reason !== EXPECTED[fault]) throw new Error(`fault ${fault} on ${uuid} was reported ${report.reason}`);
          seconds.push(s);
          byFault.get(fault)!.push(s);
          err(`  ${String(seconds.length).padStart(3)}/${CRASHES} ${uuid} fault ${fault.padEnd(6)} ${report.reason}${report.crash ? ` ${report.crash.kind}` : ''}: visible after ${s.toFixed(2)} s`);
          await board.settled();
        }
      }),
    );
  } finally {
    await Promise.all(boards.map((b) => b.close()));
  }
  const sorted = [...seconds].sort((a, b) => a - b);
  // The watchdog's own 5 s is in a hang's figure: the time from the fault typed, not from the reset.
  const median = (xs: number[]) => (xs.length ? percentile([...xs].sort((a, b) => a - b), 50).toFixed(2) : '-');
  err(`crash to visible by fault: ${FAULTS.map((f) => `${f} ${byFault.get(f)!.length} p50 ${median(byFault.get(f)!)} s`).join(', ')}`);
  return `health crash_to_visible crashes=${sorted.length} p50_seconds=${percentile(sorted, 50).toFixed(2)} p99_seconds=${percentile(sorted, 99).toFixed(2)}`;
}

// -- 4. ingest: the fleet bench's health part, as it is ---------------------------------------------------

function ingest(): Promise<string> {
  err(`ingest: npm run bench:fleet -- --only health --devices ${DEVICES} (its progress follows)…`);
  const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
  const script = fileURLToPath(new URL('./fleet-bench.ts', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, [script, '--only', 'health', '--devices', String(DEVICES)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => process.stderr.write(c.toString().replace(/^(?=.)/gm, '  fleet-bench: ')));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith('health ingest '));
      if (code !== 0 || !line) reject(new Error(`bench:fleet --only health exited ${code} without its line:\n${stdout}`));
      else resolve(line);
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'health-bench-'));
const t0 = performance.now();
let code = 0;
try {
  const cloud = await BenchCloud.start(dir);
  const lines: string[] = [];
  try {
    lines.push(...(await bytesAndHeap(dir, cloud)));
    lines.push(await crashToVisible(dir, cloud));
  } finally {
    await cloud.close();
  }
  if (!args['no-ingest']) lines.push(await ingest());
  err(`bench:health: ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  // The issue's three lines in its order, then the heap's.
  const order = ['health bytes detail', 'health bytes boot_report', 'health crash_to_visible', 'health ingest', 'health heap'];
  lines.sort((a, b) => order.findIndex((p) => a.startsWith(p)) - order.findIndex((p) => b.startsWith(p)));
  process.stdout.write(lines.join('\n') + '\n');
} catch (e) {
  err(`bench:health failed: ${e instanceof Error ? e.message : String(e)}`);
  code = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
