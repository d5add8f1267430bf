// A job killed without releasing (SIGKILL: no handler runs) frees its places: its lease on them ends
// and the exporter's warden releases them and cancels their reservations, within the 60 s.
// Then a person takes both places with `fleet farm reserve` and gives them back with `fleet farm release`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LEASE_SECONDS } from '../../harness/farm/tags.ts';
import { isFree, placesNow, spawnFleet, until, useFarm } from '../helpers/farm.ts';
import { runFleet } from '../helpers/fleet-cli.ts';

const PLACES = ['lease-source', 'lease-target'];
const farm = useFarm('lease');
const report = mkdtempSync(join(tmpdir(), 'farm-lease-'));

afterAll(() => {
  rmSync(report, { recursive: true, force: true });
});

describe('a farm job that dies', () => {
  it(`frees its places within 60 s (its lease of ${LEASE_SECONDS} s ends)`, { timeout: 240_000 }, async () => {
    const job = spawnFleet(['bench', '--farm', farm.coordinator.address, '--place-tags', 'role=controller,build=debug', '--place-tags', 'role=controller,build=production', '--scenario', 'controller-ok-backup', '--no-figures', '--report', report, '--farm-wait', '120']);
    const holder = `/fleet-job-${job.child.pid}`;
    try {
      await until('the job holds both places', async () => {
        if (job.child.exitCode !== null) throw new Error(`the job ended before it held its places:\n${job.stderr()}`);
        const places = await placesNow(farm.coordinator.address);
        return PLACES.every((n) => places.get(n)?.acquired?.endsWith(holder) && places.get(n)?.tags?.lease);
      }, 120_000, 100);
    } finally {
      job.child.kill('SIGKILL');
    }
    const killed = Date.now();
    await job.exited;
    // Still held right after the kill: nothing gave them back but the lease's end.
    const after = await placesNow(farm.coordinator.address);
    expect(PLACES.filter((n) => after.get(n)?.acquired?.endsWith(holder))).toEqual(PLACES);
    await until('the places are free again', async () => {
      const places = await placesNow(farm.coordinator.address);
      return PLACES.every((n) => isFree(places.get(n)));
    }, 60_000, 250);
    const seconds = (Date.now() - killed) / 1000;
    console.log(`farm lease: places freed ${seconds.toFixed(1)} s after the job was killed`);
    expect(seconds).toBeLessThan(60);
    expect(farm.exporter.stderr()).toMatch(/warden: lease-source: held by \S+ past its lease: releasing it/);
  });

  it('gives its places back at once when stopped with SIGTERM (no lease needed)', { timeout: 240_000 }, async () => {
    const job = spawnFleet(['bench', '--farm', farm.coordinator.address, '--place-tags', 'role=controller,build=debug', '--place-tags', 'role=controller,build=production', '--scenario', 'controller-ok-backup', '--no-figures', '--report', report, '--farm-wait', '120']);
    const holder = `/fleet-job-${job.child.pid}`;
    try {
      await until('the job holds both places', async () => {
        if (job.child.exitCode !== null) throw new Error(`the job ended before it held its places:\n${job.stderr()}`);
        const places = await placesNow(farm.coordinator.address);
        return PLACES.every((n) => places.get(n)?.acquired?.endsWith(holder));
      }, 120_000, 100);
    } finally {
      job.child.kill('SIGTERM');
    }
    const ended = await job.exited;
    expect(ended.code, job.stderr()).toBe(143);
    // Free when it has ended: given back by the job, not by the warden after LEASE_SECONDS.
    const places = await placesNow(farm.coordinator.address);
    expect(PLACES.filter((n) => !isFree(places.get(n)))).toEqual([]);
    expect(farm.exporter.stderr()).not.toMatch(new RegExp(`held by \\S+${holder} past its lease`));
  });

  it('leaves the places to the next holder: fleet farm reserve, then fleet farm release', { timeout: 120_000 }, async () => {
    const reserve = await runFleet(['farm', 'reserve', '--coordinator', farm.coordinator.address, '--place-tags', 'role=controller,build=debug', '--place-tags', 'role=controller,build=production', '--wait', '60'], { env: { LG_USERNAME: 'alice' }, timeoutMs: 110_000 });
    expect(reserve.code, reserve.stderr).toBe(0);
    expect(reserve.stdout).toMatch(/^place lease-source rfc2217=rfc2217:\/\/127\.0\.0\.1:\d+ reservation=\w+$/m);
    const held = await placesNow(farm.coordinator.address);
    expect(PLACES.map((n) => held.get(n)?.acquired?.split('/')[1])).toEqual(['alice', 'alice']);
    // A person's places carry no lease: the warden leaves them held.
    expect(PLACES.filter((n) => held.get(n)?.tags?.lease)).toEqual([]);
    const release = await runFleet(['farm', 'release', ...PLACES, '--coordinator', farm.coordinator.address], { env: { LG_USERNAME: 'alice' } });
    expect(release.code, release.stderr).toBe(0);
    expect(release.stdout).toBe('released lease-source\nreleased lease-target\n');
    const places = await placesNow(farm.coordinator.address);
    expect(PLACES.filter((n) => !isFree(places.get(n)))).toEqual([]);
  });
});
