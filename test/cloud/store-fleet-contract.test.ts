// The CloudStore contract for fleet operations (hosted images, rollouts and outcomes, the device
// inventory and groups, the audit log), on both stores: SQLite and a real PostgreSQL server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../cloud/store/postgres.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { CloudStore, OtaCheckWrite, Rollout } from '../../cloud/store/types.ts';
import { freshDatabase } from '../helpers/postgres.ts';

const track = { class: 'ctl', productHex: '0x00000001', application: 'ctl' };
const other = { ...track, productHex: '0x00000002' };
const rel = (version: string, t = track) => ({ ...t, version, status: 'RELEASED' as const, releasedAt: '2026-01-01T00:00:00.000Z' });
const rollout = (version: string, o: Partial<Rollout> = {}): Rollout => ({
  ...track,
  version,
  percent: 10,
  groups: ['beta'],
  stepPercent: null,
  stepEverySeconds: null,
  errorThresholdPercent: 20,
  minReports: 5,
  healthMargin: null,
  healthMinDeviceHours: 100,
  state: 'active',
  anchorAtMs: 1000,
  pausedReason: null,
  createdAt: 't0',
  updatedAt: 't0',
  ...o,
});
const check = (uuid: string, version: string, o: Partial<OtaCheckWrite> = {}): OtaCheckWrite => ({ uuid, at: '2026-03-01T00:00:00.000Z', version, track, offer: null, outcome: null, ...o });

