// The baselines of `npm run bench:fleet` (docs/fleet-scale.md): servers with no framework, on the same
// number of processes as the cloud's workers and sharing their port the same way (node:cluster), so
// that a ratio compares the cloud with what the same machine does with the same processes:
//   bare-ingest  reads each upload's body to its end, drops it, answers a small JSON;
//   fair-ingest  the essential work of an upload and nothing else: read the body, look the device up,
//                check the timestamp window, verify its P-256 signature over SHA-256(nonce ‖ timestamp)
//                (on libuv's pool, as the cloud does), insert the nonce, write the row, on the same
//                store (cloud/store/sqlite.ts or postgres.ts, the same DATABASE_URL); --hash-body also
//                takes the body's SHA-256 (the cloud does not: the ETag is the device's hash of the
//                plaintext, which it cannot check on the ciphertext);
//   fair-health  the same for a health report (docs/device-health.md): the body read and parsed as
//                JSON, the device, the window, the signature, the nonce, then the report stored (the
//                store's one transaction), without the cloud's checks of its shape;
//   bare-ota     answers every GET with the same precomputed manifest bytes;
//   fair-storm   what a booting device of the fleet simulator asks (tools/simulate/engine.ts), each with
//                its essential work on the same store and nothing else, so that the same simulator runs
//                the same boot storm against it (docs/fleet-scale.md, the storm ratio): the OTA check
//                answered with the manifest bytes (--manifest-file, as the cloud's answer cache does), a
//                push as fair-ingest, a push with If-None-Match equal to the stored ETag authenticated
//                (signature, nonce) and its body read away, then 304; and, outside the storm's time,
//                the enrollment (PUT /admin/devices/{uuid}: the key parsed, the device stored; no admin
//                token checked) and the verification's signed GET of a device's backup.
// Prints `baseline listening on http://…` once every process listens; SIGTERM stops it.
import cluster from 'node:cluster';
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { openStore } from '../../cloud/store/index.ts';
import type { CloudStore, HealthReport } from '../../cloud/store/types.ts';

const { values: o } = parseArgs({
  options: {
    mode: { type: 'string' },
    workers: { type: 'string', default: '1' },
    database: { type: 'string' },
    'manifest-file': { type: 'string' },
    'hash-body': { type: 'boolean', default: false },
    'window-seconds': { type: 'string', default: '300' },
  },
});
const MODES = ['bare-ingest', 'fair-ingest', 'fair-health', 'bare-ota', 'fair-storm'] as const;
type Mode = (typeof MODES)[number];
const mode = o.mode as Mode;
if (!MODES.includes(mode)) throw new Error(`--mode must be one of ${MODES.join(', ')}, not ${JSON.stringify(o.mode)}`);
const workers = Number(o.workers);
if (!Number.isInteger(workers) || workers < 1) throw new Error(`--workers must be a whole number from 1, not ${JSON.stringify(o.workers)}`);
/** The fair limits do their work on the cloud's store. */
const USES_STORE = mode === 'fair-ingest' || mode === 'fair-health' || mode === 'fair-storm';
if (USES_STORE && !o.database) throw new Error(`--mode ${mode} needs --database (a DATABASE_URL)`);
if ((mode === 'bare-ota' || mode === 'fair-storm') && !o['manifest-file']) throw new Error(`--mode ${mode} needs --manifest-file`);

const STORED = Buffer.from(JSON.stringify({ message: 'Backup stored', last_backup_date: new Date().toISOString() }));
const REFUSED = Buffer.from(JSON.stringify({ error: 'unauthorized' }));
const MAX_BODY = 512 * 1024;

function answer(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}

/** The body in one Buffer of its declared length (as the cloud reads it), or null past MAX_BODY. */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  if (!Number.isSafeInteger(declared) || declared > MAX_BODY) {
    req.resume();
    return Promise.resolve(null);
  }
  const body = Buffer.allocUnsafe(declared);
  let at = 0;
  return new Promise((resolve, reject) => {
    req.on('data', (c: Buffer) => {
      if (at + c.length > declared) return;
      c.copy(body, at);
      at += c.length;
    });
    req.on('end', () => resolve(at === declared ? body : null));
    req.on('error', reject);
  });
}

