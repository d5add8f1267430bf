// The console's answers to two questions and its device actions, in a real browser (Debian's chromium
// driven by playwright-core) against the real cloud on loopback (docs/operator-console.md): how many
// devices run each version of a track (the Releases page, each version opening the devices page
// filtered by it; the track's trusted signing keys by their labels), and a device's page setting its label and groups and removing it (in the danger
// style, after an in-page confirmation naming it), refusals shown as the API's message, each action in
// the audit log as the console's. Every part at 1,280 px and at 420 px wide, which must not overflow.
// Screenshots go to reports/console/actions-*.png.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { atEachWidth, launchConsoleBrowser, logIn, overflow } from '../helpers/console-browser.ts';

const SHOTS = new URL('../../reports/console/', import.meta.url).pathname;
const TRACK = { class: 'ctl-s3', product_hex: '0x00c0ffee', application: 'ctl-s3' };
const TRACK_PATH = `/admin/firmware/${TRACK.class}/${TRACK.product_hex}/${TRACK.application}`;
const XSS_LABEL = '<img src=x onerror="window.__xss=1">Boiler <b>room</b>';
/** What each device reports at its OTA check: three on the newest release, two behind, one on a revoked one. */
const FLEET: [string, string][] = [
  ['act-01', '2026.03.01'],
  ['act-02', '2026.03.01'],
  ['act-03', '2026.03.01'],
  ['act-04', '2026.02.01'],
  ['act-05', '2026.02.01'],
  ['act-06', '2026.01.01'],
];

let cloud: TestCloud;
let dir: string;
let context: BrowserContext;
let page: Page;

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `actions-${name}.png`), fullPage: true });
const xssRan = () => page.evaluate('window.__xss ?? null');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-console-actions-'));
  mkdirSync(SHOTS, { recursive: true });
  cloud = await startTestCloud();
  for (const v of ['2026.01.01', '2026.02.01', '2026.03.01']) expect((await cloud.admin('PUT', `${TRACK_PATH}/${v}`, { no_image: true })).status).toBe(201);
  expect((await cloud.admin('POST', `${TRACK_PATH}/2026.01.01/revoke`)).status).toBe(200);
  // Two trusted keys: one named by the operator, one known by its digest alone.
  const signing = { required: false, keys: [{ digest: 'ab'.repeat(32), label: 'release 2026' }, { digest: 'cd'.repeat(32) }] };
  expect((await cloud.admin('PUT', `/admin/tracks/${TRACK.class}/${TRACK.product_hex}/${TRACK.application}/signing`, signing)).status).toBe(200);
  for (const [uuid, version] of FLEET) {
    await cloud.enroll(uuid);
    await fetch(`${cloud.url}/ota/${TRACK.class}/${TRACK.product_hex}/${TRACK.application}?current_version=${version}`, { headers: { 'x-device-uuid': uuid } });
  }
  await cloud.enroll('act-never');
  await cloud.cloud.inventory.flush();
  ({ context, page } = await launchConsoleBrowser(join(dir, 'profile')));
  await logIn(page, cloud.url, 'ops-carol');
}, 120_000);

