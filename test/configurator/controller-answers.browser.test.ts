// In Debian's chromium: a controller's answer outside its API's contract (a 201 with an error body
// to PUT /api/provisioning) is shown on the page as the controller's fault, never as "Provisioning
// mode on"; and the page's own fetch wrapper takes only the status each route answers on success,
// so a 2xx of another kind from its server is an error too. The controller is a stand-in on
// 127.0.0.1 that answers the device API's routes the provisioning tab reads.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigurator, type RunningConfigurator } from '../../configurator/server/app.ts';
import { addController, launchBrowser, REPORT_DIR } from './fixture.ts';
import { startStandInController, type StandInController } from './stand-in-controller.ts';

let work: string;
let running: RunningConfigurator;
let odd: StandInController;
let context: BrowserContext;
let page: Page;
let problems: string[];
let id: number;

const shot = (name: string) => page.screenshot({ path: join(REPORT_DIR, `controller-answers-${name}.png`), fullPage: true });
const modeMessage = () => page.getByTestId('mode-message');

beforeAll(async () => {
  mkdirSync(REPORT_DIR, { recursive: true });
  work = mkdtempSync(join(tmpdir(), 'configurator-answers-browser-'));
  running = await startConfigurator({ site: join(work, 'site.db'), link: { timeoutMs: 4_000 } });
  odd = await startStandInController();
  // What a controller with provisioning off and nothing stored answers (docs/firmware-api.md).
  odd.answer('GET /api/status', { status: 200, body: { firmware_version: '2026.01.01', uuid: 'odd-1', cloud: null, provisioning: { state: 'disabled' } } });
  odd.answer('HEAD /backup', { status: 404 });
  odd.answer('GET /api/controllers', { status: 200, body: [] });
  odd.answer('GET /api/clients', { status: 200, body: [] });
  odd.answer('GET /api/events', { status: 200, body: { events: [] } });
  odd.answer('GET /api/provisioning', { status: 409, body: { error: 'provisioning_mode_off', message: 'Provisioning mode is not active', details: { state: 'disabled', last_stop_reason: null } } });
  // The misbehaviour: a 201 carrying an error.
  odd.answer('PUT /api/provisioning', { status: 201, body: { error: 'provisioning_failed', message: 'the radio did not start' } });
  ({ context, problems } = await launchBrowser(work));
  page = context.pages()[0] ?? (await context.newPage());
}, 60_000);

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await running?.close();
  await odd?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('answers outside the contract, on the page', () => {
  it('a controller\'s 201 with an error body to Enable provisioning is shown as its fault, not as the mode on', { timeout: 60_000 }, async () => {
    await page.goto(running.url);
    await addController(page, 'Odd', odd.url);
    id = running.store.controllers()[0]!.id;
    const row = page.locator('article.controller');
    await row.getByLabel('Admin password of Odd').fill('any-password');
    await row.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 15_000 }).toBe('Deployment Required');
    await page.goto(`${running.url}#/controllers/${id}/provisioning`);
    const enable = page.getByRole('button', { name: 'Enable provisioning' });
    await expect.poll(() => enable.isEnabled(), { timeout: 15_000 }).toBe(true);
    await enable.click();
    await expect.poll(() => modeMessage().textContent(), { timeout: 15_000 }).toBe(
      'Odd answered PUT /api/provisioning with status 201 and the error "provisioning_failed" (the radio did not start); its API answers 200 there',
    );
    expect(await modeMessage().getAttribute('role')).toBe('alert');
    await shot('1-controller-201');
    expect(problems).toEqual([]);
  });

  it('the page takes only the status a route answers on success: a 201 or a 200 of another route is an error', { timeout: 60_000 }, async () => {
    // What the configurator answered before it judged controllers' answers: the controller's 201 relayed.
    await page.route('**/api/controllers/*/provisioning', (route) =>
      route.request().method() === 'PUT'
        ? route.fulfill({ status: 201, contentType: 'application/json', body: JSON.stringify({ error: 'provisioning_failed', message: 'Odd: the radio did not start', details: { controller_status: 201 } }) })
        : route.fallback(),
    );
    await page.reload();
    const enable = page.getByRole('button', { name: 'Enable provisioning' });
    await expect.poll(() => enable.isEnabled(), { timeout: 15_000 }).toBe(true);
    await enable.click();
    await expect.poll(() => modeMessage().textContent(), { timeout: 15_000 }).toBe(
      `The configurator answered PUT /api/controllers/${id}/provisioning with status 201 (provisioning_failed: Odd: the radio did not start), not the 200 expected: nothing was taken from it`,
    );
    await shot('2-page-201');
    await page.unroute('**/api/controllers/*/provisioning');
    // Adding a controller is a 201; a 200 is not taken for it.
    await page.route('**/api/controllers', (route) => (route.request().method() === 'POST' ? route.fulfill({ status: 200, contentType: 'application/json', body: '{}' }) : route.fallback()));
    await page.goto(running.url);
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Add a controller' }) });
    await form.getByLabel('Name').fill('Phantom');
    await form.getByLabel('Address of its API').fill('http://127.0.0.1:9');
    await form.getByRole('button', { name: 'Add controller' }).click();
    await expect.poll(() => form.getByTestId('add-message').textContent(), { timeout: 15_000 }).toBe('The configurator answered POST /api/controllers with status 200, not the 201 expected: nothing was taken from it');
    await page.unroute('**/api/controllers');
    expect(running.store.controllers().map((c) => c.name)).toEqual(['Odd']);
    expect(problems).toEqual([]);
  });
});
