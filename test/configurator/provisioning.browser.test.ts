// Provisioning from the page (spec 3.2, 3.5) in Debian's chromium: the site's client settings, a
// client registered on the source controller, provisioning mode enabled and watched, and the
// virtual client provisioned end to end on the virtual air: it takes its record, reboots, joins the
// site Wi-Fi and connects to the MQTT broker; the page shows the source's log of it; then disabled.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import type { BenchBoard } from '../../harness/board.ts';
import { nextEvent } from '../../harness/scenarios/helpers.ts';
import { addController, backgroundOf, DANGER_RGB, ethernetUrl, hasFocus, openBench, type ConfiguratorBench } from './fixture.ts';

let bench: ConfiguratorBench;
let page: Page;
let source: BenchBoard;
let client: BenchBoard;
let id: number;

beforeAll(async () => {
  bench = await openBench('provisioning');
  page = bench.page;
  source = bench.board('source');
  client = bench.board('client-1');
  await bench.ctx.start(source);
}, 180_000);

afterAll(async () => {
  await bench?.close();
});

describe('provisioning from the configurator', () => {
  it('the site\'s client settings are checked as the firmware checks them, and saved', { timeout: 60_000 }, async () => {
    await page.goto(`${bench.configurator.url}#/settings`);
    const site = bench.ctx.rig.siteWifi;
    await page.getByLabel('SSID').fill(site.ssid);
    await page.getByLabel('Wi-Fi password').fill('short');
    await page.getByLabel('Host', { exact: true }).fill(bench.broker.host);
    await page.getByLabel('Port').fill(String(bench.broker.port));
    await page.getByLabel(/^TLS/).uncheck();
    await page.getByLabel('CA certificate (PEM)').fill(TEST_CA_PEM);
    await page.getByRole('button', { name: 'Save client settings' }).click();
    await expect.poll(() => page.getByTestId('settings-message').textContent()).toBe('wifi.password must be a WPA2 passphrase (8 to 63 printable ASCII characters, or 64 hex digits)');
    expect(bench.configurator.store.clientSettings()).toBeNull();
    await page.getByLabel('Wi-Fi password').fill(site.password);
    await page.getByRole('button', { name: 'Save client settings' }).click();
    await expect.poll(() => page.getByTestId('settings-message').textContent()).toBe('Saved: clients registered from now on get these settings');
    expect(bench.configurator.store.clientSettings()).toMatchObject({ wifi: { ssid: site.ssid }, mqtt: { host: bench.broker.host, port: bench.broker.port, tls: false } });
    await bench.shot('1-client-settings');
  });

  it('registers the client on the source and enables provisioning mode: SSID, password, time left, allowlist', { timeout: 60_000 }, async () => {
    await page.goto(bench.configurator.url);
    await addController(page, 'Source', ethernetUrl(source));
    await page.getByLabel('Admin password of Source').fill(source.spec.adminPassword);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.locator('.badge').textContent(), { timeout: 15_000 }).toBe('Deployment Required');
    id = bench.configurator.store.controllers()[0]!.id;
    await page.goto(`${bench.configurator.url}#/controllers/${id}/provisioning`);
    await expect.poll(() => page.getByTestId('mode').textContent(), { timeout: 15_000 }).toBe('Provisioning mode is off.');
    const register = page.locator('form', { has: page.getByRole('heading', { name: 'Register a device' }) });
    await register.getByLabel('Name').fill('Lamp 1');
    await register.getByLabel('UUID').fill(client.spec.uuid);
    await register.getByLabel('Wi-Fi MAC').fill(client.spec.wifiMac.toLowerCase().replace(/:/g, '-'));
    await register.getByRole('button', { name: 'Register' }).click();
    await expect.poll(() => page.getByTestId('register-message').textContent()).toBe(`Registered ${client.spec.uuid} (${client.spec.wifiMac}) and written to the controller`);
    await expect.poll(() => page.locator('tbody tr').first().textContent()).toBe(`clientLamp 1${client.spec.uuid}${client.spec.wifiMac}yesnot yetnever connectedRemove`);
    await page.getByRole('button', { name: 'Enable provisioning' }).click();
    await expect.poll(() => page.getByTestId('mode-message').textContent(), { timeout: 20_000 }).toBe('Provisioning mode on: 1 MAC(s) allowed');
    const mode = page.getByTestId('mode');
    await expect.poll(() => mode.textContent()).toContain('SSIDDevice-Provisioning');
    expect(await mode.textContent()).toMatch(/Password[0-9A-F]{12}BSSID([0-9A-F]{2}:){5}[0-9A-F]{2}Time left\d+:\d\dAllowlist1 MAC\(s\)$/);
    const on = (await bench.ctx.login(source)) as Record<string, string>;
    const device = await source.http('ethernet', 'GET', '/api/provisioning', { headers: on });
    expect(await mode.textContent()).toContain(`Password${device.json.password}BSSID${device.json.bssid}`);
    await bench.shot('2-provisioning-on');
  });

  it('a client provisions end to end on the virtual air, and the page shows the source\'s log of it', { timeout: 120_000 }, async () => {
    const from = client.consoleLines().length;
    await bench.ctx.start(client);
    expect((await nextEvent(client, 'client_provisioning', from)).result).toBe('provisioned');
    expect((await nextEvent(client, 'client_normal_mode', from, 60_000)).result).toBe('mqtt_connected');
    expect(bench.broker.connections).toContain(client.spec.uuid);
    const events = page.getByTestId('events');
    await expect.poll(() => events.textContent(), { timeout: 15_000 }).toContain(`provisioning token issued to ${client.spec.wifiMac} (client ${client.spec.uuid})`);
    expect(await events.textContent()).toContain(`station ${client.spec.wifiMac} associated`);
    // The client's own console says it is connected, to the broker of the site's client settings.
    const status = JSON.parse((await client.command('status')).slice(3));
    expect(status.mqtt).toMatchObject({ state: 'connected', broker: `${bench.broker.host}:${bench.broker.port}`, problem: null });
    // Its row: when the source issued its token (as the source logged it), and what it said on the broker.
    const lamp = page.getByTestId(`record-${client.spec.uuid}`);
    await expect.poll(() => lamp.getByTestId('mqtt').textContent(), { timeout: 20_000 }).toBe(`connected (firmware ${status.firmware_version})`);
    const provisionedAt = bench.configurator.store.provisionedAt(id).get(`clients/${client.spec.uuid}`);
    expect(Date.now() - Date.parse(provisionedAt!)).toBeLessThan(120_000);
    expect(await lamp.getByTestId('provisioned').textContent()).toBe(await page.evaluate((t) => new Date(t).toLocaleString(), provisionedAt!));
    expect(await page.getByText(`what each said last on the site's broker ${bench.broker.host}:${bench.broker.port}`).isVisible()).toBe(true);
    await bench.shot('3-client-provisioned');
    await page.setViewportSize({ width: 420, height: 900 });
    await bench.shot('3-client-provisioned-420');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('disables provisioning mode from the page; the page says why it stopped', { timeout: 60_000 }, async () => {
    await page.getByRole('button', { name: 'Disable provisioning' }).click();
    await expect.poll(() => page.getByTestId('mode-message').textContent(), { timeout: 20_000 }).toBe('Provisioning mode off');
    expect(await page.getByTestId('mode').textContent()).toBe('Provisioning mode is off (last stopped: it was disabled).');
    const r = await source.http('ethernet', 'GET', '/api/provisioning', { headers: await bench.ctx.login(source) });
    expect([r.status, r.json.details.last_stop_reason]).toEqual([409, 'request']);
    await bench.shot('4-provisioning-off');
    expect(bench.problems).toEqual([]);
  });

  it('Remove is a danger button that asks first, naming what is lost; Cancel keeps the record, the confirmation removes it here and on the controller', { timeout: 60_000 }, async () => {
    const remove = page.getByRole('button', { name: 'Remove Lamp 1…' });
    // Not while the rows are being read again (busy: the disabled shade).
    await expect.poll(() => remove.isEnabled()).toBe(true);
    await expect.poll(() => backgroundOf(remove)).toBe(DANGER_RGB);
    await remove.click();
    const confirm = page.getByRole('alertdialog', { name: 'Confirm: Remove Lamp 1' });
    expect(await confirm.locator('p').textContent()).toBe(
      `Remove client Lamp 1 (${client.spec.uuid}) from this site and from the controller? Its record, with the Wi-Fi and MQTT settings it hands out, is lost: the device can no longer provision from this controller until it is registered again.`,
    );
    // The safe choice has the focus.
    await expect.poll(() => hasFocus(confirm.getByRole('button', { name: 'Cancel' }))).toBe(true);
    await page.setViewportSize({ width: 420, height: 900 });
    await bench.shot('5-remove-confirm-420');
    await page.setViewportSize({ width: 1280, height: 900 });
    await bench.shot('5-remove-confirm');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => confirm.count()).toBe(0);
    expect(bench.configurator.store.records(id)).toHaveLength(1);
    await remove.click();
    await confirm.getByRole('button', { name: 'Remove Lamp 1' }).click();
    await expect.poll(() => page.getByTestId('records-message').textContent(), { timeout: 15_000 }).toBe(`Removed ${client.spec.uuid}`);
    expect(bench.configurator.store.records(id)).toEqual([]);
    const list = await source.http('ethernet', 'GET', '/api/clients', { headers: await bench.ctx.login(source) });
    expect(list.json).toEqual([]);
    expect(bench.problems).toEqual([]);
  });
});
