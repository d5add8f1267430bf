// The controllers page in Debian's chromium against two virtual controllers: Deployment Required
// (no backup on the device, then a site that differs) clears after Deploy; a second site pulls a
// controller's backup; a bad or oversized configuration is refused with a message and nothing is
// lost; a controller that stops answering mid-session is shown as such and the page stays usable.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigurator, type RunningConfigurator } from '../../configurator/server/app.ts';
import { etagOf } from '../../configurator/server/export.ts';
import type { BenchBoard } from '../../harness/board.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { ACCENT_RGB, addController, backgroundOf, DANGER_RGB, ethernetUrl, hasFocus, openBench, REPORT_DIR, type ConfiguratorBench } from './fixture.ts';

let bench: ConfiguratorBench;
let page: Page;
let source: BenchBoard;
let target: BenchBoard;
const ids: Record<string, number> = {};

const row = (name: string) => page.locator('article.controller', { has: page.getByRole('heading', { name, exact: true }) });
const siteEtag = (id: number) => bench.configurator.store.configuration(id).etag;

async function add(name: string, address: string): Promise<void> {
  await addController(page, name, address);
  ids[name] = bench.configurator.store.controllers().find((c) => c.name === name)!.id;
}

async function logIn(name: string, password: string): Promise<void> {
  const r = row(name);
  await r.getByLabel(`Admin password of ${name}`).fill(password);
  await r.getByRole('button', { name: 'Log in' }).click();
}

beforeAll(async () => {
  bench = await openBench('controllers');
  page = bench.page;
  source = bench.board('source');
  target = bench.board('target');
  await Promise.all([bench.ctx.start(source), bench.ctx.start(target)]);
}, 180_000);

afterAll(async () => {
  await bench?.close();
});

