// The fleet simulator (docs/fleet-scale.md): N simulated devices, each with its own P-256 identity
// enrolled through the admin API, doing what a booting device does: an OTA check, a signed backup
// push of its own size, then a push of the same backup with If-None-Match (304: nothing changed);
// with its own clock skew, a fresh signature per attempt, and retries as a real device does them: it
// never gives up on 503, 408, 5xx or a network error, but backs off exponentially with jitter up to a
// long cap, never sooner than Retry-After; only a run deadline (so that a bench always ends) stops it.
// Arrival: all at once, or spread over a window. With `health`, each device also sends a boot report
// and a heartbeat (docs/device-health.md), and without `backups` it pushes none. At the end: figures
// per step, errors by kind, and a check that every device's stored backup is the one it sent, and that
// every device's reports are stored.
// Not XS boards: light enough for 10,000 in one process (a blob is regenerated from the device's
// seed when needed, never kept).
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { BodyPool } from '../../cloud/body-pool.ts';
import { cloudEndpoint, CloudUnreachableError, unreachableMessage } from '../client.ts';
import { signDeviceRequest } from '../device-signer.ts';
import { SIMULATED_SEQS, simulatedReports } from './health.ts';

export type Step = 'ota' | 'push' | 'push304' | 'boot' | 'heartbeat';
/** A booting device's steps: its update check, its backup pushed, then pushed again unchanged (304)… */
export const STEPS: readonly Step[] = ['ota', 'push', 'push304'];
/** …and with `health`, its boot report and its heartbeat. */
export const HEALTH_STEPS: readonly Step[] = ['boot', 'heartbeat'];

export interface SimTrack {
  cls: string;
  productHex: string;
  application: string;
  currentVersion: string;
}

export interface SimOptions {
  /** Cloud base URLs; requests go round-robin over them (a small load balancer in the client). */
  urls: string[];
  /** A super-user token for the enrollment (admin API). */
  adminToken: string;
  devices: number;
  /** Backup size of most devices (bytes, FFCE blob included); default 64 KiB. */
  sizeBytes?: number;
  /** Every `bigEvery`-th device pushes `bigSizeBytes` instead (default every 50th, 512 KiB). 0: none. */
  bigEvery?: number;
  bigSizeBytes?: number;
  /** 0: every device boots at once; otherwise arrivals spread evenly at random over this window. */
  spreadMs?: number;
  /** Each device's clock is off by up to this much, either way (default 60 s; the cloud accepts 300 s). */
  maxSkewMs?: number;
  /**
   * Attempts per step before the device gives up (default: unlimited, as a real device: it retries
   * until the run's deadline). A test may bound it.
   */
  maxAttempts?: number;
  /** Exponential back-off: the first wait is up to this (full jitter), doubling per attempt ... */
  backoffBaseMs?: number;
  /** ... up to this cap (default 30 s). */
  backoffMaxMs?: number;
  /**
   * The whole storm's deadline, from its start (default 15 min): a device whose next retry would
   * start past it gives up (counted as an error of the kind it last got). Keeps a bench finite.
   */
  deadlineMs?: number;
  /** Per-attempt time-out (default 60 s). */
  requestTimeoutMs?: number;
  /** Connections open at once per cloud URL (default: one per device, at most 4096). */
  connections?: number;
  track?: SimTrack;
  /** Each device pushes its backup, then pushes it again unchanged (default true). */
  backups?: boolean;
  /** Each device sends a boot report and a heartbeat, signed (default false; docs/device-health.md). */
  health?: boolean;
  /** Device UUID prefix (default `sim-<random>-`): a run never collides with an earlier one. */
  uuidPrefix?: string;
  /** Seed of the blobs' contents. */
  seed?: string;
  /** Called about once a second while the storm runs. */
  onProgress?: (p: SimProgress) => void;
  /** Called when the last device is done, before the verification (a bench reads its counters there). */
  onStormDone?: () => void;
  /** Concurrency of the enrollment (default 32). */
  enrollConcurrency?: number;
}

export interface SimProgress {
  elapsedMs: number;
  devicesDone: number;
  devices: number;
  requests: number;
  retries: number;
  failures: number;
}