function bareIngest(): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => answer(res, 200, STORED));
  };
}

function bareOta(): (req: IncomingMessage, res: ServerResponse) => void {
  const manifest = readFileSync(o['manifest-file']!);
  return (_req, res) => answer(res, 200, manifest);
}

/** Parsed device keys of this process, by device, with the PEM each stands for (as the cloud's cache). */
const keys = new Map<string, { pem: string; key: KeyObject }>();
const windowMs = Number(o['window-seconds']) * 1000;

/**
 * A signed request's essential authentication: the device looked up, the timestamp window, the P-256
 * signature verified on libuv's pool (as the cloud does), the nonce inserted. False when refused.
 */
async function authenticated(store: CloudStore, req: IncomingMessage): Promise<boolean> {
  const uuid = req.headers['x-device-uuid'] as string;
  const nonceB64 = req.headers['x-device-nonce'] as string;
  const timestamp = req.headers['x-device-timestamp'] as string;
  const signature = Buffer.from(req.headers['x-device-signature'] as string, 'base64');
  const device = await store.getDevice(uuid);
  const nowMs = Date.now();
  const ts = Date.parse(timestamp);
  if (!device || !(Math.abs(nowMs - ts) <= windowMs)) return false;
  let cached = keys.get(uuid);
  if (!cached || cached.pem !== device.publicKeyPem) {
    cached = { pem: device.publicKeyPem, key: createPublicKey(device.publicKeyPem) };
    keys.set(uuid, cached);
  }
  const nonce = Buffer.from(nonceB64, 'base64');
  const message = Buffer.concat([nonce, Buffer.from(timestamp, 'utf8')]);
  const ok = await new Promise<boolean>((resolve) => verify('sha256', message, { key: cached.key, dsaEncoding: 'der' }, signature, (err, v) => resolve(!err && v)));
  return ok && (await store.recordNonce(uuid, nonceB64, ts + windowMs, nowMs));
}

/**
 * The essential work of a signed request around `write` (what is stored, and the answer): the body read
 * into one Buffer, then the request authenticated (above).
 */
function fairSigned(store: CloudStore, write: (uuid: string, body: Buffer, nowMs: number, req: IncomingMessage) => Promise<{ status: number; answer: Buffer }>) {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    if (!body) return answer(res, 413, REFUSED);
    if (!(await authenticated(store, req))) return answer(res, 401, REFUSED);
    const written = await write(req.headers['x-device-uuid'] as string, body, Date.now(), req);
    answer(res, written.status, written.answer);
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => answer(res, 500, REFUSED));
  };
}

/** An ETag header's value without its quotes. */
const unquote = (v: string | undefined) => (v === undefined ? null : v.replace(/^W\//, '').replace(/^"|"$/g, ''));

/** What a device of the fleet simulator asks, each with its essential work (fair-storm, above). */
function fairStorm(store: CloudStore): (req: IncomingMessage, res: ServerResponse) => void {
  const manifest = readFileSync(o['manifest-file']!);
  const push = fairIngest(store);
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    if (req.method === 'GET' && url.startsWith('/ota/')) return answer(res, 200, manifest);
    const m = /^\/devices\/([^/?]+)\/backup$/.exec(url) ?? /^\/admin\/devices\/([^/?]+)$/.exec(url);
    if (!m) return answer(res, 404, REFUSED);
    const uuid = m[1]!;
    if (url.startsWith('/admin/')) {
      if (req.method !== 'PUT') return answer(res, 404, REFUSED);
      const body = await readBody(req);
      const pem = (JSON.parse(body!.toString('utf8')) as { public_key: string }).public_key;
      const key = createPublicKey(pem);
      await store.putDevice(uuid, pem, new Date().toISOString());
      keys.set(uuid, { pem, key });
      return answer(res, 201, STORED);
    }
    if (req.method === 'GET') {
      if (!(await authenticated(store, req))) return answer(res, 401, REFUSED);
      const backup = await store.getBackup(uuid);
      if (!backup) return answer(res, 404, REFUSED);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': backup.blob.length });
      return void res.end(backup.blob);
    }
    if (req.method !== 'POST') return answer(res, 404, REFUSED);
    const ifNoneMatch = unquote(req.headers['if-none-match']);
    const etag = unquote(req.headers.etag);
    if (ifNoneMatch !== null && etag !== null) {
      // The 304 decided from the stored ETag; the body read away, never held; the request authenticated.
      const stored = await store.getBackupMeta(uuid);
      if (stored?.etag === ifNoneMatch) {
        await new Promise<void>((resolve, reject) => {
          req.on('data', () => undefined);
          req.on('end', resolve);
          req.on('error', reject);
        });
        if (!(await authenticated(store, req))) return answer(res, 401, REFUSED);
        res.writeHead(304, { etag: `"${stored.etag}"` });
        return void res.end();
      }
    }
    push(req, res);
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => answer(res, 500, REFUSED));
  };
}