describe('the controllers page', () => {
  it('adds two controllers, logs in, and shows "no backup on the device" with Deployment Required', { timeout: 60_000 }, async () => {
    await page.goto(bench.configurator.url);
    await expect.poll(() => page.getByText('No controllers yet').isVisible()).toBe(true);
    await add('Source', ethernetUrl(source));
    await add('Target', ethernetUrl(target));
    await expect.poll(() => row('Source').locator('.badge').textContent()).toBe('Log in to compare');
    await logIn('Source', source.spec.adminPassword);
    await logIn('Target', target.spec.adminPassword);
    for (const [name, board] of [['Source', source], ['Target', target]] as const) {
      await expect.poll(() => row(name).locator('.badge').textContent(), { timeout: 15_000 }).toBe('Deployment Required');
      expect(await row(name).getByTestId('backup-state').textContent()).toBe('No backup on the device');
      expect(await row(name).locator('dd').nth(2).textContent()).toBe(board.spec.firmwareVersion);
    }
    await bench.shot('1-deployment-required');
    expect(bench.problems).toEqual([]);
  });

  it('Deploy writes PUT /backup and the indicator clears; the controller holds the site export byte for byte', { timeout: 60_000 }, async () => {
    await row('Source').getByRole('button', { name: 'Deploy' }).click();
    await expect.poll(() => row('Source').locator('.badge').textContent(), { timeout: 15_000 }).toBe('In sync');
    expect(await row('Source').getByTestId('row-message').textContent()).toMatch(/^Deployed: \d+ bytes, ETag [0-9a-f]{12}, 0 record\(s\) written$/);
    const auth = await bench.ctx.login(source);
    const onDevice = await source.http('ethernet', 'GET', '/backup', { headers: auth });
    expect(onDevice.status).toBe(200);
    expect(onDevice.text).toBe(bench.configurator.store.configuration(ids.Source!).text);
    expect(onDevice.headers.get('etag')).toBe(`"${siteEtag(ids.Source!)}"`);
    expect(etagOf(onDevice.bytes)).toBe(siteEtag(ids.Source!));
    // The other controller still needs its deployment.
    expect(await row('Target').locator('.badge').textContent()).toBe('Deployment Required');
    await bench.shot('2-deployed');
  });

  it('an edit saved to the site makes the controller differ (Deployment Required); Deploy clears it again', { timeout: 60_000 }, async () => {
    await row('Source').getByRole('link', { name: 'Source' }).click();
    await page.getByRole('button', { name: 'Add to outputs' }).click();
    const item = page.getByRole('group', { name: 'Outputs 1' });
    await item.getByLabel('Name').fill('Hall lights');
    await item.getByLabel('GPIO').fill('12');
    await page.getByRole('button', { name: 'Add to circuits' }).click();
    const circuit = page.getByRole('group', { name: 'Circuits 1' });
    await circuit.getByLabel('Name').fill('Hall');
    await circuit.getByRole('checkbox', { name: 'out-1' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByTestId('configuration-message').textContent()).toMatch(/^Saved: \d+ bytes/);
    expect(bench.configurator.store.configuration(ids.Source!).configuration.circuits).toEqual([{ id: 'cir-1', name: 'Hall', outputs: ['out-1'], inputs: [] }]);
    await bench.shot('3-configuration');
    await page.getByRole('link', { name: 'Controllers' }).first().click();
    await expect.poll(() => row('Source').locator('.badge').textContent(), { timeout: 15_000 }).toBe('Deployment Required');
    expect(await row('Source').getByTestId('backup-state').textContent()).toBe('The controller holds another configuration');
    await row('Source').getByRole('button', { name: 'Deploy' }).click();
    await expect.poll(() => row('Source').locator('.badge').textContent(), { timeout: 15_000 }).toBe('In sync');
  });

  it('Pull: a second site (another laptop) imports the controller\'s backup and is in sync at once', { timeout: 60_000 }, async () => {
    let other: RunningConfigurator | undefined;
    const second = await bench.context.newPage();
    try {
      // Another host name on loopback: its own cookies, as another laptop's browser would have.
      other = await startConfigurator({ site: join(bench.work, 'laptop-2.db'), host: '127.0.0.5' });
      await second.goto(other.url);
      await addController(second, 'Source', ethernetUrl(source));
      const r = second.locator('article.controller');
      await r.getByLabel('Admin password of Source').fill(source.spec.adminPassword);
      await r.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => r.locator('.badge').textContent(), { timeout: 15_000 }).toBe('Deployment Required');
      await r.getByRole('button', { name: 'Pull' }).click();
      await r.getByRole('button', { name: "Replace with the controller's" }).click();
      await expect.poll(() => r.locator('.badge').textContent(), { timeout: 15_000 }).toBe('In sync');
      expect(await r.getByTestId('row-message').textContent()).toMatch(/^Pulled: configuration [0-9a-f]{12} and 0 record\(s\) imported$/);
      const id = other.store.controllers()[0]!.id;
      expect(other.store.configuration(id).text).toBe(bench.configurator.store.configuration(ids.Source!).text);
      await bench.shot('4-pulled', second);
    } finally {
      await second.close();
      await other?.close();
    }
  });

  it('a bad or oversized configuration is refused with a message naming why; the site keeps what it had', { timeout: 60_000 }, async () => {
    const before = bench.configurator.store.configuration(ids.Source!).text;
    await page.goto(`${bench.configurator.url}#/controllers/${ids.Source}/configuration`);
    const upload = page.locator('input[type=file]');
    const bad = join(bench.work, 'bad.json');
    const doc = JSON.parse(before);
    doc.areas = [{ id: 'hall', name: 'Hall', circuits: ['no-such-circuit'] }];
    writeFileSync(bad, JSON.stringify(doc));
    await upload.setInputFiles(bad);
    await expect.poll(() => page.getByTestId('configuration-message').textContent()).toBe('bad.json: configuration.areas[0].circuits: there is no circuit "no-such-circuit" (nothing was changed)');
    writeFileSync(bad, '{"format": "fleet-controller-configuration-v1", "inputs": [');
    await upload.setInputFiles(bad);
    await expect.poll(() => page.getByTestId('configuration-message').textContent()).toMatch(/^bad\.json: The configuration is not JSON: .* \(nothing was changed\)$/);
    const big = join(bench.work, 'big.json');
    doc.areas = [];
    doc.pad = 'x'.repeat(600 * 1024);
    writeFileSync(big, JSON.stringify(doc));
    await upload.setInputFiles(big);
    await expect.poll(() => page.getByTestId('configuration-message').textContent()).toMatch(/^big\.json: The configuration is 6\d{5} bytes; a controller keeps at most 524256 bytes \(512 KB less the backup framing\) \(nothing was changed\)$/);
    await bench.shot('5-refused');
    expect(bench.configurator.store.configuration(ids.Source!).text).toBe(before);
    await page.goto(bench.configurator.url);
    await expect.poll(() => row('Source').locator('.badge').textContent(), { timeout: 15_000 }).toBe('In sync');
  });

  it('a controller that stops answering is shown as such; the page, the site and the other controller go on', { timeout: 90_000 }, async () => {
    const siteBefore = bench.configurator.store.configuration(ids.Target!).text;
    await target.stop();
    await row('Target').getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => row('Target').locator('.badge').textContent(), { timeout: 20_000 }).toBe('Not answering');
    expect(await row('Target').getByTestId('problem').textContent()).toMatch(/^Target \(http:\/\/127\.0\.0\.2:\d+\) did not answer: connection refused/);
    await row('Target').getByRole('button', { name: 'Deploy' }).click();
    await expect.poll(() => row('Target').getByTestId('row-message').textContent(), { timeout: 20_000 }).toMatch(/^Target \(http:\/\/127\.0\.0\.2:\d+\) did not answer/);
    await bench.shot('6-not-answering');
    // The rest of the page works: the source is in sync, and its configuration is still editable.
    await row('Source').getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => row('Source').locator('.badge').textContent(), { timeout: 15_000 }).toBe('In sync');
    expect(bench.configurator.store.configuration(ids.Target!).text).toBe(siteBefore);
    // Powered again, the board listens on a new port (a virtual board's reboot): the address is edited, a new log-in asked.
    await bench.ctx.start(target);
    await page.goto(`${bench.configurator.url}#/controllers/${ids.Target}/settings`);
    await page.getByLabel('Address of its API').fill(ethernetUrl(target));
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByTestId('settings-message').textContent()).toBe('Saved');
    await page.goto(bench.configurator.url);
    await expect.poll(() => row('Target').locator('.badge').textContent(), { timeout: 15_000 }).toBe('Log in to compare');
    await logIn('Target', target.spec.adminPassword);
    await expect.poll(() => row('Target').locator('.badge').textContent(), { timeout: 15_000 }).toBe('Deployment Required');
    expect(bench.problems).toEqual([]);
  });

  it('Configuration → MQTT says where the clients\' broker is set, and whether it is the same as the controller\'s', { timeout: 60_000 }, async () => {
    await page.goto(`${bench.configurator.url}#/controllers/${ids.Source}/configuration`);
    const note = page.getByTestId('broker-source');
    await expect.poll(() => note.textContent()).toBe("This controller's own connection. The site's clients use the broker set in Client settings (none set yet).");
    bench.configurator.store.setClientSettings({ wifi: { ssid: 'plant-floor', password: 'plant-floor-wpa2' }, mqtt: { host: 'broker.plant.example', port: 8883 }, ca_certificate: TEST_CA_PEM });
    await page.reload();
    await expect.poll(() => note.textContent()).toBe("This controller's own connection. The site's clients use the broker set in Client settings: broker.plant.example:8883.");
    const mqtt = page.locator('section', { has: page.getByRole('heading', { name: 'MQTT' }) });
    await mqtt.getByLabel('Broker host').fill('broker.plant.example');
    await mqtt.getByLabel('Port').fill('8883');
    await expect.poll(() => note.textContent()).toBe("This controller's own connection. The site's clients use the broker set in Client settings: broker.plant.example:8883, the same as here.");
    expect(await note.getByRole('link', { name: 'Client settings' }).getAttribute('href')).toBe('#/settings');
    await page.setViewportSize({ width: 420, height: 900 });
    await mqtt.screenshot({ path: join(REPORT_DIR, 'controllers-7-broker-source-420.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
    await mqtt.screenshot({ path: join(REPORT_DIR, 'controllers-7-broker-source.png') });
  });

  it('Remove… is a danger button that asks first, naming what the site loses; Cancel keeps it; the controller itself keeps its backup', { timeout: 60_000 }, async () => {
    await page.goto(`${bench.configurator.url}#/controllers/${ids.Target}/settings`);
    const remove = page.getByRole('button', { name: 'Remove Target from the site…' });
    await expect.poll(() => remove.isEnabled()).toBe(true); // not the disabled shade of a busy moment
    await expect.poll(() => backgroundOf(remove)).toBe(DANGER_RGB);
    await expect.poll(() => backgroundOf(page.getByRole('button', { name: 'Save' }))).toBe(ACCENT_RGB);
    await remove.click();
    const confirm = page.getByRole('alertdialog', { name: 'Confirm: Remove Target' });
    expect(await confirm.locator('p').textContent()).toBe(
      "Remove Target from this site? Its configuration and the records it hands out are lost from the site file, and this browser's log-in to it ends. The controller itself keeps what it holds: add it again and Pull to get them back.",
    );
    await expect.poll(() => hasFocus(confirm.getByRole('button', { name: 'Cancel' }))).toBe(true);
    await page.setViewportSize({ width: 420, height: 900 });
    await bench.shot('8-remove-confirm-420');
    await page.setViewportSize({ width: 1280, height: 900 });
    await bench.shot('8-remove-confirm');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => hasFocus(remove)).toBe(true);
    expect(bench.configurator.store.controllers().map((c) => c.name)).toEqual(['Source', 'Target']);
    const backupBefore = await target.http('ethernet', 'GET', '/backup', { headers: await bench.ctx.login(target) });
    await remove.click();
    await confirm.getByRole('button', { name: 'Remove Target' }).click();
    await expect.poll(() => page.url()).toBe(bench.configurator.url + '#/');
    await expect.poll(() => page.locator('article.controller h3').allTextContents()).toEqual(['Source']);
    expect(bench.configurator.store.controllers().map((c) => c.name)).toEqual(['Source']);
    const backupAfter = await target.http('ethernet', 'GET', '/backup', { headers: await bench.ctx.login(target) });
    expect([backupAfter.status, backupAfter.text]).toEqual([backupBefore.status, backupBefore.text]);
    expect(bench.problems).toEqual([]);
  });
});