export interface StepFigures {
  step: Step;
  requests: number;
  /** Attempts that were retried (503, 408, 5xx, network errors, time-outs). */
  retries: number;
  /** Steps that failed for good after their attempts. */
  failures: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface SimResult {
  devices: number;
  enrollSeconds: number;
  /** From the first arrival to the last device done. */
  stormSeconds: number;
  requests: number;
  requestsPerSecond: number;
  steps: StepFigures[];
  /** Final failures by kind (`<step> <status> <code>` or `<step> net <code>`). */
  errors: Record<string, number>;
  errorCount: number;
  /** Retried attempts by kind. */
  retried: Record<string, number>;
  /** Steps abandoned because the run's deadline came (included in errorCount). */
  pastDeadline: number;
  /** The longest Retry-After a device was given, seconds (0: none). */
  maxRetryAfterSeconds: number;
  /** Verification: devices whose backup is missing or not the one they sent. */
  lost: number;
  /** Of those, backups that are another device's. */
  mixed: number;
  /** Devices whose backup was read back and is exactly what they sent. */
  intact: number;
  /** With `health`: devices whose two reports are both stored, and those missing one. */
  health?: { stored: number; lost: number };
  verifySeconds: number;
  /** Ended early by stop(): not verified. */
  stopped?: boolean;
}

interface Device {
  index: number;
  uuid: string;
  key: KeyObject;
  publicKeyPem: string;
  size: number;
  skewMs: number;
  /** SHA-256 of its blob (hex), computed at enrollment: its ETag, and what the verification expects. */
  blobSha: string;
  /** The same, once pushed. */
  sentSha: string | undefined;
  /** The cloud has it (removeDevices takes these away again). */
  enrolled: boolean;
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

class NetError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

const DEFAULT_TRACK: SimTrack = { cls: 'ctl-s3', productHex: '0x00c0ffee', application: 'ctl-s3', currentVersion: '2026.01.01' };

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * The device's blob written into `into`: the FFCE magic, then the SHA-256 of (seed, index) repeated:
 * distinct per device, reproducible, and made in place (no allocation, no cipher): the simulator
 * shares the machine with the cloud and takes its blobs from a pool (docs/fleet-scale.md counts its CPU).
 */
export function writeDeviceBlob(into: Buffer, seed: string, index: number): Buffer {
  into.write('FFCE', 0, 'latin1');
  if (into.length > 4) into.fill(createHash('sha256').update(`${seed}/${index}`).digest(), 4);
  return into;
}

/** The device's blob of `size` bytes, in a new buffer. */
export function deviceBlob(seed: string, index: number, size: number): Buffer {
  return writeDeviceBlob(Buffer.allocUnsafe(size), seed, index);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A sleep that a stop() ends early. */
const sleepUnless = (ms: number, stop: AbortSignal) =>
  new Promise<void>((r) => {
    if (stop.aborted) return r();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stop.removeEventListener('abort', done);
      r();
    }
    stop.addEventListener('abort', done, { once: true });
  });

export class FleetSimulator {
  private readonly o: Required<Omit<SimOptions, 'onProgress' | 'onStormDone' | 'connections'>> & {
    connections: number;
    onProgress?: SimOptions['onProgress'];
    onStormDone?: SimOptions['onStormDone'];
  };
  private readonly agents: Agent[];
  /** Blobs being sent, reused once their request is done (at most one per connection in use). */
  private readonly blobs: BodyPool;
  /**
   * Requests under way, at most one per connection: a device waits for one before it signs and makes
   * its blob, as a device with one connection does. (Made first and queued in the agent, 100,000
   * devices held 6 GB of blobs, and signatures that aged while they waited.)
   */
  private readonly inFlight: { free: number; waiting: (() => void)[]; head: number };
  private rr = 0;
  private devices: Device[] = [];
  /** The steps of this run's devices. */
  private readonly steps: readonly Step[];
  private readonly latencies = new Map<Step, number[]>([...STEPS, ...HEALTH_STEPS].map((s) => [s, []]));
  private readonly stepCounts = new Map<Step, { requests: number; retries: number; failures: number }>([...STEPS, ...HEALTH_STEPS].map((s) => [s, { requests: 0, retries: 0, failures: 0 }]));
  private readonly errors: Record<string, number> = {};
  private readonly retried: Record<string, number> = {};
  private requests = 0;
  private retries = 0;
  private pastDeadline = 0;
  private maxRetryAfterSeconds = 0;
  /** performance.now() past which no retry starts (set by run()). */
  private deadlineAt = Infinity;
  private failures = 0;
  private done = 0;
  private readonly stopping = new AbortController();
  private enrollSeconds = 0;

