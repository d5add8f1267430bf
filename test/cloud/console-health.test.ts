// The console's health pages in a real browser (docs/operator-console.md, docs/device-health.md), fed
// real reports through the signed ingest route: the fleet's health (devices reporting, crashed, low on
// heap, reboots by reason, releases with their rates), a device's timeline (boots with reasons, a crash
// with its summary, update steps, heartbeats as charts of heap and RSSI; a single heartbeat without RSSI;
// a device with no report), and a release's health beside its rollout, whose health gate paused it.
// A crash message holding markup is shown as text. The Devices page's health columns, sorted, and its
// health filters, at 1,280 and 420 px. Screenshots go to /tmp/console-health-*.png.
import type { KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { atEachWidth, launchConsoleBrowser, logIn, overflow } from '../helpers/console-browser.ts';
import { bootReport, heartbeatReport, postReport, updateReport } from '../helpers/health.ts';

const TRACK = '/admin/firmware/ctl/0x00000071/ctl';
const A = '2026.01.01';
const B = '2026.02.01';
const XSS = '<img src=x onerror=window.__xss=1> TypeError: cannot read "lamp" of undefined';
const HOUR = 3_600_000;

let cloud: TestCloud;
let dir: string;
let context: BrowserContext;
let page: Page;
const keys = new Map<string, KeyObject>();
const seqs = new Map<string, number>();
/** The boards' clock: the hours before the test began, so that every report is in the last days. */
const t0 = Date.now() - 6 * HOUR;
const at = (hours: number) => new Date(t0 + hours * HOUR).toISOString();

const shot = (name: string) => page.screenshot({ path: `/tmp/console-health-${name}.png`, fullPage: true });
const xssRan = () => page.evaluate('window.__xss ?? null');

/** The device's next report (its own seq), signed and posted as a board does: 201. */
async function send(uuid: string, make: (seq: number) => object): Promise<void> {
  const seq = (seqs.get(uuid) ?? 0) + 1;
  seqs.set(uuid, seq);
  const r = await postReport(cloud.url, keys.get(uuid)!, uuid, make(seq));
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-console-health-'));
  cloud = await startTestCloud({ env: { OTA_CACHE_TTL_MS: '0' } });
  // Two releases; the newer one rolls out with a health gate: 100 per 1,000 device-hours over A, after 3 device-hours.
  expect((await cloud.admin('PUT', `${TRACK}/${A}`, { no_image: true })).status).toBe(201);
  expect((await cloud.admin('PUT', `${TRACK}/${B}`, { no_image: true, rollout: { percent: 100, groups: [], health_margin: 100, health_min_device_hours: 3 } })).status).toBe(201);
  for (const [uuid, version] of [['hb-a1', A], ['hb-b1', B], ['hb-b2', B], ['hb-eth', B], ['hb-quiet', B]] as const) {
    keys.set(uuid, (await cloud.enroll(uuid)).privateKey);
    await fetch(`${cloud.url}/ota/ctl/0x00000071/ctl?current_version=${version}`, { headers: { 'x-device-uuid': uuid } });
  }
  await cloud.cloud.inventory.flush();

  // A: 11.5 device-hours on three devices (hb-a1 10, hb-b2 1.5, hb-b1 none before its update), no unexpected reboot.
  await send('hb-a1', (s) => bootReport(s, { fw: A, up: 0, at: at(0) }));
  await send('hb-a1', (s) => heartbeatReport(s, { fw: A, up: 36_000, at: at(1) }));
  // hb-b1 updates to B, runs 3 hours of heartbeats (one on Ethernet: no RSSI), then aborts on an exception.
  await send('hb-b1', (s) => updateReport(s, { fw: A, version: B, outcome: 'downloading', up: 0, at: at(0) }));
  await send('hb-b1', (s) => bootReport(s, { fw: B, up: 0, reason: 'software', by: `ota ${B}`, at: at(0.1) }));
  await send('hb-b1', (s) => updateReport(s, { fw: B, version: B, outcome: 'succeeded', up: 30, at: at(0.2) }));
  const beats = [
    [3600, 41_000, 20_500, -58],
    [7200, 33_000, 26_000, null],
    [9000, 24_500, 31_000, -67],
    [10_800, 18_000, 35_500, -71],
  ] as const;
  for (const [up, block, chunk, rssi] of beats) {
    await send('hb-b1', (s) => heartbeatReport(s, { fw: B, up, block, chunk, rssi, at: at(0.1 + up / 3600) }));
  }
  await send('hb-b1', (s) => bootReport(s, { fw: B, up: 2, reason: 'abort', crash: { kind: 'unhandled_exception', message: XSS, where: 'lamps.js:42' }, at: at(3.2) }));
  // hb-b2: an update that failed, and a heartbeat low on heap.
  await send('hb-b2', (s) => updateReport(s, { fw: A, version: B, outcome: 'failed', reason: 'hash_mismatch', detail: 'SHA-256 of the image differs from the manifest', at: at(1) }));
  await send('hb-b2', (s) => heartbeatReport(s, { fw: A, up: 5400, block: 9_000, heap_min: 7_500, at: at(1.5) }));
  // hb-eth: one heartbeat, on Ethernet. hb-quiet: nothing.
  await send('hb-eth', (s) => heartbeatReport(s, { fw: B, up: 600, rssi: null, at: at(2) }));

  ({ context, page } = await launchConsoleBrowser(join(dir, 'profile')));
  await logIn(page, cloud.url);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await cloud?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the console's health pages", () => {
  it('the fleet health page: devices reporting, crashed, low on heap, reboots by reason, releases with their rates; rows lead to the device and the release', async () => {
    await page.getByRole('link', { name: 'Health', exact: true }).click();
    const summary = page.getByLabel('fleet summary');
    await summary.waitFor();
    expect(await summary.locator('dd').allTextContents()).toEqual(['4 of 5 enrolled', '1', '1', '0']);
    expect(await summary.locator('dt').allTextContents()).toEqual(['Devices reporting', 'Crashed in the last 7 days', 'Low heap (block under 16,384 B)', 'Reports dropped by boards']);
    await page.locator('tr[data-reason="abort"]').waitFor();
    expect(await page.locator('tr[data-reason]').allTextContents()).toEqual(['abort1']);
    // The devices behind the counts, from the inventory's filters; the crash message is text.
    const crashed = page.locator('section', { hasText: 'Crashed in the last 7 days' }).locator('tr[data-uuid="hb-b1"]');
    await crashed.waitFor();
    expect(await crashed.locator('.crash-message').textContent()).toBe(XSS);
    expect(await page.locator('main img').count()).toBe(0);
    const low = page.locator('section', { hasText: 'Low heap (largest free block' }).locator('tr[data-uuid]');
    await expect.poll(() => low.allTextContents()).toEqual([expect.stringMatching(/^hb-b29,000 B7,500 B/)]);
    // Releases: A without an unexpected reboot, B with one in its first 3 device-hours.
    const relA = page.locator(`tr[data-version="${A}"]`);
    const relB = page.locator(`tr[data-version="${B}"]`);
    expect(await relA.locator('td').allTextContents()).toEqual(['ctl/0x00000071/ctl', A, '3', '11.5', '0', '0.0', '100 %', '0 succeeded']);
    const b = await relB.locator('td').allTextContents();
    expect(b.slice(0, 5)).toEqual(['ctl/0x00000071/ctl', B, '2', '3.2', '1']);
    expect(Number(b[5])).toBeGreaterThan(300);
    expect(b.slice(6)).toEqual(['50.0 %', '1 succeeded, 1 failed: hash_mismatch']);
    expect(await xssRan()).toBeNull();
    await shot('fleet');
    // Another window: every device whose last heartbeat's largest free block is under 50,000 bytes.
    await page.getByLabel('Low heap below (bytes)').fill('50000');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => summary.locator('dd').allTextContents()).toEqual(['4 of 5 enrolled', '1', '4', '0']);
    await expect.poll(() => low.count()).toBe(4);
    await relB.getByRole('link', { name: B }).click();
    await page.waitForURL(/#\/releases\/ctl\/0x00000071\/ctl\/2026\.02\.01$/);
    await page.getByRole('link', { name: 'Health', exact: true }).click();
    await crashed.getByRole('link', { name: 'hb-b1' }).click();
    await page.waitForURL(/#\/devices\/hb-b1$/);
  });

  it("the Devices page's health columns: last report (or never), last crash with its kind, largest free block, RSSI; sorted with the missing last; filtered by crash and low heap", async () => {
    await page.goto(`${cloud.url}/console#/devices`);
    const listed = () => page.locator('tbody tr[data-uuid]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-uuid')));
    await expect.poll(listed).toEqual(['hb-a1', 'hb-b1', 'hb-b2', 'hb-eth', 'hb-quiet']);
    expect(await page.locator('thead th').allTextContents()).toEqual(['UUID ▲', 'Label', 'Track', 'Version', 'Last check', 'Last report', 'Last crash', 'Largest free block', 'RSSI', 'Last backup', 'Groups']);
    // What the API says of each device, in the page's words (the times as the console writes them).
    const api = new Map<string, any>((await cloud.adminJson('GET', '/admin/devices')).body.devices.map((d: any) => [d.uuid, d.health]));
    const utc = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;
    const health = (uuid: string) => page.locator(`tr[data-uuid="${uuid}"] td`).evaluateAll((tds) => tds.slice(5, 9).map((td) => [td.textContent, td.className]));
    const crash = api.get('hb-b1').last_crash;
    expect(crash).toMatchObject({ kind: 'unhandled_exception', at: at(3.2) });
    expect(await health('hb-a1')).toEqual([[utc(api.get('hb-a1').last_report_at), ''], ['none', ''], ['40,000 B', 'nowrap'], ['-61 dBm', 'nowrap']]);
    expect(await health('hb-b1')).toEqual([[utc(api.get('hb-b1').last_report_at), ''], [`${utc(crash.at)}: unhandled_exception`, 'bad'], ['18,000 B', 'nowrap'], ['-71 dBm', 'nowrap']]);
    expect(await health('hb-b2')).toEqual([[utc(api.get('hb-b2').last_report_at), ''], ['none', ''], ['9,000 B', 'nowrap bad'], ['-61 dBm', 'nowrap']]);
    expect(await health('hb-eth')).toEqual([[utc(api.get('hb-eth').last_report_at), ''], ['none', ''], ['40,000 B', 'nowrap'], ['—', 'nowrap']]);
    expect(await health('hb-quiet')).toEqual([['never', 'muted'], ['—', ''], ['—', ''], ['—', '']]);
    // The crash message stays on the device's page: the table shows no markup of it, and nothing ran.
    expect(await page.locator('tbody img').count()).toBe(0);
    expect(await xssRan()).toBeNull();
    // Each health header sorts, up and then down; a device without the figure is last either way.
    const sortBy = async (column: string, ascending: string[], descending: string[]) => {
      await page.locator('thead').getByRole('button', { name: new RegExp(`^${column}`) }).click();
      await expect.poll(listed).toEqual(ascending);
      expect(await page.locator('th[aria-sort="ascending"]').textContent()).toBe(`${column} ▲`);
      await page.locator('thead').getByRole('button', { name: new RegExp(`^${column}`) }).click();
      await expect.poll(listed).toEqual(descending);
    };
    // hb-a1 reported first, then hb-b1, hb-b2, hb-eth (as the cloud received them); hb-quiet never did.
    await sortBy('Last report', ['hb-a1', 'hb-b1', 'hb-b2', 'hb-eth', 'hb-quiet'], ['hb-eth', 'hb-b2', 'hb-b1', 'hb-a1', 'hb-quiet']);
    await sortBy('Last crash', ['hb-b1', 'hb-a1', 'hb-b2', 'hb-eth', 'hb-quiet'], ['hb-b1', 'hb-a1', 'hb-b2', 'hb-eth', 'hb-quiet']);
    await sortBy('Largest free block', ['hb-b2', 'hb-b1', 'hb-a1', 'hb-eth', 'hb-quiet'], ['hb-a1', 'hb-eth', 'hb-b1', 'hb-b2', 'hb-quiet']);
    await sortBy('RSSI', ['hb-b1', 'hb-a1', 'hb-b2', 'hb-eth', 'hb-quiet'], ['hb-a1', 'hb-b2', 'hb-b1', 'hb-eth', 'hb-quiet']);
    // Looked at sorted by the largest free block, the lowest first.
    await page.locator('thead').getByRole('button', { name: /^Largest free block/ }).click();
    await expect.poll(listed).toEqual(['hb-b2', 'hb-b1', 'hb-a1', 'hb-eth', 'hb-quiet']);
    await atEachWidth(page, async (width) => {
      expect(await overflow(page), `${width} px`).toBeLessThanOrEqual(0);
      await shot(`devices-${width}`);
      if (width < 1280) {
        // Narrow, the table scrolls in its own box: scrolled to its end, the health columns are there.
        const table = page.locator('table');
        expect(await table.evaluate((t) => t.scrollWidth > t.clientWidth)).toBe(true);
        await table.evaluate((t) => t.scrollTo(t.scrollWidth, 0));
        await table.screenshot({ path: `/tmp/console-health-devices-${width}-scrolled.png` });
      }
    });
    // The inventory's health filters, as `fleet device list --crashed-days N --low-heap BYTES` sends them.
    const apply = () => page.getByRole('button', { name: 'Apply' }).click();
    await page.getByLabel('Crashed in the last (days)').fill('7');
    await apply();
    await expect.poll(listed).toEqual(['hb-b1']);
    await page.getByLabel('Crashed in the last (days)').fill('');
    await page.getByLabel('Low heap below (bytes)').fill('16384');
    await apply();
    await expect.poll(listed).toEqual(['hb-b2']);
    await atEachWidth(page, async (width) => {
      expect(await overflow(page), `${width} px`).toBeLessThanOrEqual(0);
      await shot(`devices-low-heap-${width}`);
    });
    await page.getByLabel('Crashed in the last (days)').fill('7');
    await apply();
    await expect.poll(() => page.locator('p.muted', { hasText: /devices?$/ }).first().textContent()).toBe('0 devices');
    await page.getByLabel('Low heap below (bytes)').fill('');
    await page.getByLabel('Crashed in the last (days)').fill('');
    await apply();
    await expect.poll(listed).toHaveLength(5);
  });

  it("a device's timeline: boots with reasons, the crash with its summary as text, update steps, heartbeats as charts of heap and RSSI", async () => {
    await page.goto(`${cloud.url}/console#/devices/hb-b1`);
    const state = page.getByLabel('health state');
    await state.waitFor();
    expect(await state.textContent()).toMatch(/Last boot.*: abort on 2026\.02\.01Last crash.*: unhandled_exception on 2026\.02\.01.*Heaplargest free block 18,000 B.*RSSI-71 dBm/s);
    // The timeline lists boots and updates, newest first; heartbeats only when asked for.
    const rows = page.locator('tbody tr[data-kind]');
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-kind')))).toEqual(['boot', 'update', 'boot', 'update']);
    const crash = page.locator('tr[data-seq="8"]');
    expect(await crash.locator('.crash strong').textContent()).toBe('unhandled_exception');
    expect(await crash.locator('.crash-message').textContent()).toBe(XSS);
    expect(await crash.locator('.where').textContent()).toBe('at lamps.js:42');
    expect(await crash.locator('img').count()).toBe(0);
    expect(await xssRan()).toBeNull();
    expect(await page.locator('tr[data-seq="2"] .what').textContent()).toMatch(/^software by ota 2026\.02\.01/);
    expect(await page.locator('tr[data-seq="3"] .what').textContent()).toBe(`update to ${B}: succeeded`);
    await page.getByLabel('List heartbeats too').check();
    await expect.poll(() => rows.count()).toBe(8);
    expect(await page.locator('tr[data-seq="5"] .what').textContent()).toMatch(/largest free block 33,000 B.*RSSI —/);
    // Two charts: heap (two series, four points each) and RSSI (three points, a gap where it had none).
    const heap = page.getByRole('img', { name: 'Heap over time' });
    const rssi = page.getByRole('img', { name: 'RSSI over time' });
    expect(await heap.locator('.s-block circle').count()).toBe(4);
    expect(await heap.locator('.s-chunk circle').count()).toBe(4);
    expect(await heap.locator('polyline').count()).toBe(2);
    expect(await rssi.locator('circle').count()).toBe(3);
    expect(await rssi.locator('polyline').count()).toBe(1); // the two after the gap; the one before it a dot
    expect(await heap.locator('text.axis-title').allTextContents()).toEqual(['KB', 'time (UTC)']);
    expect(await rssi.locator('text.axis-title').allTextContents()).toEqual(['dBm', 'time (UTC)']);
    // Daily aggregates (all today, as the cloud received them).
    expect(await page.locator('tr[data-day]').count()).toBeGreaterThan(0);
    await shot('device');
    await heap.screenshot({ path: '/tmp/console-health-chart-heap.png' });
    await rssi.screenshot({ path: '/tmp/console-health-chart-rssi.png' });
    // On a phone-sized screen the charts shrink with the page.
    await page.setViewportSize({ width: 390, height: 844 });
    expect((await heap.boundingBox())!.width).toBeLessThanOrEqual(390);
    await shot('device-phone');
    await heap.screenshot({ path: '/tmp/console-health-chart-heap-phone.png' });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('a device with a single heartbeat and no RSSI, and a device that never reported: their pages say so', async () => {
    await page.goto(`${cloud.url}/console#/devices/hb-eth`);
    const heap = page.getByRole('img', { name: 'Heap over time' });
    await heap.waitFor();
    expect(await heap.locator('circle').count()).toBe(2);
    expect(await heap.locator('polyline').count()).toBe(0);
    expect(await page.getByText('RSSI: no heartbeat carried one (a controller on Ethernet).').count()).toBe(1);
    expect(await page.getByText('Only heartbeats in these reports.').count()).toBe(1);
    await shot('device-single');
    await page.goto(`${cloud.url}/console#/devices/hb-quiet`);
    await page.getByText('No health report from this device yet').waitFor();
    expect(await page.getByRole('img').count()).toBe(0);
    expect(await page.getByLabel('device hb-quiet').textContent()).toMatch(/Last OTA check.*2026\.02\.01/);
    await shot('device-empty');
  });

  it("a release's health beside its rollout: the figures against the previous release, outcomes by reason, the health gate that paused the rollout", async () => {
    await page.goto(`${cloud.url}/console#/releases`);
    await page.locator(`tr[data-version="${B}"]`).getByRole('link', { name: B }).click();
    await page.waitForURL(/#\/releases\/ctl\/0x00000071\/ctl\/2026\.02\.01$/);
    const figure = (name: string) => page.locator(`tr[data-figure="${name}"] td`).allTextContents();
    await page.locator('tr[data-figure="Devices"]').waitFor();
    expect(await page.locator('thead th').allTextContents()).toEqual(['', B, `${A} (previous)`]);
    expect(await figure('Devices')).toEqual(['2', '3']);
    expect(await figure('Device-hours')).toEqual(['3.2', '11.5']);
    expect(await figure('Unexpected reboots')).toEqual(['1: abort 1', '0']);
    expect(await figure('Crash-free share')).toEqual(['50.0 %', '100 %']);
    expect(await figure('Crashes by kind')).toEqual(['unhandled_exception 1', 'none']);
    expect(await figure('Updates to it')).toEqual(['1 succeeded, 1 failed: hash_mismatch', '0 succeeded']);
    // The rollout paused itself on health, and the gate says why.
    const gate = page.getByLabel('health gate');
    expect(await gate.textContent()).toMatch(/Margin100 unexpected reboots per 1,000 device-hours over the previous release \(pauses above 100\.0; now \d+\.\d\)Judges after3 device-hoursVerdictover the marginRolloutpaused/);
    expect(await gate.locator('.reason').textContent()).toMatch(/^health: \d+\.\d unexpected reboots per 1,000 device-hours \(over 3\.\d device-hours\) against 0\.0 on 2026\.01\.01, the previous release; margin 100$/);
    const rollout = page.locator('.rollout');
    expect(await rollout.textContent()).toMatch(/paused at 100 %/);
    await shot('release');
    // How far it went: the outcomes as a bar, and the devices behind each count, linked to their pages.
    const outcomes = (await cloud.adminJson('GET', `${TRACK}/${B}/rollout`)).body.outcomes as Record<'succeeded' | 'failed' | 'pending', number>;
    const offered = outcomes.succeeded + outcomes.failed + outcomes.pending;
    expect(await page.locator('.progress .bar').getAttribute('aria-label')).toBe(`${outcomes.succeeded} succeeded, ${outcomes.failed} failed, ${outcomes.pending} pending of ${offered} offered`);
    expect(offered).toBeGreaterThan(0);
    for (const kind of ['succeeded', 'failed', 'pending'] as const) {
      if (outcomes[kind] === 0) continue;
      await page.getByRole('button', { name: `${outcomes[kind]} ${kind}`, exact: true }).click();
      const listed = (await cloud.adminJson('GET', `${TRACK}/${B}/rollout/devices?outcome=${kind}`)).body.devices.map((d: any) => d.uuid);
      const rows = page.getByLabel(`devices ${kind}`).locator('tbody tr');
      await expect.poll(() => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-uuid')))).toEqual(listed);
      expect(await rows.first().locator('a').getAttribute('href')).toBe(`#/devices/${listed[0]}`);
      await shot(`release-${kind}`);
      await page.getByRole('button', { name: `${outcomes[kind]} ${kind}`, exact: true }).click();
    }
    // Steered from here as from the releases page: resumed, the gate shows it.
    await rollout.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => gate.locator('.state').textContent()).toBe('active');
    expect((await cloud.adminJson('GET', `${TRACK}/${B}/rollout`)).body.state).toBe('active');
    await page.goto(`${cloud.url}/console#/releases/ctl/0x00000071/ctl/${A}`);
    await page.getByText('No staged rollout: offered to every device on the track.').waitFor();
    expect(await page.getByText('No staged rollout: no health gate.').count()).toBe(1);
    expect(await page.locator('thead th').allTextContents()).toEqual(['', A, 'previous release']);
  });
});
