// `fleet simulate --health` (tools/simulate/engine.ts, docs/device-health.md): each simulated device
// sends a signed boot report and heartbeat after its update check (with --no-backups, nothing else), and
// at the end every device's reports are read back through the admin API; a device whose reports are
// gone is counted lost.
import { afterEach, describe, expect, it } from 'vitest';
import { FleetSimulator } from '../../tools/simulate/engine.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const open: TestCloud[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function cloudWithRelease(): Promise<TestCloud> {
  const cloud = await startTestCloud();
  open.push(cloud);
  expect((await cloud.admin('PUT', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.01.01', { no_image: true })).status).toBe(201);
  return cloud;
}

describe('fleet simulator, health reports', () => {
  it('30 devices at once, reports only: every report stored once, every device verified; a device whose reports are gone is lost', async () => {
    const cloud = await cloudWithRelease();
    const sim = new FleetSimulator({ urls: [cloud.url], adminToken: await cloud.token(), devices: 30, health: true, backups: false, uuidPrefix: 'sim-h-' });
    const r = await sim.run();
    expect(r.errorCount).toBe(0);
    expect(r.steps.map((s) => [s.step, s.requests - s.retries, s.failures])).toEqual([
      ['ota', 30, 0],
      ['boot', 30, 0],
      ['heartbeat', 30, 0],
    ]);
    expect(r.health).toEqual({ stored: 30, lost: 0 });
    expect(r.intact + r.lost).toBe(0); // no backups pushed, none checked
    for (const { uuid } of sim.deviceIds()) {
      const reports = await cloud.store.listHealthReports(uuid, { limit: 10 });
      expect(reports.map((x) => [x.report.seq, x.report.kind, x.report.fw]), uuid).toEqual([
        [2, 'heartbeat', '2026.01.01'],
        [1, 'boot', '2026.01.01'],
      ]);
    }
    const [first] = sim.deviceIds();
    await cloud.store.deleteDevice(first!.uuid);
    expect(await sim.verifyHealth()).toEqual({ stored: 29, lost: 1 });
    sim.close();
  });

  it('fleet simulate --health --no-backups prints the reports verified, and removes its devices with their reports', async () => {
    const cloud = await cloudWithRelease();
    const { main } = await import('../../tools/fleet.ts');
    const out = { stdout: '', stderr: '' };
    const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
    process.stdout.write = ((c: string) => ((out.stdout += c), true)) as typeof process.stdout.write;
    process.stderr.write = ((c: string) => ((out.stderr += c), true)) as typeof process.stderr.write;
    let code: number;
    try {
      code = await main(['node', 'fleet', '--cloud', cloud.url, '--token', await cloud.token(), 'simulate', '--devices', '5', '--health', '--no-backups']);
    } finally {
      process.stdout.write = writes.stdout;
      process.stderr.write = writes.stderr;
    }
    expect(code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^health reports: devices=5 stored=5 lost=0$/m);
    expect(out.stdout).not.toMatch(/^backups:/m);
    expect(out.stderr).toMatch(/removed 5 simulated devices/);
    expect((await cloud.adminJson('GET', '/admin/health')).body).toMatchObject({ devices: 0, reporting: 0 });
  });
});
