// The fleet simulator (tools/simulate/engine.ts) against a real cloud on loopback: every device
// checks for an update, pushes its backup, pushes it again unchanged (304), and every stored backup
// is the one its device sent. The verification is itself checked: a swapped or deleted backup is seen.
// Devices retry as real ones do (no give-up on 503/408/network errors, back-off with jitter, never
// sooner than Retry-After), stopped only by the run's deadline; an unreachable cloud is exit 3.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../cloud/config.ts';
import { startCloudServer, type RunningCloud } from '../../cloud/server.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { deviceBlob, FleetSimulator, retryDelayMs } from '../../tools/simulate/engine.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function seededCloud(): Promise<TestCloud> {
  const cloud = await startTestCloud();
  open.push(cloud);
  const res = await cloud.admin('PUT', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01', { url: 'https://fw.example/a.bin', size: 1000, sha256: 'ab'.repeat(32) });
  expect(res.status).toBe(201);
  return cloud;
}

describe('fleet simulator', () => {
  it('50 devices at once: every step answered, no errors, every stored backup is the one its device sent', async () => {
    const cloud = await seededCloud();
    const sim = new FleetSimulator({ urls: [cloud.url], adminToken: await cloud.token(), devices: 50, bigEvery: 10, uuidPrefix: 'sim-a-' });
    const r = await sim.run();
    sim.close();
    expect(r.errorCount).toBe(0);
    expect(r.errors).toEqual({});
    expect(r.steps.map((s) => [s.step, s.requests - s.retries, s.failures])).toEqual([
      ['ota', 50, 0],
      ['push', 50, 0],
      ['push304', 50, 0],
    ]);
    expect({ intact: r.intact, lost: r.lost, mixed: r.mixed }).toEqual({ intact: 50, lost: 0, mixed: 0 });
    // Independently of the simulator: the store holds each device's own blob, 5 of them 512 KB.
    const sizes: number[] = [];
    for (const { uuid, index } of sim.deviceIds()) {
      const stored = await cloud.store.getBackup(uuid);
      expect(stored?.blob.equals(deviceBlob('fleet-sim', index, stored.blob.length)), uuid).toBe(true);
      sizes.push(stored!.size);
    }
    expect(sizes.filter((s) => s === 512 * 1024)).toHaveLength(5);
    expect(sizes.filter((s) => s === 64 * 1024)).toHaveLength(45);
  });

  it('the verification sees a backup that is another device’s (mixed) and one that is gone (lost)', async () => {
    const cloud = await seededCloud();
    const sim = new FleetSimulator({ urls: [cloud.url], adminToken: await cloud.token(), devices: 6, bigEvery: 0, uuidPrefix: 'sim-b-' });
    expect((await sim.run()).lost).toBe(0);
    const [d0, d1, d2] = sim.deviceIds();
    const other = await cloud.store.getBackup(d1!.uuid);
    await cloud.store.putBackup(d0!.uuid, other!.blob, other!.etag, new Date().toISOString());
    await cloud.store.deleteBackup(d2!.uuid);
    expect(await sim.verify()).toEqual({ intact: 4, lost: 2, mixed: 1 });
    sim.close();
  });

  it('devices refused with 503 by a saturated upload gate retry after Retry-After and all end stored', async () => {
    const store = new SqliteStore(':memory:');
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: ':memory:', JWT_SECRET: 'test-secret-0123456789abcdef' });
    const running: RunningCloud = await startCloudServer(config, { store, sink: () => undefined, limits: { uploadMaxActive: 1, uploadMaxQueued: 0, retryAfterSeconds: 1, retryAfterMaxSeconds: 1 } });
    open.push({ close: async () => (await running.close(), await store.close()) });
    const { mintToken } = await import('../../cloud/auth/jwt.ts');
    const token = await mintToken(new TextEncoder().encode('test-secret-0123456789abcdef'), { subject: 't' });
    const sim = new FleetSimulator({ urls: [running.url], adminToken: token, devices: 20, sizeBytes: 512 * 1024, bigEvery: 0, backoffBaseMs: 50, uuidPrefix: 'sim-c-' });
    const r = await sim.run();
    sim.close();
    expect(r.errorCount).toBe(0);
    expect(Object.keys(r.retried).some((k) => k.startsWith('push') && k.includes('503 store_saturated upload/queue_full'))).toBe(true);
    expect(r.maxRetryAfterSeconds).toBe(1);
    expect(running.cloud.gates().upload.refusedFull).toBeGreaterThan(0);
    expect(running.cloud.gates().upload.peakActive).toBe(1);
    expect({ intact: r.intact, lost: r.lost, mixed: r.mixed }).toEqual({ intact: 20, lost: 0, mixed: 0 });
  });
});

