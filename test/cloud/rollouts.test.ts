// Staged rollouts (docs/staged-rollouts.md): off by default (the spec's answers do not change); a
// rollout reaches a stable share of devices (from their UUID) or named groups, raised by hand or on a
// schedule; a device it does not reach is answered as if the release did not exist yet, so it neither
// gets it early nor skips it; outcomes are counted from the devices' next checks, and the rollout
// pauses by itself at its error threshold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { runFleet } from '../helpers/fleet-cli.ts';

let cloud: TestCloud;
let clock = Date.parse('2026-06-01T12:00:00Z');
beforeAll(async () => {
  cloud = await startTestCloud({ now: () => clock });
});
afterAll(() => cloud.close());

const trackOf = (product: string) => `/admin/firmware/ctl/${product}/ctl`;

async function check(product: string, current: string, uuid?: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${cloud.url}/ota/ctl/${product}/ctl?current_version=${current}`, { headers: uuid ? { 'x-device-uuid': uuid } : {} });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), text };
}

async function release(product: string, version: string, rollout?: Record<string, unknown>) {
  const r = await cloud.adminJson('PUT', `${trackOf(product)}/${version}`, { url: `https://cdn.example/${version}.bin`, size: 100, sha256: 'ab'.repeat(32), ...(rollout ? { rollout } : {}) });
  expect(r.status).toBe(201);
}

async function enroll(uuid: string, groups: string[] = []) {
  await cloud.enroll(uuid);
  if (groups.length) expect((await cloud.adminJson('PUT', `/admin/devices/${uuid}/groups`, { groups })).status).toBe(200);
}

describe('without a rollout', () => {
  it('a device that names itself gets exactly the answer of one that does not, for every rule', async () => {
    const p = '0x00000010';
    for (const v of ['2026.01.01', '2026.02.01', '2026.03.01']) await release(p, v);
    await cloud.admin('POST', `${trackOf(p)}/2026.02.01/revoke`);
    await cloud.admin('POST', `${trackOf(p)}/2026.03.01/revoke`);
    await enroll('plain-1');
    for (const cv of ['2025.01.01', '2026.01.01', '2026.02.01', '2026.03.01', '2027.01.01']) {
      const anonymous = await check(p, cv);
      const named = await check(p, cv, 'plain-1');
      expect(named.status, cv).toBe(anonymous.status);
      expect(named.text, cv).toBe(anonymous.text);
    }
    const list = await fetch(`${cloud.url}/ota/ctl/${p}/ctl`, { headers: { 'x-device-uuid': 'plain-1' } });
    expect(((await list.json()) as any).versions.map((v: any) => v.version)).toEqual(['2026.01.01']);
  });
});

describe('a rollout by group', () => {
  const p = '0x00000020';
  beforeAll(async () => {
    await release(p, '2026.01.01');
    await release(p, '2026.02.01', { percent: 0, groups: ['beta'] });
    await enroll('grp-in', ['beta']);
    await enroll('grp-out', ['lab']);
  });

  it('offers the release to the group only; others, and devices that do not name themselves, stay where the spec would put them without it', async () => {
    expect((await check(p, '2026.01.01', 'grp-in')).body.version).toBe('2026.02.01');
    expect((await check(p, '2026.01.01', 'grp-out')).body.version).toBe('2026.01.01');
    expect((await check(p, '2026.01.01')).body.version).toBe('2026.01.01');
    // A device on a version older than every release is held too: 404 current_version_unknown, as
    // with no newer release (docs/ota-unknown-version.md), never the staged one.
    const older = await check(p, '2025.06.01', 'grp-out');
    expect(older.body.version).toBe('2026.01.01');
  });

  it('never lets a device skip a staged release: a newer release for everyone waits behind it', async () => {
    await release(p, '2026.03.01');
    expect((await check(p, '2026.01.01', 'grp-out')).body.version).toBe('2026.01.01');
    expect((await check(p, '2026.01.01', 'grp-in')).body.version).toBe('2026.02.01');
    // A device past the staged release goes on as the spec says.
    expect((await check(p, '2026.02.01', 'grp-out')).body.version).toBe('2026.03.01');
  });

  it('reaches a device added to the group, and everyone once ended', async () => {
    expect((await cloud.adminJson('PUT', '/admin/devices/grp-out/groups', { groups: ['beta'] })).status).toBe(200);
    expect((await check(p, '2026.01.01', 'grp-out')).body.version).toBe('2026.02.01');
    expect((await cloud.admin('DELETE', `${trackOf(p)}/2026.02.01/rollout`)).status).toBe(204);
    expect((await check(p, '2026.01.01')).body.version).toBe('2026.02.01');
    expect((await cloud.admin('DELETE', `${trackOf(p)}/2026.02.01/rollout`)).status).toBe(404);
  });
});

