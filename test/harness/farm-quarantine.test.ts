// Quarantine: a board whose app no longer boots (its app slots erased through its RFC 2217 port by
// someone who held its place) fails the health check of the next job that gets it; the job marks its
// place quarantined with the reason and waits for another; the exporter refuses the place to anyone
// at once; it is repaired (the rig's image flashed again, reset, checked) and handed out again only
// after a passing check, and the waiting job then gets it.
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { ClientSession } from '../../harness/farm/client.ts';
import { FarmLease } from '../../harness/farm/reserve.ts';
import { flashBoard } from '../../harness/flash/flash-board.ts';
import { openTransport } from '../../harness/transport/open.ts';
import { placesNow, until, useFarm } from '../helpers/farm.ts';

const TARGET = 'quar-target';
const farm = useFarm('quar');

/** rfc2217://host:port → host and port. */
function hostPort(url: string): { host: string; port: number } {
  const m = /^rfc2217:\/\/([^:]+):(\d+)$/.exec(url)!;
  return { host: m[1]!, port: Number(m[2]) };
}

describe('a board that fails its health check', () => {
  it('is quarantined, refused at once, repaired and handed out again only after a passing check', { timeout: 300_000 }, async () => {
    // A person takes the place and breaks the board: both app slots' first sectors erased.
    const tech = await ClientSession.start(farm.coordinator.address, 'bench-host/tech');
    let url: string;
    try {
      await tech.call('AcquirePlace', { placename: TARGET });
      await tech.sync();
      url = tech.resourcesOf(tech.placesByName.get(TARGET)!).map((r) => `rfc2217://${r.params!.host!.string_value}:${r.params!.port!.int_value ?? r.params!.port!.uint_value}`)[0]!;
      const t = await openTransport(url, 115200);
      try {
        const slots = productPartitions().filter((p) => p.name === 'ota_0' || p.name === 'ota_1');
        await flashBoard({ transport: t, plan: { files: [], erase: slots.map((p) => ({ address: p.offset, size: 0x1000, why: p.name })) }, productTable: productPartitions(), baudRate: 115200, chip: 'esp32s3', resetMethod: 'classic', reset: false });
      } finally {
        await t.disconnect().catch(() => undefined);
      }
      await tech.call('ReleasePlace', { placename: TARGET });
    } finally {
      tech.close();
    }

    // A job wants the production controller. Its check fails; while the place is quarantined the test
    // keeps the board's port busy (one client at a time), so the first repair fails too and the
    // refusal can be watched for as long as needed.
    const lines: string[] = [];
    let busy: Socket | undefined;
    const job = FarmLease.take({
      coordinator: farm.coordinator.address,
      places: [{ role: 'controller', build: 'production' }],
      waitMs: 240_000,
      say: (line) => {
        lines.push(line);
        if (/quarantining quar-target/.test(line) && !busy) busy = connect(hostPort(url));
      },
    });
    job.catch(() => undefined);
    const quarantined = await until('the place is quarantined and given back', async () => {
      const p = (await placesNow(farm.coordinator.address)).get(TARGET);
      return p?.tags?.health === 'quarantined' && !p.acquired && p;
    }, 120_000, 100);
    const failure = lines.find((l) => /quarantining/.test(l))!;
    expect(failure).toMatch(/health check of quar-target on rfc2217:\/\/127\.0\.0\.1:\d+ failed: board quar-target did not boot: (invalid header|E \(\d+\) boot: No bootable app)/);
    expect(quarantined.comment).toMatch(/^quarantined by \S+\/fleet-job-\d+ at \S+: health check of quar-target/);

    // Refused to anyone within 5 s of the mark (at once: the exporter follows the place's tags).
    const other = await ClientSession.start(farm.coordinator.address, 'bench-host/bob');
    try {
      const t0 = Date.now();
      await expect(other.call('AcquirePlace', { placename: TARGET })).rejects.toThrow(/Failed to acquire resources for place quar-target/);
      expect(Date.now() - t0).toBeLessThan(5_000);
    } finally {
      other.close();
    }
    await until('the first repair fails (the port is busy)', () => /warden: quar-target: repair failed/.test(farm.exporter.stderr()), 120_000);
    expect((await placesNow(farm.coordinator.address)).get(TARGET)?.tags?.health).toBe('quarantined');

    // The port free again: the next repair reflashes the rig's image, the check passes, the job gets it.
    busy!.destroy();
    const lease = await job;
    try {
      expect(farm.exporter.stderr()).toMatch(/warden: quar-target: repaired, passed its health check: handed out again/);
      expect(lease.held.map((h) => [h.place, h.identity.status.role, h.identity.status.build])).toEqual([[TARGET, 'controller', 'production']]);
      const p = (await placesNow(farm.coordinator.address)).get(TARGET)!;
      expect(p.tags?.health).toBe('ok');
      expect(p.comment ?? '').toBe('');
    } finally {
      await lease.release();
    }
  });
});
