// Cloud backup from the page (spec 4.2) in Debian's chromium, against a virtual controller and the
// real cloud: the admin log-in and its throttle as a person reads it, the controller's cloud URL,
// push (and push unchanged), retrieve after the controller lost its backup, delete; every refusal
// shown as the controller words it.
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchBoard } from '../../harness/board.ts';
import { ACCENT_RGB, addController, backgroundOf, DANGER_RGB, ethernetUrl, hasFocus, openBench, type ConfiguratorBench } from './fixture.ts';

let bench: ConfiguratorBench;
let page: Page;
let source: BenchBoard;
let id: number;

const message = () => page.getByTestId('cloud-message').textContent();
/** What the tab says the cloud holds, or why it cannot tell. */
const held = () => page.locator('[data-testid="cloud-held"], [data-testid="cloud-held-message"]').first().textContent();

beforeAll(async () => {
  bench = await openBench('cloud');
  page = bench.page;
  source = bench.board('source');
  await bench.ctx.start(source);
  // The fleet operator enrolled the controller (fleet device enroll); its cloud URL is set from the page.
  const answer = await source.command('pubkey');
  const r = await bench.ctx.admin('PUT', `/admin/devices/${source.spec.uuid}`, { public_key: JSON.parse(answer.slice(3)).public_key_pem });
  expect(r.status).toBe(201);
}, 180_000);

afterAll(async () => {
  await bench?.close();
});

