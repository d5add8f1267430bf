// A rollout's health gate (docs/staged-rollouts.md, docs/device-health.md): a rollout with a margin
// pauses itself in the request that ingests the boot report making its release's unexpected reboots per
// 1,000 device-hours exceed the previous RELEASED version's by more than the margin, not before the
// release has run its minimum device-hours; the audit log says why (actor system, the two rates), a
// WARNING is logged, and reports ingested at once through two instances pause it once. The release's
// health (the admin API) shows the same figures and the gate.
import type { KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../cloud/store/postgres.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { CloudStore } from '../../cloud/store/types.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { bootReport, heartbeatReport, postReport } from '../helpers/health.ts';
import { freshDatabase } from '../helpers/postgres.ts';

const TRACK = '/admin/firmware/ctl/0x00000071/ctl';
const A = '2026.01.01';
const B = '2026.02.01';

describe.each([
  ['SQLite, one instance', async () => [new SqliteStore(':memory:')] as CloudStore[]],
  ['PostgreSQL, two instances', async () => {
    const url = await freshDatabase();
    return [await PostgresStore.connect(url), await PostgresStore.connect(url)] as CloudStore[];
  }],
])('%s', (_name, open) => {
  let stores: CloudStore[];
  let one: TestCloud;
  let two: TestCloud;
  const clock = Date.parse('2026-07-01T09:00:00Z');
  const keys = new Map<string, KeyObject>();
  const seqs = new Map<string, number>();

  beforeAll(async () => {
    stores = await open();
    one = await startTestCloud({ store: stores[0]!, now: () => clock, env: { OTA_CACHE_TTL_MS: '0' } });
    two = stores[1] ? await startTestCloud({ store: stores[1], now: () => clock, env: { OTA_CACHE_TTL_MS: '0' } }) : one;
    expect((await one.admin('PUT', `${TRACK}/${A}`, { no_image: true })).status).toBe(201);
    const b = await one.adminJson('PUT', `${TRACK}/${B}`, { no_image: true, rollout: { percent: 100, groups: [], health_margin: 100, health_min_device_hours: 3 } });
    expect(b.status).toBe(201);
    // Each device checks for an update once, naming itself: the inventory puts it on the track.
    for (const [uuid, version] of [['gate-a1', A], ['gate-b1', B], ['gate-b2', B], ['gate-b3', B]] as const) {
      keys.set(uuid, (await one.enroll(uuid)).privateKey);
      await fetch(`${one.url}/ota/ctl/0x00000071/ctl?current_version=${version}`, { headers: { 'x-device-uuid': uuid } });
    }
    await one.cloud.inventory.flush();
  });
  afterAll(async () => {
    await one.close();
    if (two !== one) await two.close();
    for (const s of stores) await s.close();
  });

  /** The device's next report (its own seq), through one instance or the other. */
  const send = (uuid: string, make: (seq: number) => object, via: TestCloud = one) => {
    const seq = (seqs.get(uuid) ?? 0) + 1;
    seqs.set(uuid, seq);
    return postReport(via.url, keys.get(uuid)!, uuid, make(seq), { nowMs: clock });
  };
  const rollout = async () => (await one.adminJson('GET', `${TRACK}/${B}/rollout`)).body;
  const healthPauses = async () => (await one.store.listAudit({ limit: 100 })).filter((e) => e.action === 'pauseRolloutOnHealth');

  it('judges nothing before the minimum device-hours: unexpected reboots on a young release leave it active', async () => {
    // The previous release ran 10 device-hours without an unexpected reboot.
    await send('gate-a1', (s) => bootReport(s, { fw: A, up: 0 }));
    expect((await send('gate-a1', (s) => heartbeatReport(s, { fw: A, up: 36_000 }))).status).toBe(201);
    await send('gate-b1', (s) => bootReport(s, { fw: B, up: 0 }));
    await send('gate-b1', (s) => heartbeatReport(s, { fw: B, up: 3600 }));
    expect((await send('gate-b1', (s) => bootReport(s, { fw: B, up: 2, reason: 'watchdog' }))).status).toBe(201);
    expect(await rollout()).toMatchObject({ state: 'active', health_margin: 100, health_min_device_hours: 3 });
    const health = (await one.adminJson('GET', `${TRACK}/${B}/health`)).body;
    expect(health).toMatchObject({ version: B, devices: 1, unexpected_reboots: 1, previous: { version: A, unexpected_reboots: 0, device_hours: 10 }, gate: { state: 'active', judging: false, over: false } });
    expect(health.device_hours).toBeCloseTo(3602 / 3600, 2);
    expect(await healthPauses()).toEqual([]);
  });

  it('pauses in the request whose boot report takes the rate over the margin once judged, and the audit log says why', async () => {
    // Two more device-hours without a reboot: judged now (3 h), 1 in 3 h = 333 per 1,000 h, over 0 + 100…
    await send('gate-b2', (s) => bootReport(s, { fw: B, up: 0 }));
    await send('gate-b2', (s) => heartbeatReport(s, { fw: B, up: 7200 }));
    // …but a heartbeat never raises the rate: it is judged at the next unexpected reboot.
    expect((await rollout()).state).toBe('active');
    const crash = await send('gate-b2', (s) => bootReport(s, { fw: B, up: 1, reason: 'abort', crash: { kind: 'memory_full', message: 'memory full' } }), two);
    expect(crash.status).toBe(201);
    const paused = await rollout();
    expect(paused.state).toBe('paused');
    expect(paused.paused_reason).toMatch(/^health: 666\.5 unexpected reboots per 1,000 device-hours \(over 3\.0 device-hours\) against 0\.0 on 2026\.01\.01, the previous release; margin 100$/);
    const [entry, ...more] = await healthPauses();
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ actor: 'system', via: 'system', status: 200, path: `${TRACK}/${B}/rollout`, details: { reason: paused.paused_reason, previous_version: A, previous_rate: 0, margin: 100, min_device_hours: 3 } });
    expect(entry!.details!.rate).toBeCloseTo((2 * 1000 * 3600) / (3600 + 2 + 7200 + 1), 6);
    expect(two.logs.find((l) => l.msg === 'rollout paused on health')).toMatchObject({ level: 'WARNING', version: B, previous_version: A });
    expect((await one.adminJson('GET', `${TRACK}/${B}/health`)).body.gate).toMatchObject({ state: 'paused', judging: true, over: true, paused_reason: paused.paused_reason });
  });

  it('resumed while still over, reports ingested at once through both instances pause it once', async () => {
    expect((await one.admin('POST', `${TRACK}/${B}/rollout/resume`)).status).toBe(200);
    await send('gate-b3', (s) => bootReport(s, { fw: B, up: 0 }));
    const crashes = await Promise.all([
      send('gate-b1', (s) => bootReport(s, { fw: B, up: 1, reason: 'panic' }), one),
      send('gate-b2', (s) => bootReport(s, { fw: B, up: 1, reason: 'brownout' }), two),
      send('gate-b3', (s) => bootReport(s, { fw: B, up: 1, reason: 'unknown' }), two),
    ]);
    expect(crashes.map((c) => c.status)).toEqual([201, 201, 201]);
    expect((await rollout()).state).toBe('paused');
    expect(await healthPauses()).toHaveLength(2);
  });

  it('a rollout without a margin, or a boot that was asked for, never pauses on health', async () => {
    expect((await one.adminJson('PUT', `${TRACK}/${B}/rollout`, { health_margin: null })).body.health_margin).toBeNull();
    expect((await one.admin('POST', `${TRACK}/${B}/rollout/resume`)).status).toBe(200);
    expect((await send('gate-b1', (s) => bootReport(s, { fw: B, up: 1, reason: 'watchdog' }))).status).toBe(201);
    expect((await send('gate-b1', (s) => bootReport(s, { fw: B, up: 1, reason: 'software', by: 'console' }))).status).toBe(201);
    expect((await rollout()).state).toBe('active');
    expect(await healthPauses()).toHaveLength(2);
  });
});