afterAll(async () => {
  await context?.close();
  await cloud?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('devices per version', () => {
  it('the Releases page counts the devices on each version of the track, newest first, as the API does', async () => {
    await page.goto(`${cloud.url}/console#/releases`);
    const table = page.locator('.device-versions');
    await table.locator('tr[data-devices-version]').first().waitFor();
    const rows = await table.locator('tr[data-devices-version]').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    expect(rows).toEqual([
      ['2026.03.01', '3', '50 %', 'RELEASED'],
      ['2026.02.01', '2', '33 %', 'RELEASED'],
      ['2026.01.01', '1', '17 %', 'REVOKED'],
    ]);
    const api = (await cloud.adminJson('GET', `/admin/device-versions?class=${TRACK.class}`)).body;
    expect(api.tracks[0].versions.map((v: any) => [v.version, String(v.devices)])).toEqual(rows.map((r) => [r[0], r[1]]));
    expect(await table.locator('p.muted').textContent()).toBe('6 devices on this track, by the version each reported at its last check:');
    // A trusted key by its label and the start of its digest; one without a label by its digest.
    expect(await page.locator('p.signing').textContent()).toBe(`Signing: not required (unsigned images accepted); trusted keys: release 2026 (${'ab'.repeat(6)}…), ${'cd'.repeat(6)}…`);
    await atEachWidth(page, async (width) => {
      await table.scrollIntoViewIfNeeded();
      expect(await overflow(page), `${width} px`).toBeLessThanOrEqual(0);
      await shot(`releases-${width}`);
    });
  });

  it('a version opens the devices page filtered by the track and that version; "Any track" drops the track', async () => {
    await page.goto(`${cloud.url}/console#/releases`);
    await page.locator('.device-versions').getByRole('link', { name: '2026.02.01' }).click();
    await page.waitForURL(/#\/devices\?/);
    const listed = () => page.locator('tbody tr[data-uuid]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-uuid')));
    await expect.poll(listed).toEqual(['act-04', 'act-05']);
    expect(await page.locator('.on-track').textContent()).toBe(`On track ${TRACK.class}/${TRACK.product_hex}/${TRACK.application} Any track`);
    expect(await page.getByLabel('Version').inputValue()).toBe('2026.02.01');
    await atEachWidth(page, async (width) => {
      expect(await overflow(page), `${width} px`).toBeLessThanOrEqual(0);
      await shot(`devices-filtered-${width}`);
    });
    await page.getByRole('button', { name: 'Any track' }).click();
    await expect.poll(() => page.locator('.on-track').count()).toBe(0);
    await expect.poll(listed).toEqual(['act-04', 'act-05']);
    await page.getByLabel('Version').fill('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(listed).toEqual([...FLEET.map(([u]) => u), 'act-never']);
  });
});

describe("a device's actions", () => {
  const open = async (uuid: string) => {
    await page.goto(`${cloud.url}/console#/devices/${uuid}`);
    await page.getByRole('button', { name: 'Save label' }).waitFor();
  };

  it('sets the label (shown as text, nothing runs) and clears it', async () => {
    await open('act-01');
    await page.getByLabel('Label', { exact: true }).fill(XSS_LABEL);
    await page.getByRole('button', { name: 'Save label' }).click();
    await expect.poll(() => page.locator('form[aria-label=label] [role=status]').textContent()).toBe('Label saved.');
    const details = page.getByLabel('device act-01');
    await expect.poll(() => details.locator('dd').nth(1).textContent()).toBe(XSS_LABEL);
    expect(await details.locator('img, b').count()).toBe(0);
    expect(await xssRan()).toBeNull();
    expect((await cloud.adminJson('GET', '/admin/devices/act-01')).body.label).toBe(XSS_LABEL);
    await page.getByLabel('Label', { exact: true }).fill('  ');
    await page.getByRole('button', { name: 'Save label' }).click();
    await expect.poll(() => page.locator('form[aria-label=label] [role=status]').textContent()).toBe('Label cleared.');
    await expect.poll(() => details.locator('dd').nth(1).textContent()).toBe('—');
    expect((await cloud.adminJson('GET', '/admin/devices/act-01')).body.label).toBeUndefined();
  });

  it("replaces the groups, and shows the API's refusal of a bad one", async () => {
    await open('act-02');
    await page.getByLabel('Groups', { exact: true }).fill('beta, lab  beta');
    await page.getByRole('button', { name: 'Save groups' }).click();
    await expect.poll(() => page.locator('form[aria-label=groups] [role=status]').textContent()).toBe('Groups saved: beta, lab.');
    expect((await cloud.adminJson('GET', '/admin/devices/act-02')).body.groups).toEqual(['beta', 'lab']);
    await expect.poll(() => page.getByLabel('device act-02').textContent()).toMatch(/Groupsbeta, lab/);
    await page.getByLabel('Groups', { exact: true }).fill('beta hall/west');
    await page.getByRole('button', { name: 'Save groups' }).click();
    const refusal = page.locator('form[aria-label=groups] [role=alert]');
    await expect.poll(() => refusal.textContent()).toMatch(/\(invalid_device_groups\)$/);
    expect(await refusal.textContent()).toContain('hall/west');
    expect((await cloud.adminJson('GET', '/admin/devices/act-02')).body.groups).toEqual(['beta', 'lab']);
    await atEachWidth(page, async (width) => {
      expect(await overflow(page), `${width} px`).toBeLessThanOrEqual(0);
      await shot(`device-${width}`);
    });
  });

  it('removes a device only after an in-page confirmation naming it, in the danger style; Cancel keeps it', async () => {
    await open('act-06');
    const start = page.getByRole('button', { name: 'Remove device…' });
    // The danger style: white on red, unlike every other button.
    // Runs in the browser (the tests are type-checked for Node, not for the DOM).
    const colours = (el: typeof start) =>
      el.evaluate((b) => {
        const style = (globalThis as unknown as { getComputedStyle: (e: unknown) => { color: string; backgroundColor: string } }).getComputedStyle(b);
        return [style.color, style.backgroundColor];
      });
    expect(await colours(start)).toEqual(['rgb(255, 255, 255)', 'rgb(180, 35, 24)']);
    expect(await colours(page.getByRole('button', { name: 'Save label' }))).not.toEqual(['rgb(255, 255, 255)', 'rgb(180, 35, 24)']);
    let dialogs = 0;
    page.on('dialog', (d) => {
      dialogs++;
      void d.dismiss();
    });
    await start.click();
    const confirm = page.getByRole('group', { name: 'confirm removing act-06' });
    expect(await confirm.locator('p').first().textContent()).toMatch(/^Remove act-06\? It can no longer sign its requests/);
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await confirm.count()).toBe(0);
    expect((await cloud.adminJson('GET', '/admin/devices/act-06')).status).toBe(200);
    await start.click();
    await atEachWidth(page, async (width) => {
      await confirm.scrollIntoViewIfNeeded();
      expect(await overflow(page), `${width} px`).toBeLessThanOrEqual(0);
      await shot(`remove-confirm-${width}`);
    });
    expect(await colours(page.getByRole('button', { name: 'Remove act-06' }))).toEqual(['rgb(255, 255, 255)', 'rgb(180, 35, 24)']);
    await page.getByRole('button', { name: 'Remove act-06' }).click();
    await expect.poll(() => page.locator('.removed').textContent()).toBe('Device act-06 was removed; its stored backup is kept. Back to the devices');
    expect(dialogs).toBe(0); // no window.confirm
    expect((await cloud.adminJson('GET', '/admin/devices/act-06')).status).toBe(404);
    await shot('removed');
  });

  it('says why a removal failed: the device was removed meanwhile', async () => {
    await open('act-05');
    expect((await cloud.admin('DELETE', '/admin/devices/act-05')).status).toBe(204);
    await page.getByRole('button', { name: 'Remove device…' }).click();
    await page.getByRole('button', { name: 'Remove act-05' }).click();
    await expect.poll(() => page.getByRole('group', { name: 'confirm removing act-05' }).locator('[role=alert]').textContent()).toBe('No such device (device_not_found)');
    expect(await page.locator('.removed').count()).toBe(0);
  });

  it("each action is in the audit log as the console's, with who made it", async () => {
    const { entries } = (await cloud.adminJson('GET', '/admin/audit?actor=ops-carol&limit=20')).body;
    const actions = entries.filter((e: any) => e.action !== 'consoleLogin').map((e: any) => [e.action, e.via, e.status, e.details]);
    expect(actions).toEqual([
      ['removeDevice', 'console', 404, null],
      ['removeDevice', 'console', 204, null],
      ['setDeviceGroups', 'console', 400, null],
      ['setDeviceGroups', 'console', 200, { groups: ['beta', 'lab'] }],
      ['setDeviceLabel', 'console', 200, { label: null }],
      ['setDeviceLabel', 'console', 200, { label: XSS_LABEL }],
    ]);
  });
});