describe('a rollout by percentage', () => {
  const p = '0x00000030';
  const uuids = Array.from({ length: 400 }, (_, i) => `pct-${String(i).padStart(4, '0')}`);
  const reached = async () => {
    const out = new Set<string>();
    for (const u of uuids) if ((await check(p, '2026.01.01', u)).body.version === '2026.02.01') out.add(u);
    return out;
  };

  it('reaches a stable share of devices, and raising it only adds devices', async () => {
    await release(p, '2026.01.01');
    await release(p, '2026.02.01', { percent: 25 });
    const first = await reached();
    expect(first.size).toBeGreaterThan(400 * 0.15);
    expect(first.size).toBeLessThan(400 * 0.35);
    expect(await reached()).toEqual(first); // stable per device
    const raised = await cloud.adminJson('PUT', `${trackOf(p)}/2026.02.01/rollout`, { percent: 60 });
    expect(raised.status).toBe(200);
    expect(raised.body).toMatchObject({ percent: 60, effective_percent: 60, state: 'active' });
    const second = await reached();
    expect(second.size).toBeGreaterThan(400 * 0.5);
    expect(second.size).toBeLessThan(400 * 0.7);
    for (const u of first) expect(second.has(u)).toBe(true);
    expect((await check(p, '2026.01.01')).body.version).toBe('2026.01.01');
  });

  it('rises on its schedule, and at 100 % answers every device as the spec does', async () => {
    const set = await cloud.adminJson('PUT', `${trackOf(p)}/2026.02.01/rollout`, { percent: 70, step_percent: 15, step_every_seconds: 3600 });
    expect(set.body).toMatchObject({ percent: 70, step_percent: 15, step_every_seconds: 3600, effective_percent: 70 });
    clock += 3600_000;
    expect((await cloud.adminJson('GET', `${trackOf(p)}/2026.02.01/rollout`)).body.effective_percent).toBe(85);
    clock += 3600_000;
    expect((await cloud.adminJson('GET', `${trackOf(p)}/2026.02.01/rollout`)).body.effective_percent).toBe(100);
    cloud.cloud.ota.invalidate();
    expect((await reached()).size).toBe(400);
    expect((await check(p, '2026.01.01')).body.version).toBe('2026.02.01');
  });

  it('refuses bad settings with 400 and changes nothing', async () => {
    for (const bad of [{ percent: 101 }, { percent: -1 }, { groups: ['<b>'] }, { step_percent: 10, step_every_seconds: null }, { colour: 'red' }, { min_reports: 0 }]) {
      const r = await cloud.adminJson('PUT', `${trackOf(p)}/2026.02.01/rollout`, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error).toBe('invalid_rollout');
    }
    expect((await cloud.adminJson('GET', `${trackOf(p)}/2026.02.01/rollout`)).body).toMatchObject({ percent: 70, step_percent: 15 });
    expect((await cloud.adminJson('PUT', `${trackOf(p)}/2030.01.01/rollout`, { percent: 5 })).status).toBe(404);
  });
});

