// The fleet simulator (tools/simulate/engine.ts) against a real cloud on loopback: every device
// checks for an update, pushes its backup, pushes it again unchanged (304), and every stored backup
// is the one its device sent. The verification is itself checked: a swapped or deleted backup is seen.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../cloud/config.ts';
import { startCloudServer, type RunningCloud } from '../../cloud/server.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { deviceBlob, FleetSimulator } from '../../tools/simulate/engine.ts';
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
    const running: RunningCloud = await startCloudServer(config, { store, sink: () => undefined, limits: { uploadMaxActive: 1, uploadMaxQueued: 0, retryAfterSeconds: 1 } });
    open.push({ close: async () => (await running.close(), await store.close()) });
    const { mintToken } = await import('../../cloud/auth/jwt.ts');
    const token = await mintToken(new TextEncoder().encode('test-secret-0123456789abcdef'), { subject: 't' });
    const sim = new FleetSimulator({ urls: [running.url], adminToken: token, devices: 20, sizeBytes: 512 * 1024, bigEvery: 0, backoffBaseMs: 50, maxAttempts: 20, uuidPrefix: 'sim-c-' });
    const r = await sim.run();
    sim.close();
    expect(r.errorCount).toBe(0);
    expect(Object.keys(r.retried).some((k) => k.startsWith('push') && k.includes('503 store_saturated'))).toBe(true);
    expect(running.cloud.gates().upload.refusedFull).toBeGreaterThan(0);
    expect(running.cloud.gates().upload.peakActive).toBe(1);
    expect({ intact: r.intact, lost: r.lost, mixed: r.mixed }).toEqual({ intact: 20, lost: 0, mixed: 0 });
  });
});
