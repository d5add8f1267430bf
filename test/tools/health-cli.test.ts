// The health commands run as a real process against a cloud on a loopback port (docs/device-health.md):
// `fleet device health <uuid>` (the timeline), `fleet firmware health …` (a release's figures and its
// rollout's health gate), `fleet device list --crashed-days N --low-heap [BYTES]`, and `fleet rollout set
// --health-margin N --health-min-hours H`; a refusal exits 1 with the cloud's code, a bad option 2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { runFleet } from '../helpers/fleet-cli.ts';
import { bootReport, heartbeatReport, postReport, updateReport } from '../helpers/health.ts';

const TRACK = ['ctl', '0x00000081', 'ctl'];
let cloud: TestCloud;
const fleet = (args: string[]) => runFleet(args, { env: { JWT_SECRET: TEST_JWT_SECRET, FLEET_CLOUD_URL: cloud.url } });

beforeAll(async () => {
  cloud = await startTestCloud();
  expect((await cloud.admin('PUT', `/admin/firmware/${TRACK.join('/')}/2026.01.01`, { no_image: true })).status).toBe(201);
  expect((await cloud.admin('PUT', `/admin/firmware/${TRACK.join('/')}/2026.02.01`, { no_image: true, rollout: { percent: 50 } })).status).toBe(201);
  for (const uuid of ['cli-h-1', 'cli-h-2']) {
    const { privateKey } = await cloud.enroll(uuid);
    await fetch(`${cloud.url}/ota/${TRACK.join('/')}?current_version=2026.02.01`, { headers: { 'x-device-uuid': uuid } });
    const reports =
      uuid === 'cli-h-1'
        ? [
            updateReport(1, { version: '2026.02.01', outcome: 'failed', reason: 'hash_mismatch', detail: 'sha256 differs' }),
            bootReport(2, { fw: '2026.02.01', reason: 'software', by: 'ota 2026.02.01', up: 1 }),
            bootReport(3, { fw: '2026.02.01', reason: 'abort', crash: { kind: 'unhandled_rejection', message: 'TypeError: x is undefined', where: 'core/cloud/backup.ts:41' }, up: 2 }),
            heartbeatReport(4, { fw: '2026.02.01', up: 7202, block: 9_500, heap_min: 8_000, rssi: -72, dropped: 1 }),
          ]
        : [bootReport(1, { fw: '2026.02.01', up: 1 }), heartbeatReport(2, { fw: '2026.02.01', up: 3601, block: 60_000 })];
    for (const r of reports) expect((await postReport(cloud.url, privateKey, uuid, r)).status).toBe(201);
  }
  await cloud.cloud.inventory.flush();
});
afterAll(() => cloud.close());

