// Cloud backup from the page (spec 4.2) in Debian's chromium, against a virtual controller and the
// real cloud: the admin log-in and its throttle as a person reads it, the controller's cloud URL,
// push (and push unchanged), retrieve after the controller lost its backup, delete; every refusal
// shown as the controller words it.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchBoard } from '../../harness/board.ts';
import { addController, ethernetUrl, openBench, type ConfiguratorBench } from './fixture.ts';

let bench: ConfiguratorBench;
let page: Page;
let source: BenchBoard;
let id: number;

const message = () => page.getByTestId('cloud-message').textContent();

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
    await page.getByRole('button', { name: 'Back up to the cloud' }).click();
    await expect.poll(message).toBe('Source: The device is not provisioned for the cloud (no cloud configuration)');
    await page.getByLabel('Cloud URL on the controller').fill(bench.ctx.cloud.url);
    await page.getByRole('button', { name: 'Save cloud URL' }).click();
    await expect.poll(message).toBe(`Source backs up to ${bench.ctx.cloud.url}`);
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
    await page.getByRole('button', { name: 'Delete the cloud backup' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await bench.ctx.cloud.store.getBackup(source.spec.uuid)).not.toBeNull();
    await page.getByRole('button', { name: 'Delete the cloud backup' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await expect.poll(message, { timeout: 20_000 }).toBe('The cloud backup is deleted');
    expect(await bench.ctx.cloud.store.getBackup(source.spec.uuid)).toBeNull();
    await page.getByRole('button', { name: 'Retrieve from the cloud' }).click();
    await expect.poll(message, { timeout: 20_000 }).toBe('Source: There is no backup of this device in the cloud');
    await bench.shot('3-deleted');
    // The site's configuration is untouched by all of it.
    expect(bench.configurator.store.configuration(id).configuration.format).toBe('fleet-controller-configuration-v1');
    expect(bench.problems).toEqual([]);
  });
});
