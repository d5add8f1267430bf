// `fleet simulate` leaves the cloud's inventory as it found it: its sim-… devices and their backups
// are removed at the end (--keep keeps them), also when the storm is stopped by SIGINT.
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { FLEET_JS, ROOT, runFleet } from '../helpers/fleet-cli.ts';

let cloud: TestCloud;
beforeEach(async () => {
  cloud = await startTestCloud();
  await cloud.admin('PUT', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01', { url: 'https://fw.example/a.bin', size: 1000, sha256: 'ab'.repeat(32) });
  // Someone else's device, which the simulation must not touch.
  await cloud.enroll('field-unit-1');
});
afterEach(() => cloud.close());

const env = () => ({ JWT_SECRET: TEST_JWT_SECRET, FLEET_CLOUD_URL: cloud.url });
const small = ['simulate', '--devices', '3', '--size', '1024', '--big-every', '0'];
const prefixOf = (stderr: string) => /enrolling 3 devices \((sim-[a-z0-9]+-)\*\)/.exec(stderr)![1]!;

async function inventory(prefix: string): Promise<{ devices: string[]; backups: number }> {
  const devices = (await cloud.store.listDevices()).map((d) => d.uuid);
  let backups = 0;
  for (let i = 0; i < 3; i++) if (await cloud.store.getBackup(`${prefix}${String(i).padStart(5, '0')}`)) backups++;
  return { devices: devices.filter((u) => u.startsWith(prefix)), backups };
}

describe('fleet simulate cleans up after itself', () => {
  it('removes its devices and their backups at the end; the other devices stay', { timeout: 60_000 }, async () => {
    const r = await runFleet(small, { env: env() });
    expect([r.code, r.stdout]).toEqual([0, expect.stringMatching(/backups: intact=3 lost=0 mixed=0/)]);
    const prefix = prefixOf(r.stderr);
    expect(r.stderr).toContain(`simulate: removed 3 simulated devices (${prefix}*) and their backups\n`);
    expect(await inventory(prefix)).toEqual({ devices: [], backups: 0 });
    expect((await cloud.store.listDevices()).map((d) => d.uuid)).toEqual(['field-unit-1']);
  });

  it('--keep keeps them', { timeout: 60_000 }, async () => {
    const r = await runFleet([...small, '--keep'], { env: env() });
    expect(r.code).toBe(0);
    const prefix = prefixOf(r.stderr);
    expect(r.stderr).toContain(`simulate: kept the devices ${prefix}* and their backups (--keep)\n`);
    expect((await inventory(prefix)).devices).toHaveLength(3);
    expect((await inventory(prefix)).backups).toBe(3);
  });

  it('SIGINT during the storm: it stops, still removes its devices, exit 130', { timeout: 60_000 }, async () => {
    // Arrivals spread over two minutes: most devices are still waiting when the signal comes.
    const child = spawn(process.execPath, [FLEET_JS, 'simulate', '--devices', '3', '--size', '1024', '--big-every', '0', '--spread', '120'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env() } });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    for (let i = 0; i < 600 && !/boot storm: 3 devices over 120 s/.test(stderr); i++) await new Promise((r) => setTimeout(r, 50));
    const prefix = prefixOf(stderr);
    expect((await inventory(prefix)).devices).toHaveLength(3);
    const t0 = Date.now();
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(stderr).toContain('simulate: SIGINT: stopping the storm; the simulated devices will be removed (a second signal leaves them)\n');
    expect(await inventory(prefix)).toEqual({ devices: [], backups: 0 });
  });

  it('--help documents --keep', async () => {
    expect((await runFleet(['simulate', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('--keep keep the simulated devices (sim-…) and their backups in the cloud afterwards (default: removed at the end)');
  });
});