  constructor(opts: SimOptions) {
    if (opts.urls.length === 0) throw new Error('at least one cloud URL');
    this.o = {
      sizeBytes: 64 * 1024,
      bigEvery: 50,
      bigSizeBytes: 512 * 1024,
      spreadMs: 0,
      maxSkewMs: 60_000,
      maxAttempts: Infinity,
      backoffBaseMs: 250,
      backoffMaxMs: 30_000,
      deadlineMs: 15 * 60_000,
      requestTimeoutMs: 60_000,
      track: DEFAULT_TRACK,
      uuidPrefix: `sim-${Math.random().toString(36).slice(2, 8)}-`,
      seed: 'fleet-sim',
      enrollConcurrency: 32,
      backups: true,
      health: false,
      ...opts,
      connections: opts.connections ?? Math.min(opts.devices, 4096),
    };
    this.agents = opts.urls.map(() => new Agent({ keepAlive: true, maxSockets: this.o.connections, maxFreeSockets: this.o.connections }));
    this.blobs = new BodyPool(64 * 1024 * 1024);
    this.inFlight = { free: this.o.connections * opts.urls.length, waiting: [], head: 0 };
    this.steps = [STEPS[0]!, ...(this.o.backups ? STEPS.slice(1) : []), ...(this.o.health ? HEALTH_STEPS : [])];
  }

  /** What the devices' UUIDs start with (sim-<random>- unless given). */
  get uuidPrefix(): string {
    return this.o.uuidPrefix;
  }

  /** Creates the devices' identities and enrolls them through the admin API. */
  async enroll(): Promise<void> {
    const t0 = performance.now();
    const o = this.o;
    this.devices = Array.from({ length: o.devices }, (_, index) => {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      return {
        index,
        uuid: `${o.uuidPrefix}${String(index).padStart(5, '0')}`,
        key: privateKey,
        publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        size: o.bigEvery > 0 && index % o.bigEvery === o.bigEvery - 1 ? o.bigSizeBytes : o.sizeBytes,
        skewMs: Math.round((Math.random() * 2 - 1) * o.maxSkewMs),
        blobSha: '',
        sentSha: undefined,
        enrolled: false,
      };
    });
    // The blob's hash is the device's ETag; taken now, so that the storm only regenerates the blob
    // (cheap AES-CTR) for each attempt and no device holds one while it waits.
    for (const d of this.devices) d.blobSha = sha256(deviceBlob(o.seed, d.index, d.size));
    let next = 0;
    const worker = async () => {
      while (next < this.devices.length && !this.stopping.signal.aborted) {
        const d = this.devices[next++]!;
        const body = Buffer.from(JSON.stringify({ public_key: d.publicKeyPem }));
        for (let attempt = 1; ; attempt++) {
          let r: Reply;
          try {
            r = await this.send('PUT', `/admin/devices/${d.uuid}`, { authorization: `Bearer ${o.adminToken}`, 'content-type': 'application/json' }, body);
          } catch (err) {
            // Before any device is enrolled, a cloud that does not answer is unreachable (fleet exit 3).
            const code = err instanceof NetError ? err.code : String(err);
            if (attempt >= 5 || ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(code)) {
              throw new CloudUnreachableError(unreachableMessage(this.o.urls.join(', '), code));
            }
            await sleep(500 * attempt);
            continue;
          }
          if ((r.status === 503 || r.status === 408) && attempt < 10) {
            await sleep(retryAfterMs(r) || 500 * attempt);
            continue;
          }
          if (r.status !== 201 && r.status !== 200) throw new Error(`enrolling ${d.uuid}: ${r.status} ${r.body.toString().slice(0, 200)}`);
          d.publicKeyPem = ''; // enrolled: 10,000 PEMs need not stay in the heap the storm's GC marks
          d.enrolled = true;
          break;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.enrollConcurrency, this.devices.length) }, worker));
    this.enrollSeconds = (performance.now() - t0) / 1000;
  }

