// The OTA answer cache (docs/cloud-limits.md): keyed by the normalized track and current_version only,
// so query junk and product_hex case never make new entries, and held within a byte budget, least
// recently used out. An unauthenticated client used to grow the server by ~15 KB per junk URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const BUDGET = 16_384;
let cloud: TestCloud;
let listReleasesCalls = 0;
/** While set, the store's release reads wait for it (a slow store, to overlap checks with a read). */
let hold: Promise<void> | undefined;

beforeAll(async () => {
  const store = new SqliteStore(':memory:');
  // Counting the real store's reads shows which checks the cache answered.
  const listReleases = store.listReleases.bind(store);
  store.listReleases = async (track) => {
    listReleasesCalls++;
    if (hold) await hold;
    return listReleases(track);
  };
  cloud = await startTestCloud({ store, env: { OTA_CACHE_BYTES: String(BUDGET), OTA_CACHE_TTL_MS: '60000' } });
  expect((await cloud.admin('PUT', '/admin/firmware/ctl/0x0A0B0C0D/ctl/2026.01.01', { url: 'https://fw.example/a.bin' })).status).toBe(201);
  expect((await cloud.admin('PUT', '/admin/firmware/ctl/0x0A0B0C0D/ctl/2026.02.01', { no_image: true })).status).toBe(201);
});
afterAll(async () => {
  await cloud.close();
});

async function get(path: string) {
  const res = await fetch(cloud.url + path);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('OTA answer cache', () => {
  it('maps any query junk, and any product_hex case, to one entry per (track, current_version)', async () => {
    cloud.cloud.ota.invalidate();
    const before = cloud.cloud.ota.cacheStats();
    const junk = 'a'.repeat(15_000);
    for (let i = 0; i < 100; i++) {
      const res = await get(`/ota/x/0x00000000/x?p${i}=${junk}`);
      expect(res).toEqual({ status: 404, body: { error: 'firmware_not_found', message: expect.any(String), details: { class: 'x', product_hex: '0x00000000', application: 'x' } } });
    }
    for (let i = 0; i < 20; i++) {
      const hex = i % 2 ? '0x0A0B0C0D' : '0x0a0b0c0d';
      const res = await get(`/ota/ctl/${hex}/ctl?junk${i}=${junk}&current_version=2026.01.01&more=${i}`);
      expect(res.status).toBe(200);
      expect(res.body.version).toBe('2026.02.01');
    }
    const after = cloud.cloud.ota.cacheStats();
    // One 404 answer for the unknown track, one 200 answer for the known track: nothing per URL.
    expect(after.answers - before.answers).toBe(2);
    expect(after.bytes).toBeLessThan(2_000);
  });

  it('stays within its byte budget however many distinct valid tracks are asked for, evicting the oldest', async () => {
    for (let i = 0; i < 400; i++) {
      const res = await get(`/ota/junk/0x${i.toString(16).padStart(8, '0')}/junk?current_version=2026.01.01`);
      expect(res.status).toBe(404);
      const stats = cloud.cloud.ota.cacheStats();
      expect(stats.bytes).toBeLessThanOrEqual(BUDGET);
    }
    const stats = cloud.cloud.ota.cacheStats();
    expect(stats.budgetBytes).toBe(BUDGET);
    expect(stats.answers).toBeGreaterThan(10);
    expect(stats.answers).toBeLessThan(400);
    // The evicted track answers the same, from the store.
    expect((await get('/ota/ctl/0x0A0B0C0D/ctl?current_version=2026.01.01')).body.version).toBe('2026.02.01');
  });

  it('answers a repeated check from the cache, without reading the store', async () => {
    const path = '/ota/ctl/0x0A0B0C0D/ctl?current_version=2026.02.01';
    expect((await get(path)).body.version).toBe('2026.02.01');
    const reads = listReleasesCalls;
    for (let i = 0; i < 20; i++) expect((await get(`${path}&n=${i}`)).body.version).toBe('2026.02.01');
    expect(listReleasesCalls).toBe(reads);
  });

  it('checks that miss the cache while the track is read wait for that read (one store read for a storm of first checks)', async () => {
    cloud.cloud.ota.invalidate();
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    const reads = listReleasesCalls;
    const checks = Array.from({ length: 50 }, (_, i) => cloud.cloud.ota.check('ctl', '0x0A0B0C0D', 'ctl', i % 2 ? '2026.01.01' : '2026.02.01'));
    await new Promise((r) => setTimeout(r, 20));
    release();
    hold = undefined;
    const answers = await Promise.all(checks);
    expect(listReleasesCalls - reads).toBe(1);
    // The same answers as one by one: an update for 2026.01.01, the same one each time.
    expect(new Set(answers.filter((_, i) => i % 2).map((a) => `${a.status} ${a.body.toString()}`)).size).toBe(1);
    expect(answers.filter((_, i) => i % 2).every((a) => a.status === 200)).toBe(true);
  });

  it('a read under way when the track changes is not shared with checks after the change', async () => {
    cloud.cloud.ota.invalidate();
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    const reads = listReleasesCalls;
    const before = cloud.cloud.ota.check('ctl', '0x0A0B0C0D', 'ctl', '2026.01.01');
    await new Promise((r) => setTimeout(r, 5));
    cloud.cloud.ota.invalidate();
    const after = cloud.cloud.ota.check('ctl', '0x0A0B0C0D', 'ctl', '2026.01.01');
    release();
    hold = undefined;
    await Promise.all([before, after]);
    expect(listReleasesCalls - reads).toBe(2);
  });

  it('does not cache a 400 (invalid input never enters the cache)', async () => {
    const before = cloud.cloud.ota.cacheStats().answers;
    for (const path of ['/ota/ctl/0x0A0B0C0/ctl', '/ota/ctl/0x0A0B0C0D/ctl?current_version=latest', '/ota/%00/0x0A0B0C0D/ctl']) {
      expect((await get(path)).status).toBe(400);
    }
    expect(cloud.cloud.ota.cacheStats().answers).toBe(before);
  });
});
