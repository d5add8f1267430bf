// The device inventory through the admin API (docs/device-inventory.md): what the cloud learns from
// requests devices already make (an OTA check that names its device, a signed backup) and from
// enrolment, listed with filters (track, version, not seen since, no backup since, search, group),
// stragglers in one query, paged by UUID.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffceBlob, startTestCloud, type TestCloud } from '../helpers/cloud.ts';

let cloud: TestCloud;
let clock = Date.parse('2026-06-01T12:00:00Z');
const DAY = 86_400_000;
beforeAll(async () => {
  cloud = await startTestCloud({ now: () => clock });
  await cloud.admin('PUT', '/admin/firmware/ctl/0x00000001/ctl/2026.01.01', { no_image: true });
  await cloud.admin('PUT', '/admin/firmware/ctl/0x00000001/ctl/2026.02.01', { no_image: true });
});
afterAll(() => cloud.close());

const uuids = (body: any) => body.devices.map((d: any) => d.uuid);

describe('the inventory', () => {
  let key: Awaited<ReturnType<TestCloud['enroll']>>;

  it('records enrolment (with a label), the last OTA check of a device that names itself, and its last backup', async () => {
    key = await cloud.enroll('inv-a');
    const labelled = await cloud.adminJson('PUT', '/admin/devices/inv-b', { public_key: key.publicKeyPem, label: 'Lobby panel <b>2</b>' });
    expect(labelled.status).toBe(201);
    expect(labelled.body.label).toBe('Lobby panel <b>2</b>');
    await cloud.enroll('inv-c');
    // Ten days ago, inv-a checked on 2026.01.01 and was offered 2026.02.01; today inv-b checks, up to date.
    clock -= 10 * DAY;
    await fetch(`${cloud.url}/ota/ctl/0x00000001/ctl?current_version=2026.01.01`, { headers: { 'x-device-uuid': 'inv-a' } });
    await cloud.cloud.inventory.flush();
    clock += 10 * DAY;
    await fetch(`${cloud.url}/ota/ctl/0x00000001/ctl?current_version=2026.02.01`, { headers: { 'x-device-uuid': 'inv-b' } });
    // An unknown UUID, and a malformed one, are not recorded (and answered as anyone).
    expect((await fetch(`${cloud.url}/ota/ctl/0x00000001/ctl?current_version=2026.02.01`, { headers: { 'x-device-uuid': 'nobody' } })).status).toBe(200);
    expect((await fetch(`${cloud.url}/ota/ctl/0x00000001/ctl?current_version=2026.02.01`, { headers: { 'x-device-uuid': '../etc' } })).status).toBe(200);
    await cloud.cloud.inventory.flush();
    const headers = { ...cloud.signed(key.privateKey, 'inv-a'), 'content-type': 'application/octet-stream', etag: 'cd'.repeat(32) };
    expect((await fetch(`${cloud.url}/devices/inv-a/backup`, { method: 'POST', headers, body: ffceBlob(100) })).status).toBe(200);

    const a = (await cloud.adminJson('GET', '/admin/devices/inv-a')).body;
    expect(a).toMatchObject({
      uuid: 'inv-a',
      groups: [],
      last_check: { at: new Date(clock - 10 * DAY).toISOString(), version: '2026.01.01', class: 'ctl', product_hex: '0x00000001', application: 'ctl' },
      offer: { version: '2026.02.01', from_version: '2026.01.01' },
      backup: { size: 104, etag: 'cd'.repeat(32), last_backup_date: new Date(clock).toISOString() },
    });
    const c = (await cloud.adminJson('GET', '/admin/devices/inv-c')).body;
    expect(c).toMatchObject({ last_check: null, offer: null, backup: null });
    expect((await cloud.adminJson('GET', '/admin/devices?search=nobody')).body.devices).toEqual([]);
  });

  it('filters by track, version, not seen for N days, no backup for N days (both at once, or either with match=any), search, group', async () => {
    await cloud.adminJson('PUT', '/admin/devices/inv-b/groups', { groups: ['lobby'] });
    const q = async (query: string) => uuids((await cloud.adminJson('GET', `/admin/devices?search=inv-&${query}`)).body);
    expect(await q('')).toEqual(['inv-a', 'inv-b', 'inv-c']);
    expect(await q('version=2026.01.01')).toEqual(['inv-a']);
    expect(await q('class=ctl&product_hex=0x00000001&application=ctl')).toEqual(['inv-a', 'inv-b']);
    expect(await q('not_seen_days=7')).toEqual(['inv-a', 'inv-c']);
    expect(await q(`not_seen_since=${new Date(clock - 30 * DAY).toISOString()}`)).toEqual(['inv-c']);
    expect(await q('no_backup_days=1')).toEqual(['inv-b', 'inv-c']);
    expect(await q('not_seen_days=7&no_backup_days=1')).toEqual(['inv-c']);
    // match=any: at least one condition (stragglers as people mean them); the other filters still apply.
    expect(await q('not_seen_days=7&no_backup_days=1&match=any')).toEqual(['inv-a', 'inv-b', 'inv-c']);
    expect(await q('not_seen_days=7&no_backup_days=1&match=all')).toEqual(['inv-c']);
    expect(await q('not_seen_days=7&match=any')).toEqual(['inv-a', 'inv-c']);
    expect(await q('version=2026.01.01&not_seen_days=7&no_backup_days=1&match=any')).toEqual(['inv-a']);
    expect(await q('group=lobby')).toEqual(['inv-b']);
    expect(uuids((await cloud.adminJson('GET', '/admin/devices?search=LOBBY%20PANEL')).body)).toEqual(['inv-b']);
  });

  it('pages by UUID: next_after until the last page', async () => {
    const first = (await cloud.adminJson('GET', '/admin/devices?search=inv-&limit=2')).body;
    expect(uuids(first)).toEqual(['inv-a', 'inv-b']);
    expect(first.next_after).toBe('inv-b');
    const second = (await cloud.adminJson('GET', `/admin/devices?search=inv-&limit=2&after=${first.next_after}`)).body;
    expect(uuids(second)).toEqual(['inv-c']);
    expect(second.next_after).toBeNull();
  });

  it('refuses a bad filter with 400 naming it', async () => {
    for (const [query, field] of [
      ['version=2026.1.1', 'version'],
      ['not_seen_days=soon', 'not_seen_days'],
      ['not_seen_since=yesterday', 'not_seen_since'],
      ['limit=0', 'limit'],
      ['limit=10001', 'limit'],
      ['group=%3Cb%3E', 'group'],
      ['match=either&not_seen_days=7', 'match'],
      ['match=any', 'match'],
      ['match=any&version=2026.01.01', 'match'],
    ] as const) {
      const r = await cloud.adminJson('GET', `/admin/devices?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.details?.field, query).toBe(field);
    }
    expect((await cloud.adminJson('GET', '/admin/devices?match=any')).body.message).toBe(
      'match=any combines conditions: give at least one of not_seen_days, not_seen_since, no_backup_days, no_backup_since, crashed_days, low_heap, behind, failed_update',
    );
    const unknown = await cloud.adminJson('GET', '/admin/devices?colour=red');
    expect(unknown.body).toMatchObject({ error: 'invalid_query', details: { unknown_keys: ['colour'] } });
  });

  it('refuses bad groups and labels with 400, and groups of an unknown device with 404', async () => {
    expect((await cloud.adminJson('PUT', '/admin/devices/inv-a/groups', { groups: ['a b'] })).body.error).toBe('invalid_device_groups');
    expect((await cloud.adminJson('PUT', '/admin/devices/inv-a/groups', { groups: Array.from({ length: 33 }, (_, i) => `g${i}`) })).status).toBe(400);
    expect((await cloud.adminJson('PUT', '/admin/devices/nobody/groups', { groups: ['x'] })).status).toBe(404);
    const label = await cloud.adminJson('PUT', '/admin/devices/inv-a', { public_key: key.publicKeyPem, label: 'line\nbreak' });
    expect(label.status).toBe(400);
    expect(label.body).toMatchObject({ error: 'invalid_body', details: { field: 'label' } });
  });

  it("sets a label alone (the key kept), clears it with null or \"\", records who did it; 400 for a bad label, 404 for an unknown device", async () => {
    const before = (await cloud.adminJson('GET', '/admin/devices/inv-c')).body;
    const set = await cloud.adminJson('PUT', '/admin/devices/inv-c/label', { label: 'Cellar <b>pump</b>' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ uuid: 'inv-c', label: 'Cellar <b>pump</b>', public_key: before.public_key, groups: before.groups });
    const [entry] = (await cloud.adminJson('GET', '/admin/audit?action=setDeviceLabel&limit=1')).body.entries;
    expect(entry).toMatchObject({ action: 'setDeviceLabel', method: 'PUT', path: '/admin/devices/inv-c/label', status: 200, details: { label: 'Cellar <b>pump</b>' } });
    for (const cleared of [null, '']) {
      await cloud.adminJson('PUT', '/admin/devices/inv-c/label', { label: 'again' });
      const r = await cloud.adminJson('PUT', '/admin/devices/inv-c/label', { label: cleared });
      expect(r.status).toBe(200);
      expect(r.body.label, String(cleared)).toBeUndefined();
    }
    for (const [body, field] of [
      [{ label: 'line\nbreak' }, 'label'],
      [{ label: 'x'.repeat(201) }, 'label'],
      [{ label: 7 }, 'label'],
      [{}, 'label'],
    ] as const) {
      const r = await cloud.adminJson('PUT', '/admin/devices/inv-c/label', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body, JSON.stringify(body)).toMatchObject({ error: 'invalid_body', details: { field } });
    }
    expect((await cloud.adminJson('PUT', '/admin/devices/inv-c/label', { label: 'a', colour: 'red' })).body).toMatchObject({ error: 'invalid_body', details: { unknown_keys: ['colour'] } });
    const missing = await cloud.adminJson('PUT', '/admin/devices/nobody/label', { label: 'x' });
    expect([missing.status, missing.body.error]).toEqual([404, 'device_not_found']);
    expect((await cloud.adminJson('PUT', '/admin/devices/..%2Fetc/label', { label: 'x' })).body.error).toBe('invalid_uuid');
  });

  it('counts devices per version per track, newest first, with the release status; filtered by track; 400 for a bad filter', async () => {
    // inv-a last checked on 2026.01.01, inv-b on 2026.02.01 (both RELEASED); inv-c never checked.
    await cloud.enroll('inv-d');
    await fetch(`${cloud.url}/ota/ctl/0x00000001/ctl?current_version=2026.02.01`, { headers: { 'x-device-uuid': 'inv-d' } });
    await fetch(`${cloud.url}/ota/lamp/0x00000002/lamp?current_version=2025.12.01`, { headers: { 'x-device-uuid': 'inv-c' } });
    await cloud.cloud.inventory.flush();
    const all = await cloud.adminJson('GET', '/admin/device-versions');
    expect(all.status).toBe(200);
    expect(all.body).toEqual({
      tracks: [
        {
          class: 'ctl',
          product_hex: '0x00000001',
          application: 'ctl',
          devices: 3,
          versions: [
            { version: '2026.02.01', devices: 2, status: 'RELEASED' },
            { version: '2026.01.01', devices: 1, status: 'RELEASED' },
          ],
        },
        { class: 'lamp', product_hex: '0x00000002', application: 'lamp', devices: 1, versions: [{ version: '2025.12.01', devices: 1, status: null }] },
      ],
    });
    const one = await cloud.adminJson('GET', '/admin/device-versions?class=lamp&product_hex=0x00000002');
    expect(one.body.tracks.map((t: any) => t.class)).toEqual(['lamp']);
    expect((await cloud.adminJson('GET', '/admin/device-versions?product_hex=0x00000001&application=ctl')).body.tracks.map((t: any) => t.devices)).toEqual([3]);
    expect((await cloud.adminJson('GET', '/admin/device-versions?application=nothing')).body).toEqual({ tracks: [] });
    for (const [query, field] of [
      ['product_hex=0x1', 'product_hex'],
      ['class=a%20b', 'class'],
    ] as const) {
      const r = await cloud.adminJson('GET', `/admin/device-versions?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body, query).toMatchObject({ error: 'invalid_query', details: { field } });
    }
    expect((await cloud.adminJson('GET', '/admin/device-versions?version=2026.01.01')).body).toMatchObject({ error: 'invalid_query', details: { unknown_keys: ['version'] } });
    const anonymous = await fetch(`${cloud.url}/admin/device-versions`);
    expect(anonymous.status).toBe(401);
  });
});