describe('cloud backup from the configurator', () => {
  it('a wrong admin password is refused; from the sixth try in a row the page says when to try again', { timeout: 60_000 }, async () => {
    await page.goto(bench.configurator.url);
    await addController(page, 'Source', ethernetUrl(source));
    id = bench.configurator.store.controllers()[0]!.id;
    const password = page.getByLabel('Admin password of Source');
    const login = page.getByTestId('login-message');
    const attempt = async (typed: string) => {
      await password.fill(typed);
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith(`/api/controllers/${id}/login`)), page.getByRole('button', { name: 'Log in' }).click()]);
      return answer.status();
    };
    for (let i = 1; i <= 5; i++) {
      expect(await attempt(`wrong password ${i}`)).toBe(401);
      await expect.poll(() => login.textContent()).toBe('Source: The password is not valid');
    }
    // Within the back-off even the right password is not checked (docs/firmware-login-throttle.md).
    expect(await attempt(source.spec.adminPassword)).toBe(429);
    await expect.poll(() => login.textContent()).toBe('Source: Too many failed attempts: try again in 1 s');
    await bench.shot('1-login-throttled');
    await new Promise((r) => setTimeout(r, 1100));
    expect(await attempt(source.spec.adminPassword)).toBe(200);
    await expect.poll(() => page.locator('.badge').textContent(), { timeout: 15_000 }).toBe('Deployment Required');
  });

  it('push before the controller knows its cloud: the controller\'s 409 is shown; then the URL is set from the page', { timeout: 60_000 }, async () => {
    await page.locator('article.controller').getByRole('button', { name: 'Deploy' }).click();
    await expect.poll(() => page.locator('.badge').textContent(), { timeout: 15_000 }).toBe('In sync');
    await page.goto(`${bench.configurator.url}#/controllers/${id}/cloud`);
    // Opened, the tab asks what the cloud holds: the controller cannot tell yet, and says why.
    await expect.poll(held).toBe('Source: The device is not provisioned for the cloud (no cloud configuration)');
    await page.getByRole('button', { name: 'Back up to the cloud' }).click();
    await expect.poll(message).toBe('Source: The device is not provisioned for the cloud (no cloud configuration)');
    await page.getByLabel('Cloud URL on the controller').fill(bench.ctx.cloud.url);
    await page.getByRole('button', { name: 'Save cloud URL' }).click();
    await expect.poll(message).toBe(`Source backs up to ${bench.ctx.cloud.url}`);
    await expect.poll(held).toBe('The cloud holds no backup of this controller.');
    const auth = await bench.ctx.login(source);
    expect((await source.http('ethernet', 'GET', '/api/cloud', { headers: auth })).json).toEqual({ url: bench.ctx.cloud.url });
  });

  it('push stores an encrypted blob whose ETag is the site export\'s; a second push is unchanged', { timeout: 60_000 }, async () => {
    const siteEtag = bench.configurator.store.configuration(id).etag;
    await page.getByRole('button', { name: 'Back up to the cloud' }).click();
    await expect.poll(message, { timeout: 20_000 }).toMatch(new RegExp(`^Backed up to the cloud: ETag ${siteEtag.slice(0, 12)} at \\d{4}-\\d\\d-\\d\\dT`));
    const stored = await bench.ctx.cloud.store.getBackup(source.spec.uuid);
    expect(stored?.blob.subarray(0, 4).toString()).toBe('FFCE');
    expect(stored?.etag).toBe(siteEtag);
    expect(stored?.blob.includes(Buffer.from('fleet-controller-configuration-v1'))).toBe(false);
    await page.getByRole('button', { name: 'Back up to the cloud' }).click();
    await expect.poll(message, { timeout: 20_000 }).toBe(`The cloud already holds this backup (ETag ${siteEtag.slice(0, 12)})`);
    await bench.shot('2-pushed');
  });

  it('opened again, the tab shows what the cloud holds without a push: its time, its ETag, the same as the controller\'s and the site\'s', { timeout: 60_000 }, async () => {
    const siteEtag = bench.configurator.store.configuration(id).etag;
    const stored = await bench.ctx.cloud.store.getBackupMeta(source.spec.uuid);
    const asked: string[] = [];
    const onRequest = (r: Request) => void (new URL(r.url()).pathname.includes('/cloud-backup') && asked.push(`${r.method()} ${new URL(r.url()).pathname}`));
    page.on('request', onRequest);
    await page.goto(bench.configurator.url);
    await page.goto(`${bench.configurator.url}#/controllers/${id}/cloud`);
    const shown = await page.evaluate((d) => new Date(d).toLocaleString(), stored!.lastBackupDate);
    await expect.poll(held, { timeout: 20_000 }).toBe(`Backed up${shown}Cloud ETag${siteEtag.slice(0, 12)}Against the controllerthe same backupAgainst this sitethe same as this site's configuration`);
    page.off('request', onRequest);
    // Only the read went to the configurator: no push, no retrieve.
    expect(asked).toEqual([`GET /api/controllers/${id}/cloud-backup`]);
    expect(await bench.ctx.cloud.store.getBackupMeta(source.spec.uuid)).toEqual(stored);
    await bench.shot('3-held');
    await page.setViewportSize({ width: 420, height: 900 });
    await bench.shot('3-held-420');
    await page.setViewportSize({ width: 1280, height: 900 });
    // An edit the site has not deployed: the cloud's copy is no longer this site's configuration.
    const doc = bench.configurator.store.configuration(id).configuration;
    bench.configurator.store.setConfiguration(id, { ...doc, mqtt: { ...doc.mqtt, base_topic: 'site/changed' } });
    await page.getByRole('button', { name: 'Read again' }).click();
    await expect.poll(held).toContain("Against this sitenot this site's configuration");
    bench.configurator.store.setConfiguration(id, doc);
  });

  it('retrieve puts the backup back on a controller that lost it: the indicator is in sync again', { timeout: 60_000 }, async () => {
    const auth = await bench.ctx.login(source);
    expect((await source.http('ethernet', 'DELETE', '/backup', { headers: auth })).status).toBe(204);
    await page.goto(bench.configurator.url);
    await expect.poll(() => page.getByTestId('backup-state').textContent(), { timeout: 15_000 }).toBe('No backup on the device');
    await page.goto(`${bench.configurator.url}#/controllers/${id}/cloud`);
    await page.getByRole('button', { name: 'Retrieve from the cloud' }).click();
    const site = bench.configurator.store.configuration(id);
    await expect.poll(message, { timeout: 20_000 }).toBe(`Retrieved from the cloud: ${site.size} bytes written to the controller, ETag ${site.etag.slice(0, 12)}`);
    expect((await source.http('ethernet', 'GET', '/backup', { headers: auth })).text).toBe(site.text);
    await page.goto(bench.configurator.url);
    await expect.poll(() => page.locator('.badge').textContent(), { timeout: 15_000 }).toBe('In sync');
  });

  it('delete removes the cloud backup (after a confirmation); retrieving then shows the controller\'s 404', { timeout: 60_000 }, async () => {
    await page.goto(`${bench.configurator.url}#/controllers/${id}/cloud`);
    await expect.poll(held, { timeout: 20_000 }).toContain('Cloud ETag');
    const remove = page.getByRole('button', { name: 'Delete the cloud backup' });
    // A danger button, unlike the others; it only opens a confirmation that says what is lost.
    await expect.poll(() => remove.isEnabled()).toBe(true); // not the disabled shade of a busy moment
    await expect.poll(() => backgroundOf(remove)).toBe(DANGER_RGB);
    await expect.poll(() => backgroundOf(page.getByRole('button', { name: 'Back up to the cloud' }))).toBe(ACCENT_RGB);
    await remove.click();
    const confirm = page.getByRole('alertdialog', { name: 'Confirm: Delete for good' });
    await expect.poll(() => hasFocus(confirm.getByRole('button', { name: 'Cancel' }))).toBe(true);
    const stored = await bench.ctx.cloud.store.getBackupMeta(source.spec.uuid);
    const when = await page.evaluate((d) => new Date(d).toLocaleString(), stored!.lastBackupDate);
    expect(await confirm.locator('p').textContent()).toBe(
      `Delete Source's backup in the cloud (of ${when}) for good? The controller's own backup (/backup.json) is removed too. This site keeps its configuration of Source: Deploy writes it back.`,
    );
    await page.setViewportSize({ width: 420, height: 900 });
    await bench.shot('4-delete-confirm-420');
    await page.setViewportSize({ width: 1280, height: 900 });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect(await bench.ctx.cloud.store.getBackup(source.spec.uuid)).not.toBeNull();
    await remove.click();
    await confirm.getByRole('button', { name: 'Delete for good' }).click();
    await expect.poll(message, { timeout: 20_000 }).toBe('The cloud backup is deleted');
    expect(await bench.ctx.cloud.store.getBackup(source.spec.uuid)).toBeNull();
    await expect.poll(held, { timeout: 20_000 }).toBe('The cloud holds no backup of this controller.');
    await page.getByRole('button', { name: 'Retrieve from the cloud' }).click();
    await expect.poll(message, { timeout: 20_000 }).toBe('Source: There is no backup of this device in the cloud');
    await bench.shot('5-deleted');
    // The site's configuration is untouched by all of it.
    expect(bench.configurator.store.configuration(id).configuration.format).toBe('fleet-controller-configuration-v1');
    expect(bench.problems).toEqual([]);
  });
});