  /** The boot storm, then the verification. */
  async run(): Promise<SimResult> {
    if (this.devices.length === 0) await this.enroll();
    const o = this.o;
    const t0 = performance.now();
    this.deadlineAt = t0 + o.deadlineMs;
    const progress = o.onProgress
      ? setInterval(
          () =>
            o.onProgress!({
              elapsedMs: performance.now() - t0,
              devicesDone: this.done,
              devices: this.devices.length,
              requests: this.requests,
              retries: this.retries,
              failures: this.failures,
            }),
          1000,
        )
      : undefined;
    try {
      await Promise.all(
        this.devices.map(async (d) => {
          if (o.spreadMs > 0) await sleepUnless(Math.random() * o.spreadMs, this.stopping.signal);
          if (this.stopping.signal.aborted) return;
          await this.boot(d);
          this.done++;
        }),
      );
    } finally {
      if (progress) clearInterval(progress);
    }
    const stormSeconds = (performance.now() - t0) / 1000;
    o.onStormDone?.();
    const v0 = performance.now();
    // Stopped: the devices that had not booted have nothing to verify; the run is not a verdict.
    const stopped = this.stopping.signal.aborted;
    const verdict = stopped || !o.backups ? { lost: 0, mixed: 0, intact: 0 } : await this.verify();
    const health = o.health && !stopped ? { health: await this.verifyHealth() } : {};
    const verifySeconds = (performance.now() - v0) / 1000;
    const steps = this.steps.map((step): StepFigures => {
      const lat = this.latencies.get(step)!.sort((a, b) => a - b);
      return { step, ...this.stepCounts.get(step)!, p50Ms: percentile(lat, 50), p99Ms: percentile(lat, 99), maxMs: lat.at(-1) ?? 0 };
    });
    return {
      devices: this.devices.length,
      enrollSeconds: this.enrollSeconds,
      stormSeconds,
      requests: this.requests,
      requestsPerSecond: this.requests / stormSeconds,
      steps,
      errors: this.errors,
      errorCount: this.failures,
      retried: this.retried,
      pastDeadline: this.pastDeadline,
      maxRetryAfterSeconds: this.maxRetryAfterSeconds,
      ...verdict,
      ...health,
      verifySeconds,
      ...(this.stopping.signal.aborted ? { stopped: true } : {}),
    };
  }

  /** Ends the storm early (SIGINT): no new step or retry starts; the steps under way finish. */
  stop(): void {
    this.deadlineAt = -Infinity;
    this.stopping.abort();
  }

  /**
   * Takes away what the run left in the cloud, so that a simulation against a real cloud leaves its
   * inventory as it found it: each enrolled device's backup (a signed DELETE, as the device itself
   * would) and then the device (the admin API; removing a device keeps its backup). 503, 408 and
   * network errors are retried a few times; what still failed is listed.
   */
  async removeDevices(): Promise<{ removed: number; failed: string[] }> {
    const enrolled = this.devices.filter((d) => d.enrolled);
    const failed: string[] = [];
    let removed = 0;
    let next = 0;
    const worker = async () => {
      while (next < enrolled.length) {
        const d = enrolled[next++]!;
        const backup = await this.sendRetrying('DELETE', `/devices/${d.uuid}/backup`, () => signDeviceRequest(d.key, d.uuid, { nowMs: Date.now() + d.skewMs }) as unknown as Record<string, string>);
        const device = await this.sendRetrying('DELETE', `/admin/devices/${d.uuid}`, () => ({ authorization: `Bearer ${this.o.adminToken}` }));
        // 404: already gone (no backup pushed, or removed by someone else).
        const bad = [backup, device].find((status) => status !== 204 && status !== 404);
        if (bad === undefined) {
          d.enrolled = false;
          removed++;
        } else failed.push(`${d.uuid} (${bad})`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.enrollConcurrency, enrolled.length) }, worker));
    return { removed, failed };
  }

  /** A request retried on 503, 408 and network errors (10 attempts): its last status, or 'net <code>'. */
  private async sendRetrying(method: string, path: string, headers: () => Record<string, string>): Promise<number | string> {
    let last: number | string = 'no attempt';
    for (let attempt = 1; attempt <= 10; attempt++) {
      try {
        const r = await this.send(method, path, headers());
        last = r.status;
        if (r.status !== 503 && r.status !== 408) return r.status;
        await sleep(retryDelayMs(attempt, retryAfterMs(r), this.o.backoffBaseMs, 5_000));
      } catch (err) {
        last = `net ${err instanceof NetError ? err.code : String(err)}`;
        await sleep(retryDelayMs(attempt, 0, this.o.backoffBaseMs, 5_000));
      }
    }
    return last;
  }