describe.each([
  ['SQLite', async () => new SqliteStore(':memory:') as CloudStore],
  ['PostgreSQL', async () => (await PostgresStore.connect(await freshDatabase())) as CloudStore],
])('%s store, fleet operations', (_name, open) => {
  let store: CloudStore;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(() => store.close());

  it('a release with a hosted image and a rollout is created in one go; a second one of that version stores nothing', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
    const created = await store.createRelease({ ...rel('2026.02.01'), url: 'http://c/x.bin', size: bytes.length, sha256: 'ab'.repeat(32), chip: 'esp32s3', project: 'p' }, { image: bytes, rollout: rollout('2026.02.01') });
    expect(created).toMatchObject({ version: '2026.02.01', hosted: true, chip: 'esp32s3', project: 'p', size: 70_000 });
    const image = await store.getImage(track, '2026.02.01');
    expect(image?.bytes.equals(bytes)).toBe(true);
    expect(image).toMatchObject({ sha256: 'ab'.repeat(32), size: 70_000, status: 'RELEASED' });
    expect(await store.listRollouts(track)).toEqual([rollout('2026.02.01')]);
    // Same version again, with another image: refused, nothing of it stored.
    expect(await store.createRelease(rel('2026.02.01'), { image: Buffer.from('other'), rollout: rollout('2026.02.01', { percent: 90 }) })).toBeNull();
    expect((await store.getImage(track, '2026.02.01'))?.bytes.equals(bytes)).toBe(true);
    expect((await store.listRollouts(track))[0]!.percent).toBe(10);
    // A release without an image has none; revoking shows in the image's status.
    await store.createRelease(rel('2026.03.01'));
    expect(await store.getImage(track, '2026.03.01')).toBeNull();
    expect((await store.listReleases(track)).find((r) => r.version === '2026.03.01')?.hosted).toBeUndefined();
    await store.revokeRelease(track, '2026.02.01', 't');
    expect((await store.getImage(track, '2026.02.01'))?.status).toBe('REVOKED');
  });

  it('tracks are listed with their counts and newest RELEASED version', async () => {
    await store.createRelease(rel('2025.01.01', other));
    expect(await store.listTracks()).toEqual([
      { ...track, released: 1, revoked: 1, latest: '2026.03.01' },
      { ...other, released: 1, revoked: 0, latest: '2025.01.01' },
    ]);
  });

  it('rollouts: only for an existing release; updated only from the named state; deleted', async () => {
    expect(await store.putRollout(rollout('2030.01.01'))).toBeNull();
    expect(await store.putRollout(rollout('2026.03.01', { percent: 5, groups: [] }))).toMatchObject({ version: '2026.03.01', percent: 5, groups: [] });
    const paused = await store.updateRollout(track, '2026.03.01', { state: 'paused', pausedReason: 'errors', updatedAt: 't1' }, 'active');
    expect(paused).toMatchObject({ state: 'paused', pausedReason: 'errors', percent: 5, updatedAt: 't1' });
    expect(await store.updateRollout(track, '2026.03.01', { state: 'paused', updatedAt: 't2' }, 'active')).toBeNull();
    const resumed = await store.updateRollout(track, '2026.03.01', { state: 'active', pausedReason: null, percent: 50, anchorAtMs: 5000, groups: ['a', 'b'], updatedAt: 't3' });
    expect(resumed).toMatchObject({ state: 'active', pausedReason: null, percent: 50, anchorAtMs: 5000, groups: ['a', 'b'] });
    expect(await store.updateRollout(track, '2031.01.01', { state: 'active', updatedAt: 't' })).toBeNull();
    expect(await store.deleteRollout(track, '2026.03.01')).toBe(true);
    expect(await store.deleteRollout(track, '2026.03.01')).toBe(false);
  });

  it('groups: replaced per device, only for enrolled devices, looked up by name', async () => {
    await store.putDevice('g-1', 'PEM', 't', 'Lobby <b>panel</b>');
    await store.putDevice('g-2', 'PEM', 't');
    expect(await store.setDeviceGroups('g-1', ['beta', 'lab'])).toBe(true);
    expect(await store.setDeviceGroups('g-2', ['lab'])).toBe(true);
    expect(await store.setDeviceGroups('nobody', ['beta'])).toBe(false);
    expect([...(await store.devicesInGroups(['beta']))]).toEqual(['g-1']);
    expect([...(await store.devicesInGroups(['lab', 'beta']))].sort()).toEqual(['g-1', 'g-2']);
    await store.setDeviceGroups('g-1', ['lab']);
    expect([...(await store.devicesInGroups(['beta']))]).toEqual([]);
    expect((await store.getDevice('g-1'))?.label).toBe('Lobby <b>panel</b>');
    // Re-enrolment without a label keeps the old one.
    await store.putDevice('g-1', 'PEM-2', 't2');
    expect((await store.getDevice('g-1'))?.label).toBe('Lobby <b>panel</b>');
  });

  it("a label: set, replaced and cleared alone (the key and groups kept); false for a device that is not enrolled", async () => {
    await store.putDevice('l-1', 'PEM-L', 't0', 'old');
    await store.setDeviceGroups('l-1', ['lab']);
    expect(await store.setDeviceLabel('l-1', 'Boiler room <i>east</i>', 't1')).toBe(true);
    expect(await store.getDevice('l-1')).toEqual({ uuid: 'l-1', publicKeyPem: 'PEM-L', enrolledAt: 't0', updatedAt: 't1', label: 'Boiler room <i>east</i>' });
    expect(await store.setDeviceLabel('l-1', null, 't2')).toBe(true);
    const [cleared] = await store.listInventory({ uuid: 'l-1', limit: 1 });
    expect(cleared!.label).toBeUndefined();
    expect(cleared!.groups).toEqual(['lab']);
    expect(await store.setDeviceLabel('nobody', 'x', 't3')).toBe(false);
  });

  it('devices per version per track: from the last check, versions newest first, with the release status; filtered by track', async () => {
    // Tracks whose names order differently bytewise and in a locale ('B' < 'a' bytewise): both stores order bytewise.
    const vcA = { class: 'vc', productHex: '0x0000000c', application: 'a' };
    const vcB = { ...vcA, application: 'B' };
    await store.createRelease(rel('2026.05.01', vcA));
    await store.createRelease(rel('2026.06.01', vcA));
    await store.revokeRelease(vcA, '2026.05.01', 't');
    for (const u of ['v-1', 'v-2', 'v-3', 'v-4', 'v-5']) await store.putDevice(u, 'PEM', 't');
    await store.recordOtaChecks([
      check('v-1', '2026.05.01', { track: vcA }),
      check('v-2', '2026.06.01', { track: vcA }),
      check('v-3', '2026.06.01', { track: vcA }),
      check('v-4', '2026.04.01', { track: vcA }),
      check('v-5', '2026.06.01', { track: vcB }),
      // A later check on another version replaces the earlier one: v-1 is counted once, on 2026.06.01.
      check('v-1', '2026.06.01', { track: vcA, at: '2026-03-02T00:00:00.000Z' }),
    ]);
    const counts = (await store.countDeviceVersions({ class: 'vc' })).map((c) => [c.track.application, c.version, c.devices, c.status]);
    expect(counts).toEqual([
      ['B', '2026.06.01', 1, null],
      ['a', '2026.06.01', 3, 'RELEASED'],
      ['a', '2026.04.01', 1, null],
    ]);
    await store.recordOtaChecks([check('v-4', '2026.05.01', { track: vcA, at: '2026-03-03T00:00:00.000Z' })]);
    expect((await store.countDeviceVersions({ class: 'vc', productHex: '0x0000000c', application: 'a' })).map((c) => [c.version, c.devices, c.status])).toEqual([
      ['2026.06.01', 3, 'RELEASED'],
      ['2026.05.01', 1, 'REVOKED'],
    ]);
    // A device removed is counted no more; a track nobody checked on has no row.
    await store.deleteDevice('v-5');
    expect(await store.countDeviceVersions({ class: 'vc', application: 'B' })).toEqual([]);
    expect(await store.countDeviceVersions({ class: 'nothing-here' })).toEqual([]);
    const everything = await store.countDeviceVersions({});
    expect(everything.filter((c) => c.track.class === 'vc').map((c) => c.devices)).toEqual([3, 1]);
    expect(everything.every((c) => Number.isInteger(c.devices) && c.devices > 0)).toBe(true);
  });

  it('OTA checks: recorded for enrolled devices only; an offer, then a success or a failure, counted per release', async () => {
    for (const u of ['i-1', 'i-2', 'i-3']) await store.putDevice(u, 'PEM', 't');
    await store.recordOtaChecks([
      check('i-1', '2026.01.01', { offer: { version: '2026.03.01', fromVersion: '2026.01.01' } }),
      check('i-2', '2026.01.01', { offer: { version: '2026.03.01', fromVersion: '2026.01.01' } }),
      check('i-3', '2026.01.01', { offer: { version: '2026.03.01', fromVersion: '2026.01.01' } }),
      check('ghost', '2026.01.01', { offer: { version: '2026.03.01', fromVersion: '2026.01.01' } }),
    ]);
    expect(await store.outcomeCounts(track, '2026.03.01')).toEqual({ pending: 3, succeeded: 0, failed: 0 });
    const states = await store.getOtaCheckStates(['i-1', 'ghost']);
    expect([...states.keys()]).toEqual(['i-1']);
    expect(states.get('i-1')).toEqual({ uuid: 'i-1', lastCheckAt: '2026-03-01T00:00:00.000Z', offer: { track, version: '2026.03.01', fromVersion: '2026.01.01', at: '2026-03-01T00:00:00.000Z' } });
    const later = '2026-03-02T00:00:00.000Z';
    await store.recordOtaChecks([
      check('i-1', '2026.03.01', { at: later, outcome: { track, version: '2026.03.01', result: 'succeeded' } }),
      // A failure, offered again at once: it stays failed until it succeeds.
      check('i-2', '2026.01.01', { at: later, outcome: { track, version: '2026.03.01', result: 'failed' }, offer: { version: '2026.03.01', fromVersion: '2026.01.01' } }),
    ]);
    expect(await store.outcomeCounts(track, '2026.03.01')).toEqual({ pending: 1, succeeded: 1, failed: 1 });
    expect((await store.getOtaCheckStates(['i-1'])).get('i-1')).toEqual({ uuid: 'i-1', lastCheckAt: later, offer: null });
    // A device removed takes its inventory with it; its outcomes stay counted.
    await store.deleteDevice('i-3');
    expect((await store.getOtaCheckStates(['i-3'])).size).toBe(0);
    expect(await store.outcomeCounts(track, '2026.03.01')).toEqual({ pending: 1, succeeded: 1, failed: 1 });
  });

  it('the devices behind the outcome counts: all, one kind, paged by UUID', async () => {
    // The outcomes of the test above: i-1 succeeded, i-2 failed (offered twice), i-3 pending (removed since).
    const all = await store.outcomeDevices(track, '2026.03.01', { limit: 10 });
    expect(all.map((d) => [d.uuid, d.outcome, d.fromVersion, d.attempts])).toEqual([
      ['i-1', 'succeeded', '2026.01.01', 1],
      ['i-2', 'failed', '2026.01.01', 2],
      ['i-3', 'pending', '2026.01.01', 1],
    ]);
    expect(all[0]!.settledAt).toBe('2026-03-02T00:00:00.000Z');
    expect(all[2]!.settledAt).toBeNull();
    expect((await store.outcomeDevices(track, '2026.03.01', { limit: 10, outcome: 'failed' })).map((d) => d.uuid)).toEqual(['i-2']);
    const first = await store.outcomeDevices(track, '2026.03.01', { limit: 2 });
    expect(first.map((d) => d.uuid)).toEqual(['i-1', 'i-2']);
    expect((await store.outcomeDevices(track, '2026.03.01', { limit: 2, after: 'i-2' })).map((d) => d.uuid)).toEqual(['i-3']);
    expect(await store.outcomeDevices(track, '2026.09.09', { limit: 10 })).toEqual([]);
    // The inventory's conditions on the same rows: the latest update failed; behind the newest RELEASED version.
    expect((await store.listInventory({ limit: 10, failedUpdate: true })).map((d) => d.uuid)).toEqual(['i-2']);
    const newest = (await store.listReleases(track)).filter((r) => r.status === 'RELEASED').map((r) => r.version).sort().at(-1)!;
    const expected = [['i-1', '2026.03.01'], ['i-2', '2026.01.01']].filter(([, v]) => v! < newest).map(([u]) => u);
    expect(expected).toContain('i-2');
    expect((await store.listInventory({ limit: 10, behind: true })).map((d) => d.uuid).filter((u) => u.startsWith('i-'))).toEqual(expected);
    expect((await store.listInventory({ limit: 10, behind: true, failedUpdate: true, match: 'any' })).map((d) => d.uuid).filter((u) => u.startsWith('i-'))).toEqual(['i-2']);
  });

  it('OTA checks flushed out of order (two workers of a serve): an older check never replaces a newer one', async () => {
    await store.putDevice('o-1', 'PEM', 't');
    const newer = '2026-04-02T00:00:00.000Z';
    await store.recordOtaChecks([check('o-1', '2026.03.01', { at: newer })]);
    await store.recordOtaChecks([check('o-1', '2026.01.01', { at: '2026-04-01T00:00:00.000Z', offer: { version: '2026.03.01', fromVersion: '2026.01.01' } })]);
    expect((await store.getOtaCheckStates(['o-1'])).get('o-1')).toEqual({ uuid: 'o-1', lastCheckAt: newer, offer: null });
    const [row] = await store.listInventory({ uuid: 'o-1', limit: 1 });
    expect(row!.lastCheck).toEqual({ at: newer, version: '2026.03.01', track });
  });

  it('inventory: one query with filters (track, version, not seen since, no backup since, search, group), paged by UUID', async () => {
    await store.putDevice('s-old', 'PEM', 't');
    await store.putDevice('s-new', 'PEM', 't', '100%_sure');
    await store.putDevice('s-never', 'PEM', 't');
    await store.recordOtaChecks([
      check('s-old', '2025.12.01', { at: '2026-01-01T00:00:00.000Z' }),
      check('s-new', '2026.03.01', { at: '2026-03-10T00:00:00.000Z', track: other }),
    ]);
    await store.putBackup('s-new', Buffer.from('FFCE0000'), 'e'.repeat(64), '2026-03-09T00:00:00.000Z');
    await store.putBackup('s-old', Buffer.from('FFCE0000'), null, '2025-06-01T00:00:00.000Z');
    await store.setDeviceGroups('s-new', ['beta']);
    const uuids = async (f: Partial<Parameters<CloudStore['listInventory']>[0]>) => (await store.listInventory({ limit: 100, search: 's-', ...f })).map((d) => d.uuid);
    expect(await uuids({})).toEqual(['s-never', 's-new', 's-old']);
    expect(await uuids({ productHex: other.productHex })).toEqual(['s-new']);
    expect(await uuids({ version: '2025.12.01' })).toEqual(['s-old']);
    // Stragglers: not seen for N days and no backup for N days, together.
    expect(await uuids({ notSeenSince: '2026-03-01T00:00:00.000Z' })).toEqual(['s-never', 's-old']);
    expect(await uuids({ noBackupSince: '2026-01-01T00:00:00.000Z' })).toEqual(['s-never', 's-old']);
    expect(await uuids({ notSeenSince: '2026-03-01T00:00:00.000Z', noBackupSince: '2025-01-01T00:00:00.000Z' })).toEqual(['s-never']);
    expect(await uuids({ group: 'beta' })).toEqual(['s-new']);
    // LIKE wildcards in a search are matched as themselves; the label is searched too, in any case.
    expect(await uuids({ search: '100%_S' })).toEqual(['s-new']);
    expect(await uuids({ search: '%' })).toEqual(['s-new']);
    expect(await uuids({ after: 's-never', limit: 1 })).toEqual(['s-new']);
    const [full] = await store.listInventory({ limit: 1, search: 's-new' });
    expect(full).toMatchObject({
      uuid: 's-new',
      label: '100%_sure',
      groups: ['beta'],
      lastCheck: { at: '2026-03-10T00:00:00.000Z', version: '2026.03.01', track: other },
      offer: null,
      backup: { size: 8, etag: 'e'.repeat(64), lastBackupDate: '2026-03-09T00:00:00.000Z' },
    });
  });

  it('audit log: appended, listed newest first, paged back', async () => {
    for (let i = 0; i < 3; i++) {
      await store.appendAudit({ at: `t${i}`, actor: `alice${i}`, via: 'console', action: 'releaseFirmware', method: 'PUT', path: '/admin/x', status: 201, details: i === 0 ? null : { n: i } });
    }
    const all = await store.listAudit({ limit: 10 });
    expect(all.map((e) => e.actor)).toEqual(['alice2', 'alice1', 'alice0']);
    expect(all[0]).toMatchObject({ via: 'console', action: 'releaseFirmware', status: 201, details: { n: 2 } });
    expect(all[2]!.details).toBeNull();
    const older = await store.listAudit({ limit: 1, beforeId: all[0]!.id });
    expect(older.map((e) => e.actor)).toEqual(['alice1']);
  });

  it('audit log: filtered by who, what and when, and paged back within the filter', async () => {
    const at = (day: number) => `2026-04-0${day}T12:00:00.000Z`;
    const rows: [number, string, string][] = [[1, 'bob', 'pauseRollout'], [2, 'carol', 'setRollout'], [3, 'bob', 'setRollout'], [4, 'bob', 'pauseRollout'], [5, 'carol', 'pauseRollout']];
    for (const [day, actor, action] of rows) await store.appendAudit({ at: at(day), actor, via: 'api', action, method: 'POST', path: '/admin/y', status: 200, details: null });
    const days = (es: { at: string }[]) => es.map((e) => Number(e.at.slice(9, 10)));
    expect(days(await store.listAudit({ limit: 10, actor: 'bob' }))).toEqual([4, 3, 1]);
    expect(days(await store.listAudit({ limit: 10, action: 'pauseRollout', since: at(1) }))).toEqual([5, 4, 1]);
    expect(days(await store.listAudit({ limit: 10, actor: 'bob', action: 'setRollout' }))).toEqual([3]);
    expect(days(await store.listAudit({ limit: 10, since: at(2), until: at(4) }))).toEqual([3, 2]);
    const first = await store.listAudit({ limit: 2, actor: 'bob' });
    expect(days(first)).toEqual([4, 3]);
    expect(days(await store.listAudit({ limit: 2, actor: 'bob', beforeId: first.at(-1)!.id }))).toEqual([1]);
    expect(await store.listAudit({ limit: 10, actor: "bob' OR '1'='1" })).toEqual([]);
  });

  it("a track's signing setting: none until set, then replaced whole, per track; a release keeps the block and key that signed", async () => {
    const signingTrack = { class: 'sig', productHex: '0x0000000a', application: 'sig' };
    expect(await store.getTrackSigning(signingTrack)).toBeNull();
    const first = { required: true, keys: [{ digest: 'aa'.repeat(32), label: 'key A' }, { digest: 'bb'.repeat(32) }], updatedAt: '2026-04-01T00:00:00.000Z' };
    expect(await store.putTrackSigning(signingTrack, first)).toEqual(first);
    expect(await store.getTrackSigning(signingTrack)).toEqual(first);
    expect(await store.getTrackSigning({ ...signingTrack, application: 'other' })).toBeNull();
    const second = { required: false, keys: [{ digest: 'cc'.repeat(32) }], updatedAt: '2026-04-02T00:00:00.000Z' };
    expect(await store.putTrackSigning(signingTrack, second)).toEqual(second);
    expect(await store.getTrackSigning(signingTrack)).toEqual(second);
    const signed = await store.createRelease({ ...rel('2026.04.01', signingTrack), size: 12, sha256: 'dd'.repeat(32), signedBy: { block: 2, keyDigest: 'cc'.repeat(32) } }, { image: Buffer.from('signed image') });
    expect(signed?.signedBy).toEqual({ block: 2, keyDigest: 'cc'.repeat(32) });
    await store.createRelease(rel('2026.04.02', signingTrack));
    const listed = await store.listReleases(signingTrack);
    expect(listed.map((r) => r.signedBy)).toEqual([{ block: 2, keyDigest: 'cc'.repeat(32) }, undefined]);
  });
});
