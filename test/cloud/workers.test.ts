// `fleet serve` on two worker processes sharing one SQLite file (docs/cloud-workers.md), as real
// processes on a loopback port: a nonce admitted by one worker is refused by the other (the store
// decides); a change made through one worker (a release, a revocation, a log level) applies on the
// other before its answer, not after a TTL; a worker killed while uploads are in flight loses nothing
// acknowledged and is started again; SIGTERM under load finishes what is in flight, closes the store
// and exits 0.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { signDeviceRequest } from '../../tools/device-signer.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { parseRawResponse } from '../helpers/raw-http.ts';
import {
  agentsPerWorker,
  backupBlob,
  enrollDevice,
  send,
  sha256,
  startServe,
  superUserToken,
  uploadHeaders,
  type Serve,
  type TestDevice,
} from '../helpers/serve.ts';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'fleet-workers-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const TRACK = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';
const meta = (v: string) => Buffer.from(JSON.stringify({ url: `https://fw.example/${v}.bin`, size: 1000, sha256: 'ab'.repeat(32) }));

async function admin(s: Serve, agent: Agent, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${await superUserToken()}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return send(s.url, agent, method, path, headers, body === undefined ? undefined : Buffer.from(JSON.stringify(body)));
}

describe.each([
  ['one SQLite file', async () => join(tempDir(), 'cloud.sqlite')],
  ['one PostgreSQL database', () => freshDatabase()],
])('fleet serve, two workers on %s', (_name, database) => {
  let serve: Serve;
  let w: Map<number, Agent>;
  let device: TestDevice;

  beforeAll(async () => {
    // Caches that would keep a stale answer for ten minutes, and log levels re-read once an hour:
    // only the workers telling each other can make the tests below pass.
    serve = await startServe({ DATABASE_URL: await database(), OTA_CACHE_TTL_MS: '600000', APPCONFIG_REFRESH_MS: '3600000' });
    w = await agentsPerWorker(serve.url, 2);
    device = await enrollDevice(serve.url, w.get(1)!, 'wk-0001');
  }, 60_000);

  afterAll(async () => {
    for (const a of w?.values() ?? []) a.destroy();
    expect(await serve?.stop()).toBe(0);
  });

  /** An upload on worker n's connection, asserting it went there. */
  async function uploadOn(n: number, signed: ReturnType<typeof signDeviceRequest>, blob = backupBlob(device.uuid, 1)) {
    const res = await send(serve.url, w.get(n)!, 'POST', `/devices/${device.uuid}/backup`, uploadHeaders(device, signed), blob);
    expect(res.reusedSocket, `the upload went over worker ${n}'s connection`).toBe(true);
    return res;
  }

  it('a nonce admitted by one worker is refused by the other: the store decides, not a process', async () => {
    const first = signDeviceRequest(device.key, device.uuid);
    expect((await uploadOn(1, first)).status).toBe(200);
    const replayed = await uploadOn(2, first);
    expect([replayed.status, replayed.json?.error]).toEqual([401, 'nonce_replayed']);

    const second = signDeviceRequest(device.key, device.uuid);
    expect((await uploadOn(2, second)).status).toBe(200);
    expect((await uploadOn(1, second)).json?.error).toBe('nonce_replayed');

    // Sent to both at the same moment: admitted exactly once.
    const third = signDeviceRequest(device.key, device.uuid);
    const both = await Promise.all([uploadOn(1, third), uploadOn(2, third)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('a release and a revocation made through one worker are answered by the other at once', async () => {
    const check = async () => (await send(serve.url, w.get(2)!, 'GET', '/ota/ctl-s3/0x00C0FFEE/ctl-s3?current_version=2026.01.01')).json?.version;
    expect((await admin(serve, w.get(1)!, 'PUT', `${TRACK}/2026.01.01`, JSON.parse(meta('2026.01.01').toString()))).status).toBe(201);
    expect(await check()).toBe('2026.01.01'); // now cached on worker 2, for ten minutes
    expect(await check()).toBe('2026.01.01');
    expect((await admin(serve, w.get(1)!, 'PUT', `${TRACK}/2026.02.01`, JSON.parse(meta('2026.02.01').toString()))).status).toBe(201);
    expect(await check()).toBe('2026.02.01');
    expect((await admin(serve, w.get(1)!, 'POST', `${TRACK}/2026.02.01/revoke`)).status).toBe(200);
    expect(await check()).toBe('2026.01.01');
  });

  it('a console session opened on one worker is good on the other, with its CSRF token; logged out on one, refused by the other (the store holds it)', async () => {
    const login = await send(serve.url, w.get(1)!, 'POST', '/console/session', { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ token: await superUserToken() })));
    expect([login.status, login.reusedSocket]).toEqual([201, true]);
    const cookies = Object.fromEntries((login.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!.split('=') as [string, string]));
    const cookie = `fleet_session=${cookies.fleet_session}; fleet_csrf=${cookies.fleet_csrf}`;
    const groups = Buffer.from(JSON.stringify({ groups: ['beta'] }));
    const withToken = await send(serve.url, w.get(2)!, 'PUT', `/admin/devices/${device.uuid}/groups`, { cookie, 'x-csrf-token': cookies.fleet_csrf!, 'content-type': 'application/json' }, groups);
    expect([withToken.status, withToken.reusedSocket, withToken.json.groups]).toEqual([200, true, ['beta']]);
    const without = await send(serve.url, w.get(2)!, 'PUT', `/admin/devices/${device.uuid}/groups`, { cookie, 'content-type': 'application/json' }, groups);
    expect([without.status, without.json.error]).toEqual([403, 'csrf_check_failed']);
    const logout = await send(serve.url, w.get(2)!, 'DELETE', '/console/session', { cookie, 'x-csrf-token': cookies.fleet_csrf! });
    expect([logout.status, logout.reusedSocket]).toEqual([204, true]);
    const after = await send(serve.url, w.get(1)!, 'GET', '/admin/devices', { cookie });
    expect([after.status, after.reusedSocket, after.json.error]).toEqual([401, true, 'session_expired']);
  });

  it('a log level deployed through one worker applies on the other before the deployment is answered', async () => {
    const records = () => serve.stdout().split('\n').filter((l) => l.includes('"msg":"health check"'));
    expect(records()).toEqual([]); // WARNING: the health checks above logged nothing
    expect((await admin(serve, w.get(1)!, 'PATCH', '/appconfig/svc-func-health', { logging: 'DEBUG' })).status).toBe(200);
    expect((await admin(serve, w.get(1)!, 'POST', '/appconfig/svc-func-health/deploy')).status).toBe(202);
    const res = await send(serve.url, w.get(2)!, 'GET', '/health');
    expect([res.json.worker, res.reusedSocket]).toEqual([2, true]);
    // Worker 2 logs the check at DEBUG: it re-read the levels when told, not on its hourly refresh.
    for (let i = 0; i < 50 && records().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(records().length).toBe(1);
    expect(JSON.parse(records()[0]!)).toMatchObject({ level: 'DEBUG', function: 'svc-func-health', store: 'ok' });
  });
});

/**
 * Devices pushing distinct backups one after another over kept-alive connections (spread over the
 * workers), each remembering what was acknowledged (200) and every blob it sent after that.
 */
class UploadLoad {
  readonly acked = new Map<string, string>();
  /** Per device, the blobs sent since its last acknowledged one (one may be stored, its answer lost). */
  readonly unacked = new Map<string, string[]>();
  readonly failures: string[] = [];
  ackCount = 0;
  private running = true;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });
  private readonly loops: Promise<void>[];

  constructor(
    private readonly url: string,
    devices: TestDevice[],
  ) {
    this.loops = devices.map((d) => this.loop(d));
  }

  private async loop(d: TestDevice): Promise<void> {
    for (let n = 1; this.running; n++) {
      const blob = backupBlob(d.uuid, n);
      const sent = sha256(blob);
      this.unacked.set(d.uuid, [...(this.unacked.get(d.uuid) ?? []), sent]);
      try {
        const res = await send(this.url, this.agent, 'POST', `/devices/${d.uuid}/backup`, uploadHeaders(d), blob);
        if (res.status === 200) {
          this.acked.set(d.uuid, sent);
          this.unacked.set(d.uuid, []);
          this.ackCount++;
        } else this.failures.push(`${res.status} ${res.json?.error}`);
      } catch (err) {
        this.failures.push((err as NodeJS.ErrnoException).code ?? (err as Error).message);
        if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') return;
      }
    }
  }

  async until(cond: () => boolean, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.agent.destroy();
  }

  /** What the store must hold for a device: its last acknowledged blob, or one sent after it. */
  allowed(uuid: string): string[] {
    return [...(this.acked.has(uuid) ? [this.acked.get(uuid)!] : []), ...(this.unacked.get(uuid) ?? [])];
  }
}

async function enrollMany(serve: Serve, n: number, prefix: string): Promise<TestDevice[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  try {
    return await Promise.all(Array.from({ length: n }, (_, i) => enrollDevice(serve.url, agent, `${prefix}-${String(i).padStart(4, '0')}`)));
  } finally {
    agent.destroy();
  }
}

describe('fleet serve, a worker killed while uploads are in flight', () => {
  it('loses nothing acknowledged, and the supervisor starts the worker again', async () => {
    const db = join(tempDir(), 'cloud.sqlite');
    const serve = await startServe({ DATABASE_URL: db });
    try {
      const devices = await enrollMany(serve, 12, 'kill');
      const load = new UploadLoad(serve.url, devices);
      await load.until(() => load.ackCount >= 40, 30_000);
      const [victim] = serve.workerPids();
      process.kill(victim!, 'SIGKILL');
      const ackedAtKill = load.ackCount;
      await load.until(() => load.ackCount >= ackedAtKill + 40 && /serving again/.test(serve.stderr()), 30_000);
      await load.stop();
      expect(serve.stderr()).toMatch(new RegExp(`worker \\d \\(pid ${victim}\\) exited with SIGKILL: starting it again`));
      expect(serve.stderr()).toMatch(/worker \d \(pid \d+\) serving again/);
      // Uploads were cut by the kill (their connections reset), and later ones were acknowledged.
      expect(load.failures.some((f) => /ECONNRESET|socket hang up|EPIPE/.test(f)), load.failures.join(', ')).toBe(true);
      expect(load.ackCount).toBeGreaterThanOrEqual(ackedAtKill + 40);
      // Every device's stored backup is its last acknowledged one, or one it sent after it.
      const agent = new Agent({ keepAlive: true, maxSockets: 4 });
      for (const d of devices) {
        const res = await send(serve.url, agent, 'GET', `/devices/${d.uuid}/backup`, signDeviceRequest(d.key, d.uuid) as unknown as Record<string, string>);
        if (!load.acked.has(d.uuid) && res.status === 404) continue;
        expect(res.status).toBe(200);
        expect(load.allowed(d.uuid)).toContain(sha256(res.body));
      }
      agent.destroy();
      // Two workers answer again.
      const again = await agentsPerWorker(serve.url, 2);
      for (const a of again.values()) a.destroy();
      expect(await serve.stop()).toBe(0);
    } finally {
      await serve.stop();
    }
  }, 180_000);
});

describe('fleet serve, SIGTERM under load', () => {
  it('finishes the requests in flight (one still sending its body), closes the store, exits 0; nothing acknowledged is lost', async () => {
    const db = join(tempDir(), 'cloud.sqlite');
    const serve = await startServe({ DATABASE_URL: db });
    const devices = await enrollMany(serve, 9, 'term');
    const [slow, ...busy] = devices as [TestDevice, ...TestDevice[]];
    const load = new UploadLoad(serve.url, busy);
    await load.until(() => load.ackCount >= 30, 30_000);

    // An upload in flight: its headers and half its body sent before the SIGTERM, the rest after.
    const blob = backupBlob(slow.uuid, 1);
    const { hostname, port } = new URL(serve.url);
    const socket = connect({ host: hostname, port: Number(port) });
    const head = Object.entries({ ...uploadHeaders(slow), host: `${hostname}:${port}`, 'content-length': String(blob.length) }).map(([k, v]) => `${k}: ${v}`).join('\r\n');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    // Expect: 100-continue, so that the worker says when it has the request (a fixed wait raced a loaded machine).
    socket.write(`POST /devices/${slow.uuid}/backup HTTP/1.1\r\n${head}\r\nexpect: 100-continue\r\n\r\n`);
    const continued = Date.now() + 20_000;
    while (!Buffer.concat(chunks).toString('latin1').startsWith('HTTP/1.1 100 Continue\r\n') && Date.now() < continued) await new Promise((r) => setTimeout(r, 10));
    expect(Buffer.concat(chunks).toString('latin1'), 'the worker has the request').toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    socket.write(blob.subarray(0, 32 * 1024)); // the worker has it, waiting for the rest of the body

    serve.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    socket.write(blob.subarray(32 * 1024));
    await closed; // the worker closes the connection after its answer
    const answer = parseRawResponse(Buffer.concat(chunks));
    expect(answer?.status).toBe(200);
    expect(answer?.headers.connection).toBe('close');

    expect(await serve.exited).toBe(0);
    await load.stop();
    expect(serve.stderr()).toMatch(/stopped: 2 of 2 workers stopped cleanly, 0 connections cut at the time-out/);
    // Nothing acknowledged is lost: the store as the workers left it.
    const store = new SqliteStore(db);
    try {
      expect(sha256((await store.getBackup(slow.uuid))!.blob)).toBe(sha256(blob));
      for (const d of busy) {
        const stored = await store.getBackup(d.uuid);
        if (!load.acked.has(d.uuid) && !stored) continue;
        expect(load.allowed(d.uuid)).toContain(sha256(stored!.blob));
      }
    } finally {
      await store.close();
    }
  }, 180_000);
});
