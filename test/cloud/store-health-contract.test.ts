// The CloudStore contract for device health (docs/device-health.md), on both stores: SQLite and a real
// PostgreSQL server. A report is stored once per (uuid, seq); a device keeps its newest 200; hand-made
// report sequences give the figures the definitions say (device-seconds, the version an unexpected
// reboot is counted against, crash-free devices, update outcomes); daily aggregates outlive the reports
// and are kept 400 days.
import { beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_DAYS_KEPT, HEALTH_REPORTS_KEPT } from '../../cloud/health-definitions.ts';
import type { CloudStore, HealthReport, ReleaseTrack } from '../../cloud/store/types.ts';
import { bootReport, heartbeatReport, updateReport } from '../helpers/health.ts';
import { BOTH_STORES, openedStore } from '../helpers/stores.ts';

const T: ReleaseTrack = { class: 'ctl', productHex: '0x00000001', application: 'ctl' };
/** The tracks of the counting test: its own, and another. */
const OWN: ReleaseTrack = { ...T, productHex: '0x00000003' };
const OTHER: ReleaseTrack = { ...T, productHex: '0x00000004' };
const A = '2026.01.01';
const B = '2026.02.01';
const AT = '2026-06-01T10:00:00.000Z';
const none = { watchdog: 0, abort: 0, panic: 0, brownout: 0, unknown: 0 };
const noCrash = { memory_full: 0, stack_overflow: 0, unhandled_exception: 0, unhandled_rejection: 0, abort: 0, panic: 0 };