describe('outcomes and the error threshold', () => {
  const p = '0x00000040';
  const beta = ['o-1', 'o-2', 'o-3', 'o-4'];

  it('counts successes and failed installs from the next checks, and pauses the rollout by itself past its threshold', async () => {
    await release(p, '2026.01.01');
    await release(p, '2026.02.01', { percent: 0, groups: ['beta'], error_threshold_percent: 50, min_reports: 3 });
    for (const u of beta) await enroll(u, ['beta']);
    await enroll('o-late', ['beta']);
    for (const u of beta) expect((await check(p, '2026.01.01', u)).body.version).toBe('2026.02.01');
    await cloud.cloud.inventory.flush();
    expect((await cloud.adminJson('GET', `${trackOf(p)}/2026.02.01/rollout`)).body.outcomes).toEqual({ pending: 4, succeeded: 0, failed: 0 });
    // o-1 installed it; o-2 reports the old version again: a failed install. Not enough reports yet.
    await check(p, '2026.02.01', 'o-1');
    await check(p, '2026.01.01', 'o-2');
    await cloud.cloud.inventory.flush();
    let rollout = (await cloud.adminJson('GET', `${trackOf(p)}/2026.02.01/rollout`)).body;
    expect(rollout).toMatchObject({ state: 'active', outcomes: { pending: 2, succeeded: 1, failed: 1 } });
    // o-3 fails too: 2 of 3 reports failed, over 50 %: paused by itself.
    await check(p, '2026.01.01', 'o-3');
    await cloud.cloud.inventory.flush();
    rollout = (await cloud.adminJson('GET', `${trackOf(p)}/2026.02.01/rollout`)).body;
    expect(rollout).toMatchObject({ state: 'paused', outcomes: { pending: 1, succeeded: 1, failed: 2 } });
    expect(rollout.paused_reason).toMatch(/2 of 3 reported installs failed/);
    // Paused: a device of the group not offered yet is held; the release list shows it all.
    expect((await check(p, '2026.01.01', 'o-late')).body.version).toBe('2026.01.01');
    const listed = (await cloud.adminJson('GET', trackOf(p))).body.versions.find((v: any) => v.version === '2026.02.01');
    expect(listed).toMatchObject({ rollout: { state: 'paused' }, outcomes: { succeeded: 1, failed: 2 } });
    const audit = (await cloud.adminJson('GET', '/admin/audit?limit=5')).body.entries;
    expect(audit[0]).toMatchObject({ actor: 'system', via: 'system', action: 'pauseRolloutOnErrors', details: { failed: 2, succeeded: 1 } });
    const paused = cloud.logs.find((l) => l.msg === 'rollout paused on errors');
    expect(paused).toMatchObject({ level: 'WARNING', version: '2026.02.01' });
  });

  it('lists the devices behind each count (API and fleet rollout devices), one kind or all, paged', async () => {
    const devices = `${trackOf(p)}/2026.02.01/rollout/devices`;
    // A failed install is offered again at its next check: a second attempt.
    const failed = (await cloud.adminJson('GET', `${devices}?outcome=failed`)).body;
    expect(failed).toEqual({
      devices: ['o-2', 'o-3'].map((uuid) => ({ uuid, outcome: 'failed', from_version: '2026.01.01', offered_at: expect.any(String), settled_at: expect.any(String), attempts: 2 })),
      next_after: null,
    });
    const page = (await cloud.adminJson('GET', `${devices}?limit=3`)).body;
    expect([page.devices.map((d: any) => `${d.uuid} ${d.outcome}`), page.next_after]).toEqual([['o-1 succeeded', 'o-2 failed', 'o-3 failed'], 'o-3']);
    expect((await cloud.adminJson('GET', `${devices}?after=o-3`)).body.devices.map((d: any) => `${d.uuid} ${d.outcome}`)).toEqual(['o-4 pending']);
    // Bad queries and unknown releases: 400 and 404, named.
    expect((await cloud.adminJson('GET', `${devices}?outcome=lost`)).body.error).toBe('invalid_query');
    expect((await cloud.adminJson('GET', `${trackOf(p)}/2026.09.09/rollout/devices`)).status).toBe(404);
    // The CLI gives the same list, every page.
    const env = { JWT_SECRET: TEST_JWT_SECRET, FLEET_CLOUD_URL: cloud.url };
    const cli = await runFleet(['rollout', 'devices', 'ctl', p, 'ctl', '2026.02.01', '--outcome', 'failed'], { env });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^UUID +OUTCOME +FROM +OFFERED +SETTLED +ATTEMPTS\no-2 +failed +2026\.01\.01 .*\no-3 +failed .*\n$/);
    const json = JSON.parse((await runFleet(['rollout', 'devices', 'ctl', p, 'ctl', '2026.02.01', '--json'], { env })).stdout);
    expect(json.devices.map((d: any) => d.uuid)).toEqual(['o-1', 'o-2', 'o-3', 'o-4']);
    const bad = await runFleet(['rollout', 'devices', 'ctl', p, 'ctl', '2026.02.01', '--outcome', 'lost'], { env });
    expect(bad.code).toBe(2);
  });

  it('the inventory finds the devices behind the newest release and those whose latest update failed (API and fleet device list)', async () => {
    const uuids = async (query: string) => (await cloud.adminJson('GET', `/admin/devices?product_hex=${p}&${query}`)).body.devices.map((d: any) => d.uuid);
    // The inventory takes reports in batches: o-late's check (above) is in once the batch is written.
    await cloud.cloud.inventory.flush();
    // o-1 installed 2026.02.01; the others still report 2026.01.01; o-2 and o-3 failed their install.
    expect(await uuids('behind=true')).toEqual(['o-2', 'o-3', 'o-4', 'o-late']);
    expect(await uuids('failed_update=true')).toEqual(['o-2', 'o-3']);
    expect(await uuids('behind=true&failed_update=true')).toEqual(['o-2', 'o-3']);
    expect((await cloud.adminJson('GET', '/admin/devices?behind=yes')).body.error).toBe('invalid_query');
    const env = { JWT_SECRET: TEST_JWT_SECRET, FLEET_CLOUD_URL: cloud.url };
    const cli = await runFleet(['device', 'list', '--product-hex', p, '--failed-update', '--json'], { env });
    expect(JSON.parse(cli.stdout).devices.map((d: any) => d.uuid)).toEqual(['o-2', 'o-3']);
    const behind = await runFleet(['device', 'list', '--product-hex', p, '--behind'], { env });
    expect(behind.stdout.split('\n').slice(1, -1).map((l) => l.split(/\s+/)[0])).toEqual(['o-2', 'o-3', 'o-4', 'o-late']);
  });

  it('resumes by hand (and pauses by hand), both idempotent, audited with who did it', async () => {
    const resumed = await cloud.adminJson('POST', `${trackOf(p)}/2026.02.01/rollout/resume`);
    expect(resumed.body).toMatchObject({ state: 'active', paused_reason: null });
    expect((await cloud.adminJson('POST', `${trackOf(p)}/2026.02.01/rollout/resume`)).body.state).toBe('active');
    expect((await check(p, '2026.01.01', 'o-late')).body.version).toBe('2026.02.01');
    const paused = await cloud.adminJson('POST', `${trackOf(p)}/2026.02.01/rollout/pause`);
    expect(paused.body).toMatchObject({ state: 'paused', paused_reason: 'paused by test' });
    expect((await cloud.adminJson('POST', `${trackOf(p)}/2026.02.01/rollout/pause`)).body.state).toBe('paused');
    const audit = (await cloud.adminJson('GET', '/admin/audit?limit=4')).body.entries;
    expect(audit.map((e: any) => [e.actor, e.via, e.action, e.status])).toEqual([
      ['test', 'api', 'pauseRollout', 200],
      ['test', 'api', 'pauseRollout', 200],
      ['test', 'api', 'resumeRollout', 200],
      ['test', 'api', 'resumeRollout', 200],
    ]);
    expect((await cloud.adminJson('POST', `${trackOf('0x000000ff')}/2026.02.01/rollout/pause`)).status).toBe(404);
  });
});