describe('device retries (docs/fleet-scale.md)', () => {
  it('the wait before a retry: full jitter under an exponential cap without Retry-After; never sooner than Retry-After, at most a second later', () => {
    expect(retryDelayMs(1, 0, 250, 30_000, () => 0.999)).toBeLessThan(250);
    expect(retryDelayMs(3, 0, 250, 30_000, () => 0.999)).toBeGreaterThan(990);
    expect(retryDelayMs(3, 0, 250, 30_000, () => 0.999)).toBeLessThan(1000);
    // the cap, however many attempts
    expect(retryDelayMs(40, 0, 250, 30_000, () => 0.999)).toBeLessThan(30_000);
    expect(retryDelayMs(40, 0, 250, 30_000, () => 0.999)).toBeGreaterThan(29_900);
    expect(retryDelayMs(1, 0, 250, 30_000, () => 0)).toBe(0);
    // Retry-After is a floor; the jitter above it grows with the attempt but stays under a second
    expect(retryDelayMs(1, 7000, 250, 30_000, () => 0)).toBe(7000);
    expect(retryDelayMs(1, 7000, 250, 30_000, () => 0.999)).toBeLessThan(7250);
    expect(retryDelayMs(12, 7000, 250, 30_000, () => 0.999)).toBeGreaterThan(7990);
    expect(retryDelayMs(12, 7000, 250, 30_000, () => 0.999)).toBeLessThan(8000);
  });

  /** A stand-in cloud: enrollment 201, OTA 404, and every push refused `refusals` times per device (503, then 408), then stored. */
  async function flakyCloud(refusals: (uuid: string) => number): Promise<{ url: string; attempts: Map<string, number>; close(): Promise<void> }> {
    const stored = new Map<string, Buffer>();
    const attempts = new Map<string, number>();
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const m = /^\/devices\/([^/]+)\/backup$/.exec(req.url ?? '');
        if (req.method === 'PUT') return void res.writeHead(201).end('{}');
        if (!m) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no_release"}');
        const uuid = m[1]!;
        if (req.method === 'GET') return void (stored.has(uuid) ? res.writeHead(200).end(stored.get(uuid)) : res.writeHead(404).end());
        const n = (attempts.get(uuid) ?? 0) + 1;
        attempts.set(uuid, n);
        if (n <= refusals(uuid)) {
          const status = n % 2 ? 503 : 408;
          return void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: status === 503 ? 'store_saturated' : 'request_timeout' }));
        }
        if (req.headers['if-none-match'] && stored.has(uuid)) return void res.writeHead(304).end();
        stored.set(uuid, Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"message":"Backup stored"}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const handle = { url, attempts, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
    open.push(handle);
    return handle;
  }

  it('a device never gives up on 503 and 408: past the old limit of 8 attempts every backup still ends stored', async () => {
    const cloud = await flakyCloud(() => 11);
    const sim = new FleetSimulator({ urls: [cloud.url], adminToken: 't', devices: 4, bigEvery: 0, sizeBytes: 4096, backoffBaseMs: 1, backoffMaxMs: 4, uuidPrefix: 'sim-d-' });
    const r = await sim.run();
    sim.close();
    expect(r.errorCount).toBe(0);
    expect(r.pastDeadline).toBe(0);
    expect(r.steps.find((s) => s.step === 'push')).toMatchObject({ requests: 48, retries: 44, failures: 0 });
    expect(r.retried).toEqual({ 'push 503 store_saturated': 24, 'push 408 request_timeout': 20 });
    expect({ intact: r.intact, lost: r.lost, mixed: r.mixed }).toEqual({ intact: 4, lost: 0, mixed: 0 });
  });

  it('only the run’s deadline stops a device that is always refused; the others are stored', async () => {
    const cloud = await flakyCloud((uuid) => (uuid.endsWith('00001') ? Infinity : 0));
    const sim = new FleetSimulator({ urls: [cloud.url], adminToken: 't', devices: 3, bigEvery: 0, sizeBytes: 4096, backoffBaseMs: 1, backoffMaxMs: 20, deadlineMs: 300, uuidPrefix: 'sim-e-' });
    const r = await sim.run();
    sim.close();
    expect(r.pastDeadline).toBe(1);
    expect(r.errorCount).toBe(1);
    expect(Object.keys(r.errors)).toHaveLength(1);
    expect(Object.keys(r.errors)[0]).toMatch(/^push (503 store_saturated|408 request_timeout)$/);
    expect(cloud.attempts.get('sim-e-00001')).toBeGreaterThan(8);
    expect({ intact: r.intact, lost: r.lost }).toEqual({ intact: 2, lost: 1 });
  });

  it('fleet simulate exits 3 (unreachable) when the cloud cannot be reached', async () => {
    const { main } = await import('../../tools/fleet.ts');
    const write = process.stderr.write;
    let said = '';
    process.stderr.write = ((chunk: string) => ((said += chunk), true)) as typeof process.stderr.write;
    try {
      const code = await main(['node', 'fleet', '--cloud', 'http://127.0.0.1:9', '--token', 't', 'simulate', '--devices', '2']);
      expect(code).toBe(3);
    } finally {
      process.stderr.write = write;
    }
    expect(said).toMatch(/^fleet: the cloud at http:\/\/127\.0\.0\.1:9 could not be reached \(ECONNREFUSED\): start it \(npm start, or fleet serve\) or point --cloud \(or FLEET_CLOUD_URL\) at a running cloud\n$/m);
  });
});