describe.each(BOTH_STORES)('%s store, device health', (_name, open) => {
  const opened = openedStore(open);
  let store: CloudStore;
  beforeAll(() => {
    store = opened();
  });

  /** Enrolls devices, each last checking on a track. */
  async function devices(track: ReleaseTrack, ...uuids: string[]) {
    for (const uuid of uuids) await store.putDevice(uuid, 'PEM', AT);
    await store.recordOtaChecks(uuids.map((uuid) => ({ uuid, at: AT, version: A, track, offer: null, outcome: null })));
  }
  const send = async (uuid: string, ...reports: HealthReport[]) => {
    const out = [];
    for (const r of reports) out.push(await store.putHealthReport(uuid, r, AT));
    return out;
  };

  it('stores a report once per seq; an unknown device gets nothing', async () => {
    await devices(T, 'once');
    expect(await store.putHealthReport('once', bootReport(1), AT)).toEqual({ stored: true, unexpectedOn: null });
    expect(await store.putHealthReport('once', bootReport(1, { reason: 'panic' }), AT)).toEqual({ stored: false, unexpectedOn: null });
    expect(await store.putHealthReport('nobody', bootReport(1), AT)).toBeNull();
    expect(await store.listHealthReports('once', { limit: 10 })).toEqual([{ receivedAt: AT, report: bootReport(1) }]);
    expect(await store.listHealthReports('nobody', { limit: 10 })).toEqual([]);
    // The same seq from several requests at once (two instances): stored by exactly one.
    const race = await Promise.all(Array.from({ length: 6 }, () => store.putHealthReport('once', heartbeatReport(2), AT)));
    expect(race.filter((r) => r?.stored)).toHaveLength(1);
  });

  it(`keeps the newest ${HEALTH_REPORTS_KEPT} reports; a pruned seq is still one stored before`, async () => {
    await devices(T, 'many');
    for (let seq = 1; seq <= HEALTH_REPORTS_KEPT + 3; seq++) await store.putHealthReport('many', heartbeatReport(seq, { up: seq * 60 }), AT);
    const kept = await store.listHealthReports('many', { limit: 1000 });
    expect(kept.map((r) => r.report.seq)).toEqual(Array.from({ length: HEALTH_REPORTS_KEPT }, (_, i) => HEALTH_REPORTS_KEPT + 3 - i));
    expect((await store.putHealthReport('many', heartbeatReport(2), AT))?.stored).toBe(false);
    expect((await store.listHealthReports('many', { limit: 3, beforeSeq: 100 })).map((r) => r.report.seq)).toEqual([99, 98, 97]);
    // Its device-seconds are all there: the aggregates outlive the reports.
    expect((await store.listHealthDays('many', { sinceDay: '2026-01-01' }))[0]).toMatchObject({ heartbeats: HEALTH_REPORTS_KEPT + 3, deviceSeconds: (HEALTH_REPORTS_KEPT + 3) * 60 });
  });

  it('counts by the definitions: device-seconds from consecutive uptimes, an unexpected reboot against the version that crashed, outcomes by the last step', async () => {
    await devices(OWN, 'h1', 'h2', 'h3', 'h5');
    await devices(OTHER, 'h4');
    // h1 runs A two hours, updates to B, runs it an hour, is reset by the watchdog, runs another hour.
    await send(
      'h1',
      bootReport(1, { up: 10 }),
      heartbeatReport(2, { up: 3610, block: 30_000, heap_min: 20_000, rssi: -70 }),
      heartbeatReport(3, { up: 7210, block: 25_000, heap_min: 22_000, rssi: -50 }),
      updateReport(4, { up: 7300, version: B, outcome: 'downloading' }),
      updateReport(5, { up: 7400, version: B, outcome: 'installing' }),
      bootReport(6, { fw: B, up: 5, reason: 'software', by: `ota ${B}` }),
      updateReport(7, { fw: B, up: 6, version: B, outcome: 'succeeded' }),
      heartbeatReport(8, { fw: B, up: 3605 }),
    );
    const [watchdog] = await send('h1', bootReport(9, { fw: B, up: 3, reason: 'watchdog' }), heartbeatReport(10, { fw: B, up: 3603 }));
    expect(watchdog).toEqual({ stored: true, unexpectedOn: B });
    // h2 fails once on the hash, tries again; B panics before it is confirmed and the bootloader goes back to A.
    await send('h2', bootReport(1, { up: 0 }), heartbeatReport(2, { up: 3600 }), updateReport(3, { up: 3700, version: B, outcome: 'failed', reason: 'hash_mismatch', detail: 'sha256 differs' }), updateReport(4, { up: 3800, version: B, outcome: 'downloading' }));
    const [rolledBack] = await send('h2', bootReport(5, { up: 2, reason: 'panic', crash: { kind: 'panic', message: 'LoadProhibited' }, rolled_back: { slot: 'ota_1', version: B } }));
    expect(rolledBack).toEqual({ stored: true, unexpectedOn: B });
    // h3's first report is a boot on B that was asked for; h5 only reports a failed update; h4 is on another track.
    await send('h3', bootReport(1, { fw: B, up: 7, reason: 'software' }));
    await send('h5', updateReport(1, { up: 120, version: B, outcome: 'failed', reason: 'no_space' }));
    await send('h4', bootReport(1, { fw: B, up: 50, reason: 'brownout' }));

    const [a, b] = await store.releaseHealth({ track: OWN, versions: [A, B] });
    expect(b).toEqual({
      ...OWN,
      version: B,
      devices: 3,
      crashedDevices: 2,
      deviceSeconds: 5 + 1 + 3599 + 3 + 3600 + 7,
      boots: 3,
      heartbeats: 2,
      reboots: { ...none, watchdog: 1, panic: 1 },
      crashes: { ...noCrash, panic: 1 },
      outcomes: { inProgress: 0, succeeded: 1, failed: { no_space: 1 }, rolledBack: 1 },
    });
    expect(a).toMatchObject({ version: A, devices: 3, crashedDevices: 0, deviceSeconds: 10 + 3600 + 3600 + 90 + 100 + (0 + 3600 + 100 + 100 + 2) + 120, boots: 3, heartbeats: 3, reboots: none });
    // Every release devices reported from, by track; a version nobody reported is zeros when asked for.
    expect((await store.releaseHealth({})).map((f) => [f.productHex, f.version, f.devices])).toEqual([
      ['0x00000001', A, 2],
      ['0x00000003', A, 3],
      ['0x00000003', B, 3],
      ['0x00000004', B, 1],
    ]);
    expect((await store.releaseHealth({ track: OWN, versions: ['2027.01.01'] }))[0]).toMatchObject({ version: '2027.01.01', devices: 0, deviceSeconds: 0, reboots: none });

    const [h1] = await store.listInventory({ uuid: 'h1', limit: 1 });
    expect(h1!.health).toEqual({
      lastReportAt: AT,
      lastBoot: { at: AT, reason: 'watchdog', version: B },
      lastCrash: { at: AT, kind: 'watchdog', message: null, version: B },
      heartbeat: { at: AT, block: 40_000, heapMin: 31_000, rssi: -61 },
      dropped: null,
    });
    const [h2] = await store.listInventory({ uuid: 'h2', limit: 1 });
    expect(h2!.health?.lastCrash).toEqual({ at: AT, kind: 'panic', message: 'LoadProhibited', version: B });
    const days = await store.listHealthDays('h1', { sinceDay: '2026-06-01' });
    expect(days.map((d) => [d.version, d.reports, d.deviceSeconds, d.heapMin, d.blockMin, d.rssiMin])).toEqual([
      [B, 5, 5 + 1 + 3599 + 3 + 3600, 31_000, 40_000, -61],
      [A, 5, 10 + 3600 + 3600 + 90 + 100, 20_000, 25_000, -70],
    ]);
    expect(await store.healthTotals({ crashedSince: '2026-06-01T00:00:00.000Z', lowHeapBelow: 16_384 })).toMatchObject({ reporting: 5 + 2, crashed: 3, lowHeap: 0, dropped: 0 });
  });

  it('an out-of-order report (older seq than the newest) is kept and counted, but credits no time and changes no state', async () => {
    await devices(T, 'late');
    await send('late', bootReport(1, { up: 1 }), heartbeatReport(3, { up: 7201, block: 9_000 }));
    expect(await send('late', heartbeatReport(2, { up: 3601, block: 1_000, dropped: 5 }))).toEqual([{ stored: true, unexpectedOn: null }]);
    const [d] = await store.listHealthDays('late', { sinceDay: '2026-06-01' });
    expect(d).toMatchObject({ reports: 3, heartbeats: 2, deviceSeconds: 7201, blockMin: 1_000 });
    expect((await store.listInventory({ uuid: 'late', limit: 1 }))[0]!.health).toMatchObject({ heartbeat: { block: 9_000 }, dropped: null });
  });

  it(`keeps daily aggregates ${HEALTH_DAYS_KEPT} days: older ones go at a device's first report of a day`, async () => {
    await devices(T, 'old');
    await store.putHealthReport('old', bootReport(1), '2025-01-01T08:00:00.000Z');
    await store.putHealthReport('old', heartbeatReport(2, { up: 3604 }), '2025-01-02T08:00:00.000Z');
    expect((await store.listHealthDays('old', { sinceDay: '2000-01-01' })).map((d) => d.day)).toEqual(['2025-01-02', '2025-01-01']);
    await store.putHealthReport('old', heartbeatReport(3, { up: 7204 }), new Date(Date.parse('2025-01-01T08:00:00Z') + (HEALTH_DAYS_KEPT + 0.5) * 86_400_000).toISOString());
    expect((await store.listHealthDays('old', { sinceDay: '2000-01-01' })).map((d) => d.day)).toEqual(['2026-02-05', '2025-01-02']);
  });

  it('a removed device takes its reports, state, days and outcomes with it', async () => {
    expect(await store.deleteDevice('h5')).toBe(true);
    expect((await store.releaseHealth({ track: OWN, versions: [B] }))[0]!.outcomes.failed).toEqual({});
    expect(await store.listHealthReports('h5', { limit: 10 })).toEqual([]);
  });
});