  /** What a booting device does. A step that fails for good ends the device's boot (counted). */
  private async boot(d: Device): Promise<void> {
    const t = o(this.o.track);
    const ota = await this.step('ota', d, () => ({ method: 'GET', path: t, headers: {} }), (r) => r.status === 200 || r.status === 404);
    if (!ota) return;
    if (this.o.backups && !(await this.pushBackup(d))) return;
    if (this.o.health) await this.reportHealth(d);
  }

  /** The device's requests are signed anew for each attempt, on its own clock. */
  private signed(d: Device): Record<string, string> {
    return signDeviceRequest(d.key, d.uuid, { nowMs: Date.now() + d.skewMs }) as unknown as Record<string, string>;
  }

  /** Its boot report, then its heartbeat (docs/device-health.md): 201, or 200 when sent again after a lost answer. */
  private async reportHealth(d: Device): Promise<void> {
    const reports = simulatedReports(this.o.track.currentVersion, () => Date.now() + d.skewMs);
    for (const [step, report] of [['boot', reports.boot], ['heartbeat', reports.heartbeat]] as const) {
      const make = () => ({ method: 'POST', path: `/devices/${d.uuid}/health`, headers: { ...this.signed(d), 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(report())) });
      if (!(await this.step(step, d, make, (r) => r.status === 201 || r.status === 200))) return;
    }
  }

  /** Its backup pushed, then pushed again unchanged; false when the push failed for good. */
  private async pushBackup(d: Device): Promise<boolean> {
    // Made for each attempt in a pooled buffer, given back when its request is done: 10,000 waiting
    // devices hold no 64 KB each, and the simulator makes no 64 KB of garbage per attempt.
    const blob = () => writeDeviceBlob(this.blobs.take(d.size), this.o.seed, d.index);
    const sha = d.blobSha;
    const etag = sha; // stands for the plaintext's SHA-256: the cloud only keeps it
    const backupPath = `/devices/${d.uuid}/backup`;
    const signed = () => this.signed(d);
    const pushed = await this.step(
      'push',
      d,
      () => ({ method: 'POST', path: backupPath, headers: { ...signed(), 'content-type': 'application/octet-stream', etag: `"${etag}"` }, body: blob() }),
      (r) => r.status === 200,
    );
    if (!pushed) return false;
    d.sentSha = sha;
    return this.step(
      'push304',
      d,
      () => ({
        method: 'POST',
        path: backupPath,
        headers: { ...signed(), 'content-type': 'application/octet-stream', etag: `"${etag}"`, 'if-none-match': `"${etag}"` },
        body: blob(),
      }),
      (r) => r.status === 304,
    );
  }