function fairIngest(store: CloudStore): (req: IncomingMessage, res: ServerResponse) => void {
  return fairSigned(store, async (uuid, body, nowMs, req) => {
    if (o['hash-body']) createHash('sha256').update(body).digest('hex');
    await store.putBackup(uuid, body, unquote(req.headers.etag as string | undefined), new Date(nowMs).toISOString());
    return { status: 200, answer: STORED };
  });
}

function fairHealth(store: CloudStore): (req: IncomingMessage, res: ServerResponse) => void {
  return fairSigned(store, async (uuid, body, nowMs) => {
    const report = JSON.parse(body.toString('utf8')) as HealthReport;
    const ingest = await store.putHealthReport(uuid, report, new Date(nowMs).toISOString());
    return { status: ingest?.stored ? 201 : 200, answer: Buffer.from(JSON.stringify({ seq: report.seq })) };
  });
}

async function serveWorker(): Promise<import('node:http').Server> {
  const store = USES_STORE ? await openStore(o.database!, { workers }) : undefined;
  const listener =
    mode === 'bare-ingest' ? bareIngest() : mode === 'bare-ota' ? bareOta() : mode === 'fair-health' ? fairHealth(store!) : mode === 'fair-storm' ? fairStorm(store!) : fairIngest(store!);
  const server = createServer({ keepAliveTimeout: 65_000 }, listener);
  await new Promise<void>((r) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
  process.once('SIGTERM', () => {
    server.close(() => {
      // As the cloud's workers say it (cloud/cluster/stats.ts): the same store met the same lock.
      const busy = store?.kind === 'sqlite' ? store.stats() : undefined;
      if (busy) process.stderr.write(`worker ${process.pid} stopped: SQLITE_BUSY ${busy.busy} times, ${busy.calls} store calls waited for the lock (run in ${busy.batches} transactions), longest wait ${Math.round(busy.maxWaitMs)} ms\n`);
      void (store ? store.close() : Promise.resolve()).then(() => process.exit(0));
    });
    server.closeIdleConnections();
  });
  return server;
}

const listening = (port: number) => process.stdout.write(`baseline listening on http://127.0.0.1:${port} (${mode}, ${workers} process${workers > 1 ? 'es' : ''})\n`);

async function supervise(): Promise<void> {
  // As `fleet serve`: the store opened (and migrated) once before the processes that share it.
  if (USES_STORE) await (await openStore(o.database!)).close();
  const started = Array.from({ length: workers }, () => cluster.fork());
  const ports = await Promise.all(started.map((w) => new Promise<number>((r) => w.once('listening', (a) => r(a.port)))));
  listening(ports[0]!);
  process.once('SIGTERM', () => {
    for (const w of started) w.process.kill('SIGTERM');
  });
  await Promise.all(started.map((w) => new Promise((r) => w.once('exit', r))));
}

// One process (as WORKERS=1): this one serves; more: node:cluster, as `fleet serve`.
if (workers === 1) listening(((await serveWorker()).address() as AddressInfo).port);
else await (cluster.isPrimary ? supervise() : serveWorker());
