// The two-board provisioning scenario run through a board farm: labgrid's coordinator from the shared
// source, `fleet farm export` publishing a virtual rig's boards as NetworkSerialPort places, and
// `fleet bench --farm` reserving them by tags, health-checking them, running the scenario on them
// over their RFC 2217 ports and releasing them at the end. Then the exporter withdraws on SIGTERM.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isFree, placesNow, resourcesNow, until, useFarm } from '../helpers/farm.ts';
import { runFleet } from '../helpers/fleet-cli.ts';

const farm = useFarm('bench');
const report = mkdtempSync(join(tmpdir(), 'farm-bench-'));

afterAll(() => {
  rmSync(report, { recursive: true, force: true });
});

describe('fleet bench --farm', () => {
  it('publishes each board as a place tagged with its chip, role, build and MAC', async () => {
    const places = await placesNow(farm.coordinator.address);
    expect([...places.keys()].sort()).toEqual(['bench-source', 'bench-target']);
    expect(places.get('bench-source')!.tags).toMatchObject({ chip: 'esp32s3', role: 'controller', build: 'debug', mac: '24:0a:c4:10:00:60', bench: 'bench', rig: 'farm-two-board', health: 'ok' });
    expect(places.get('bench-target')!.tags).toMatchObject({ chip: 'esp32s3', role: 'controller', build: 'production', mac: '24:0a:c4:10:00:70', health: 'ok' });
    expect((await resourcesNow(farm.coordinator.address)).sort()).toEqual(['bench/source/NetworkSerialPort/NetworkSerialPort', 'bench/target/NetworkSerialPort/NetworkSerialPort']);
  });

  it('runs the two-board provisioning scenario on reserved places, twice, and releases them; the table counts per board', { timeout: 300_000 }, async () => {
    const run = await runFleet(
      ['bench', '--farm', farm.coordinator.address, '--place-tags', 'role=controller,build=debug', '--place-tags', 'role=controller,build=production', '--scenario', 'controller-ok-backup', '--no-figures', '--report', report, '--farm-wait', '120', '--repeat', '2'],
      { timeoutMs: 280_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^controller-ok-backup\s+passed 2\/2\s+flakes 0\s+failed 0/m);
    expect(run.stdout).toContain('per board:\n  bench-source controller-ok-backup  passed 2  flakes 0  failed 0\n  bench-target controller-ok-backup  passed 2  flakes 0  failed 0\n');
    expect(run.stderr).toMatch(/farm: acquired bench-source \(rfc2217:\/\/127\.0\.0\.1:\d+\)/);
    expect(run.stderr).toMatch(/farm: acquired bench-target \(rfc2217:\/\/127\.0\.0\.1:\d+\)/);
    // Released as the job ended: nothing held, reserved or leased.
    const places = await placesNow(farm.coordinator.address);
    expect(['bench-source', 'bench-target'].filter((n) => !isFree(places.get(n)))).toEqual([]);
  });

  it('refuses tags no place has, naming what the farm has', async () => {
    const run = await runFleet(['bench', '--farm', farm.coordinator.address, '--place-tags', 'role=client', '--scenario', 'client-provisioning', '--no-figures', '--report', report]);
    expect(run.code).toBe(13);
    expect(run.stderr).toContain('no place on the coordinator at');
    expect(run.stderr).toContain('role=client');
  });

  it('withdraws its boards on SIGTERM: the coordinator lists no resource of it, its places marked offline', { timeout: 60_000 }, async () => {
    const ended = await farm.exporter.stop();
    expect(ended.code).toBe(0);
    expect(farm.exporter.stderr()).toMatch(/SIGTERM: withdrawing/);
    await until('the coordinator drops the exporter\'s resources', async () => (await resourcesNow(farm.coordinator.address)).length === 0, 20_000);
    const places = await placesNow(farm.coordinator.address);
    expect(places.get('bench-source')!.tags?.health).toBe('offline');
  });
});