  /**
   * One step with retries, as a device does it: 503, 408, 429, 5xx and network failures are retried
   * after back-off (see `retryDelayMs`), without limit but the run's deadline (or `maxAttempts`).
   */
  private async step(
    step: Step,
    d: Device,
    make: () => { method: string; path: string; headers: Record<string, string>; body?: Buffer },
    ok: (r: Reply) => boolean,
  ): Promise<boolean> {
    const counts = this.stepCounts.get(step)!;
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      if (this.stopping.signal.aborted) return false;
      await this.connection();
      let req: ReturnType<typeof make> | undefined = make();
      let kind: string;
      let raMs = 0;
      let retryable: boolean;
      this.requests++;
      counts.requests++;
      try {
        const r = await this.send(req.method, req.path, req.headers, req.body).finally(() => this.connectionDone());
        req = undefined; // the body is not kept while the device waits
        if (ok(r)) {
          this.latencies.get(step)!.push(performance.now() - started);
          return true;
        }
        let code = '';
        try {
          const e = JSON.parse(r.body.toString()) as { error?: string; details?: { gate?: unknown; reason?: unknown } };
          code = e.error ?? '';
          // A saturated gate says which gate and why (cloud/admission.ts): kept in the kind.
          if (typeof e.details?.gate === 'string') code += ` ${e.details.gate}/${String(e.details.reason)}`;
        } catch {
          code = '';
        }
        kind = `${step} ${r.status}${code ? ' ' + code : ''}`;
        retryable = r.status === 503 || r.status === 408 || r.status >= 500 || r.status === 429;
        raMs = retryAfterMs(r);
        if (raMs / 1000 > this.maxRetryAfterSeconds) this.maxRetryAfterSeconds = raMs / 1000;
      } catch (err) {
        kind = `${step} net ${err instanceof NetError ? err.code : err instanceof Error ? err.message : String(err)}`;
        retryable = true;
      }
      const delay = retryable ? retryDelayMs(attempt, raMs, this.o.backoffBaseMs, this.o.backoffMaxMs) : 0;
      const pastDeadline = retryable && performance.now() + delay > this.deadlineAt;
      if (!retryable || attempt >= this.o.maxAttempts || pastDeadline) {
        this.errors[kind] = (this.errors[kind] ?? 0) + 1;
        this.failures++;
        counts.failures++;
        if (pastDeadline) this.pastDeadline++;
        return false;
      }
      this.retried[kind] = (this.retried[kind] ?? 0) + 1;
      this.retries++;
      counts.retries++;
      await sleep(delay);
    }
  }

  /** Resolves when a connection is free for one more request. */
  private connection(): Promise<void> {
    if (this.inFlight.free > 0) {
      this.inFlight.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.inFlight.waiting.push(resolve));
  }

  private connectionDone(): void {
    const q = this.inFlight;
    const next = q.waiting[q.head];
    if (!next) {
      q.free++;
      return;
    }
    q.waiting[q.head++] = undefined as unknown as () => void;
    // A queue of 100,000 devices: taken from the head, compacted now and then (shift() is O(n)).
    if (q.head > 4096 && q.head * 2 > q.waiting.length) {
      q.waiting = q.waiting.slice(q.head);
      q.head = 0;
    }
    next();
  }

  /** Closes the kept-alive connections. */
  close(): void {
    for (const a of this.agents) a.destroy();
  }

  /** The enrolled devices (uuid and index), e.g. to tamper with in a test. */
  deviceIds(): { uuid: string; index: number }[] {
    return this.devices.map((d) => ({ uuid: d.uuid, index: d.index }));
  }

  /** Every device reads its backup back (signed GET): intact, lost (missing or not its own), mixed (another device's). */
  async verify(): Promise<{ lost: number; mixed: number; intact: number }> {
    const bySha = new Map<string, number>();
    for (const d of this.devices) if (d.sentSha) bySha.set(d.sentSha, d.index);
    let lost = 0;
    let mixed = 0;
    let intact = 0;
    await this.eachDevice(async (d) => {
      const expected = d.sentSha ?? d.blobSha;
      const r = await this.readBack(`/devices/${d.uuid}/backup`, () => this.signed(d));
      const got = r?.status === 200 ? sha256(r.body) : undefined;
      if (got === expected) intact++;
      else {
        lost++;
        const owner = got === undefined ? undefined : bySha.get(got);
        if (owner !== undefined && owner !== d.index) mixed++;
      }
    });
    return { lost, mixed, intact };
  }

  /** Every device's reports read back through the admin API: stored (both), or lost (one missing). */
  async verifyHealth(): Promise<{ stored: number; lost: number }> {
    let stored = 0;
    await this.eachDevice(async (d) => {
      const r = await this.readBack(`/admin/devices/${d.uuid}/health?limit=${SIMULATED_SEQS.length}&days=1`, () => ({ authorization: `Bearer ${this.o.adminToken}` }));
      const seqs = r?.status === 200 ? (JSON.parse(r.body.toString()) as { reports: { report: { seq: number } }[] }).reports.map((x) => x.report.seq) : [];
      if (seqs.join() === SIMULATED_SEQS.join()) stored++;
    });
    return { stored, lost: this.devices.length - stored };
  }

  /** `fn` for every device, 64 at a time. */
  private async eachDevice(fn: (d: Device) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < this.devices.length) await fn(this.devices[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(64, this.devices.length) }, worker));
  }

  /** A GET of the verification, retried as a device would (bounded in attempts: a verification must end); undefined when it never answered. */
  private async readBack(path: string, headers: () => Record<string, string>): Promise<Reply | undefined> {
    for (let attempt = 1; attempt <= 30; attempt++) {
      try {
        const r = await this.send('GET', path, headers());
        if (r.status !== 503 && r.status !== 408) return r;
        await sleep(retryDelayMs(attempt, retryAfterMs(r), this.o.backoffBaseMs, 5_000));
      } catch {
        await sleep(retryDelayMs(attempt, 0, this.o.backoffBaseMs, 5_000));
      }
    }
    return undefined;
  }

  private send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Reply> {
    const i = this.rr++ % this.o.urls.length;
    const url = cloudEndpoint(this.o.urls[i]!, path);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        url,
        { method, agent: this.agents[i], headers: body ? { ...headers, 'content-length': String(body.length) } : headers, timeout: this.o.requestTimeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', (e: NodeJS.ErrnoException) => reject(new NetError(e.code ?? 'response_error')));
        },
      );
      req.on('timeout', () => req.destroy(new NetError('timeout')));
      req.on('error', (e: NodeJS.ErrnoException) => reject(e instanceof NetError ? e : new NetError(e.code ?? e.message)));
      // Done with the body once the request is closed (sent, or its connection gone): back to the pool.
      if (body) req.once('close', () => this.blobs.give(body));
      req.end(body);
    });
  }
}