describe('fleet device health', () => {
  it("prints a device's timeline: its state, boots with reasons, crashes with their summary, heartbeats, updates, its days", async () => {
    const r = await fleet(['device', 'health', 'cli-h-1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^device cli-h-1\n  last report  \S+\n  last boot    \S+  abort on 2026\.02\.01\n  last crash   \S+  unhandled_rejection on 2026\.02\.01: TypeError: x is undefined\n  heap         largest free block 9500 bytes, lowest free 8000 bytes/);
    expect(r.stdout).toMatch(/^SEQ +RECEIVED +KIND +FW +WHAT$/m);
    expect(r.stdout).toMatch(/^4 +\d{4}-\d\d-\d\d \d\d:\d\d +heartbeat +2026\.02\.01 +up 2 h 0 min, block 9500, heap_min 8000, rssi -72 dBm, reboots 0, dropped 1$/m);
    expect(r.stdout).toMatch(/^3 +\S+ \S+ +boot +2026\.02\.01 +abort: unhandled_rejection: TypeError: x is undefined \(core\/cloud\/backup\.ts:41\); ota_0 valid, boot 3$/m);
    expect(r.stdout).toMatch(/^2 +\S+ \S+ +boot +2026\.02\.01 +software by ota 2026\.02\.01; ota_0 valid, boot 2$/m);
    expect(r.stdout).toMatch(/^1 +\S+ \S+ +update +2026\.01\.01 +2026\.02\.01 failed: hash_mismatch \(sha256 differs\)$/m);
    expect(r.stdout).toMatch(/^DAY +VERSION +BOOTS +UNEXPECTED +CRASHES +HEARTBEATS +DEVICE-HOURS/m);
    expect(r.stdout).toMatch(/^\d{4}-\d\d-\d\d +2026\.02\.01 +2 +abort 1 +unhandled_rejection 1 +1 +2\.0 +9500 +8000 +-72$/m);
    const json = JSON.parse((await fleet(['device', 'health', 'cli-h-1', '--json', '--limit', '1'])).stdout);
    expect(json).toEqual((await cloud.adminJson('GET', '/admin/devices/cli-h-1/health?limit=1')).body);
    const missing = await fleet(['device', 'health', 'nobody']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/404 device_not_found/);
  });

  it('device show ends with the health; device list --crashed-days and --low-heap filter and show the health columns', async () => {
    expect((await fleet(['device', 'show', 'cli-h-2'])).stdout).toMatch(/\n  last crash   -\n  heap         largest free block 60000 bytes/);
    const crashed = await fleet(['device', 'list', '--search', 'cli-h', '--crashed-days', '1']);
    expect(crashed.stdout).toMatch(/^UUID +VERSION +LAST BOOT +LAST CRASH +BLOCK +HEAP MIN +RSSI +DROPPED\ncli-h-1 +2026\.02\.01 +\S+ \S+ abort +\S+ \S+ unhandled_rejection +9500 +8000 +-72 +1\n$/);
    expect((await fleet(['device', 'list', '--search', 'cli-h', '--low-heap'])).stdout).toMatch(/^UUID[^\n]*\ncli-h-1 [^\n]*\n$/);
    expect((await fleet(['device', 'list', '--search', 'cli-h', '--low-heap', '65536'])).stdout).toMatch(/^UUID[^\n]*\ncli-h-1 [^\n]*\ncli-h-2 +2026\.02\.01 +\S+ \S+ power_on +- +60000 /);
  });
});

describe('fleet firmware health and the rollout health gate', () => {
  it("prints a release's figures against the previous release, and its gate as the rollout sets it", async () => {
    const set = await fleet(['rollout', 'set', ...TRACK, '2026.02.01', '--health-margin', '2.5', '--health-min-hours', '24']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/\n  health gate: pauses when unexpected reboots per 1,000 device-hours exceed the previous release's by more than 2\.5, from 24 device-hours\n/);
    const r = await fleet(['firmware', 'health', ...TRACK, '2026.02.01']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        'health of ctl/0x00000081/ctl 2026.02.01',
        '  devices             2 (crash-free 50 %)',
        '  device-hours        3.0',
        '  unexpected reboots  1 (333.2 per 1,000 device-hours): abort 1',
        '  crashes             unhandled_rejection 1',
        '  boots, heartbeats   3, 2',
        '  updates to it       0 succeeded, 0 rolled back, failed: hash_mismatch 1, 0 in progress',
        '  previous release    2026.01.01: 1 devices, 0.0 device-hours, 0 unexpected reboots (0.0 per 1,000 device-hours)',
        '  health gate         rollout active; margin 2.5 per 1,000 device-hours over the previous release: not judged before 24 device-hours',
        '',
      ].join('\n'),
    );
    expect(JSON.parse((await fleet(['firmware', 'health', ...TRACK, '2026.02.01', '--json'])).stdout)).toMatchObject({ devices: 2, gate: { health_margin: 2.5, health_min_device_hours: 24, judging: false } });
    const off = await fleet(['rollout', 'set', ...TRACK, '2026.02.01', '--health-margin', 'off', '--json']);
    expect(JSON.parse(off.stdout)).toMatchObject({ health_margin: null, health_min_device_hours: 24 });
    const bad = await fleet(['rollout', 'set', ...TRACK, '2026.02.01', '--health-margin', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/must be a number \(unexpected reboots per 1,000 device-hours\) or off: lots/);
    expect((await fleet(['firmware', 'health', ...TRACK, '2031.01.01'])).stderr).toMatch(/404 release_not_found/);
  });
});