/** Retry-After (delta seconds) of an answer, in ms; 0 when absent or not a number. */
export function retryAfterMs(r: { headers: IncomingHttpHeaders }): number {
  const ra = Number(r.headers['retry-after']);
  return Number.isFinite(ra) && ra > 0 ? ra * 1000 : 0;
}

/**
 * How long a device waits before attempt `attempt + 1`. Without Retry-After: exponential back-off
 * with full jitter, uniform in [0, min(cap, base * 2^(attempt-1))). With Retry-After: never sooner
 * than it, plus a jitter of up to a second (growing with the attempt as above, never over 1 s) so
 * that devices told the same second do not all come back in the same millisecond.
 */
export function retryDelayMs(attempt: number, retryAfter: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const backoff = Math.min(capMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  if (retryAfter > 0) return retryAfter + random() * Math.min(backoff, 1000);
  return random() * backoff;
}

function o(t: SimTrack): string {
  return `/ota/${t.cls}/${t.productHex}/${t.application}?current_version=${t.currentVersion}`;
}

/** The lines a run prints: figures per step, errors by kind, the verification. */
export function formatResult(r: SimResult): string[] {
  const lines = [
    `devices=${r.devices} enroll_seconds=${r.enrollSeconds.toFixed(1)} storm_seconds=${r.stormSeconds.toFixed(1)} requests=${r.requests} requests_per_second=${r.requestsPerSecond.toFixed(0)}`,
    'step       requests  retries  failures   p50 ms   p99 ms   max ms',
    ...r.steps.map(
      (s) =>
        `${s.step.padEnd(9)} ${String(s.requests).padStart(9)} ${String(s.retries).padStart(8)} ${String(s.failures).padStart(9)} ${s.p50Ms.toFixed(1).padStart(8)} ${s.p99Ms.toFixed(1).padStart(8)} ${s.maxMs.toFixed(1).padStart(8)}`,
    ),
    `errors: ${r.errorCount}${Object.keys(r.errors).length ? ' (' + Object.entries(r.errors).map(([k, n]) => `${k}: ${n}`).join(', ') + ')' : ''}`,
    `retried: ${Object.keys(r.retried).length ? Object.entries(r.retried).map(([k, n]) => `${k}: ${n}`).join(', ') : 'none'}` +
      (r.maxRetryAfterSeconds > 0 ? ` (longest Retry-After ${r.maxRetryAfterSeconds} s)` : ''),
    ...(r.pastDeadline > 0 ? [`gave up at the run's deadline: ${r.pastDeadline} step(s)`] : []),
    ...(r.steps.some((s) => s.step === 'push') ? [`backups: intact=${r.intact} lost=${r.lost} mixed=${r.mixed} (verified in ${r.verifySeconds.toFixed(1)} s)`] : []),
    ...(r.health ? [`health reports: devices=${r.devices} stored=${r.health.stored} lost=${r.health.lost}`] : []),
  ];
  return lines;
}
