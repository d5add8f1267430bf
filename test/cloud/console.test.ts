// The operator console in a real browser (Debian's chromium driven by playwright-core) against the
// real cloud on loopback (docs/operator-console.md): log-in with a super-user JWT exchanged for a session
// in the store, whose opaque id is in an HttpOnly SameSite=Strict cookie (the token never in a cookie,
// in storage or in a URL), log-out ending it for good, the releases, devices, appconfig and audit pages
// acting through the admin API, everything a device or an operator typed rendered as text, and a
// cross-origin form refused by the CSRF defence. Screenshots of each page go to reports/console/.
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicKeyDigest, signImage } from '../../firmware/image/secure-boot.ts';
import { PAGE_CSP } from '../../web-common/server/security-headers.ts';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { launchConsoleBrowser, logIn, token } from '../helpers/console-browser.ts';
import { appImage } from '../helpers/images.ts';

const SHOTS = new URL('../../reports/console/', import.meta.url).pathname;
/** The console's code: its own, and the web kit's browser half that it uses. */
const SOURCES = ['../../cloud/console/web/src/', '../../web-common/browser/'].map((p) => new URL(p, import.meta.url).pathname);
const XSS_LABEL = '<img src=x onerror="window.__xss=1">Hall <b>lights</b>';
const XSS_SUBJECT = '<script>window.__xss=2</script>ops-alice';
const TRACK = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';

let cloud: TestCloud;
let dir: string;
let context: BrowserContext;
let page: Page;
let evil: Server;
let evilUrl: string;
/** The key digest that signed the hosted release 2026.02.01. */
let signerDigest: string;

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
// Browser-side expressions as strings: the tests are type-checked for Node, not for the DOM.
const xssRan = () => page.evaluate('window.__xss ?? null');

const login = (subject = 'test') => logIn(page, cloud.url, subject);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-console-'));
  mkdirSync(SHOTS, { recursive: true });
  cloud = await startTestCloud({ env: { APPCONFIG_DEPLOY_SECONDS: '0' } });
  // The fleet the pages show: a hosted release (signed) with a staged rollout, devices (one whose label holds HTML).
  await cloud.admin('PUT', `${TRACK}/2026.01.01`, { url: 'https://cdn.example/2026.01.01.bin', size: 1000, sha256: 'ab'.repeat(32) });
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 3072 }).privateKey;
  signerDigest = publicKeyDigest(signingKey).toString('hex');
  const up = await fetch(`${cloud.url}${TRACK}/2026.02.01/image?rollout_percent=10&rollout_groups=beta`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/octet-stream' },
    body: signImage(appImage('2026.02.01', { bytes: 40_000 }), [signingKey]),
  });
  expect(up.status).toBe(201);
  const key = await cloud.enroll('ctl-lobby-01');
  expect((await cloud.admin('PUT', '/admin/devices/ctl-hall-02', { public_key: key.publicKeyPem, label: XSS_LABEL })).status).toBe(201);
  await cloud.enroll('ctl-yard-03');
  await cloud.admin('PUT', '/admin/devices/ctl-lobby-01/groups', { groups: ['beta'] });
  for (const [uuid, cv] of [['ctl-lobby-01', '2026.01.01'], ['ctl-hall-02', '2026.01.01']] as const) {
    await fetch(`${cloud.url}/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=${cv}`, { headers: { 'x-device-uuid': uuid } });
  }
  await cloud.cloud.inventory.flush();
  // Another origin on loopback (same host, another port: same-site for cookies, cross-origin for the browser).
  evil = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><form id="f" method="POST" action="${cloud.url}${TRACK}/2026.01.01/revoke"></form>
      <script>
        fetch(${JSON.stringify(`${cloud.url}${TRACK}/2026.02.01/rollout/pause`)}, { method: 'POST', credentials: 'include', headers: { 'x-csrf-token': 'guess' } })
          .then((r) => (document.title = 'fetch ' + r.status), (e) => (document.title = 'fetch blocked'));
      </script>`);
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
  // A new, empty profile; no network but loopback (the cloud and the other origin).
  ({ context, page } = await launchConsoleBrowser(join(dir, 'profile')));
}, 120_000);

afterAll(async () => {
  await context?.close();
  await new Promise<void>((r) => (evil ? evil.close(() => r()) : r()));
  await cloud?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the operator console', () => {
  it('is served with its own scripts only (CSP), never framed, and asks for a token', async () => {
    const res = await fetch(`${cloud.url}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(PAGE_CSP).toMatch(/script-src 'self'(;|$)/);
    expect(PAGE_CSP).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/); // no inline script
    expect(html).not.toMatch(/https?:\/\//); // no CDN
    const js = await fetch(`${cloud.url}/console/app.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('content-security-policy')).toBe(PAGE_CSP);
    const unchanged = await fetch(`${cloud.url}/console/app.js`, { headers: { 'if-none-match': js.headers.get('etag') ?? '', 'cache-control': 'max-age=0' } });
    expect(unchanged.status).toBe(304);
    // The console's own code never writes markup (Preact's renderer supports it; the console never asks).
    for (const dir of SOURCES) {
      for (const file of readdirSync(dir, { recursive: true }) as string[]) {
        if (!/\.tsx?$/.test(file)) continue;
        expect(/dangerouslySetInnerHTML|innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(readFileSync(join(dir, file), 'utf8')), file).toBe(false);
      }
    }
    await page.goto(`${cloud.url}/console`);
    await page.getByLabel('Super-user token (JWT)').waitFor();
    await shot('login');
  });

  it('refuses a bad token and a token that is not a super user with the API message', async () => {
    await page.getByLabel('Super-user token (JWT)').fill('not.a.token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.locator('[role=alert]').textContent()).toContain('invalid_token');
    await page.getByLabel('Super-user token (JWT)').fill(await token('bob', ['staff']));
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.locator('[role=alert]').textContent()).toBe('The caller is not a super user (not_superuser)');
    expect(await context.cookies()).toEqual([]);
  });

  it('logs in: an opaque session id in an HttpOnly SameSite=Strict cookie, never the token; nothing in storage or a URL; a reload keeps the session', async () => {
    const jwt = await login();
    expect(await page.locator('.subject').textContent()).toBe('test');
    const cookies = await context.cookies(cloud.url);
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite]).sort()).toEqual([
      ['fleet_csrf', true, 'Strict'],
      ['fleet_session', true, 'Strict'],
    ]);
    expect(cookies.find((c) => c.name === 'fleet_session')!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookies.every((c) => c.value !== jwt)).toBe(true);
    const seen = await page.evaluate('({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie, href: location.href })');
    expect(seen).toEqual({ local: 0, session: 0, cookie: '', href: `${cloud.url}/console` });
    await page.reload();
    await page.locator('.subject').waitFor();
    expect(await page.locator('.subject').textContent()).toBe('test');
  });

  it('shows releases with their rollout and outcomes, and steers the rollout through the admin API', async () => {
    await page.goto(`${cloud.url}/console#/releases`);
    const row = page.locator('tr[data-version="2026.02.01"]');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/RELEASED.*hosted.*active at 10 %.*groups beta/);
    expect(await row.textContent()).toContain(`signed ${signerDigest.slice(0, 12)}…`);
    expect(await row.locator('.outcomes').textContent()).toBe('0 succeeded, 0 failed, 1 pending');
    // The track's signing requirement, above its versions.
    const signing = (await cloud.adminJson('GET', `/admin/tracks/ctl-s3/0x00c0ffee/ctl-s3/signing`)).body;
    expect(await page.locator('p.signing').textContent()).toMatch(signing.required ? /^Signing: required/ : /^Signing: not required \(unsigned images accepted\)/);
    await row.getByLabel('rollout percentage of 2026.02.01').fill('40');
    await row.getByRole('button', { name: 'Set' }).click();
    await expect.poll(() => row.textContent()).toMatch(/active at 40 %/);
    await row.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => row.textContent()).toMatch(/paused at 40 %.*paused by test/);
    expect((await cloud.adminJson('GET', `${TRACK}/2026.02.01/rollout`)).body).toMatchObject({ state: 'paused', percent: 40 });
    await shot('releases');
  });

  it('shows the device inventory, searchable, rendering what was typed as text (nothing runs)', async () => {
    await page.goto(`${cloud.url}/console#/devices`);
    await page.locator('tr[data-uuid="ctl-yard-03"]').waitFor();
    const hall = page.locator('tr[data-uuid="ctl-hall-02"]');
    expect(await hall.locator('.label').textContent()).toBe(XSS_LABEL);
    expect(await hall.locator('img, b').count()).toBe(0);
    expect(await xssRan()).toBeNull();
    await page.getByLabel('Search (UUID or label)').fill('lobby');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: 'ctl-lobby-01' }).click();
    const details = page.getByLabel('device ctl-lobby-01');
    expect(await details.textContent()).toMatch(/Groupsbeta.*Last OTA check.*2026\.01\.01 on ctl-s3\/0x00c0ffee\/ctl-s3.*Offered2026\.02\.01 \(from 2026\.01\.01\)/);
    await page.getByLabel('Search (UUID or label)').fill('');
    await page.getByLabel('Not seen for (days)').fill('1');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('tbody tr[data-uuid]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-uuid')))).toEqual(['ctl-yard-03']);
    await page.getByLabel('Not seen for (days)').fill('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('tr[data-uuid="ctl-hall-02"]').waitFor();
    // A header sorts the page.
    const order = () => page.locator('tbody tr[data-uuid]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-uuid')));
    const ascending = await order();
    expect(ascending).toEqual([...ascending].sort());
    // Sorted by UUID to begin with; a click on its header turns the order round.
    await page.getByRole('button', { name: 'UUID ▲', exact: true }).click();
    await expect.poll(order).toEqual([...ascending].reverse());
    expect(await page.locator('th[aria-sort="descending"]').textContent()).toBe('UUID ▼');
    // The track each device last checked on; the devices behind the newest release, as the API lists them.
    expect(await page.locator('tr[data-uuid="ctl-lobby-01"] td').nth(2).textContent()).toBe('ctl-s3 0x00c0ffee ctl-s3');
    await page.getByLabel('Behind the newest release').check();
    await page.getByRole('button', { name: 'Apply' }).click();
    const behind = (await cloud.adminJson('GET', '/admin/devices?behind=true')).body.devices.map((d: any) => d.uuid);
    expect(behind.length).toBeGreaterThan(0);
    await expect.poll(async () => (await order()).sort()).toEqual([...behind].sort());
    await shot('devices-behind');
    await page.getByLabel('Behind the newest release').uncheck();
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(order).toHaveLength(ascending.length);
    await shot('devices');
  });

  it('stages and deploys a log level on the appconfig page', async () => {
    await page.goto(`${cloud.url}/console#/appconfig`);
    const row = page.locator('tr[data-function="svc-func-ota"]');
    await row.waitFor();
    await row.getByLabel('log level of svc-func-ota').selectOption('DEBUG');
    await row.getByRole('button', { name: 'Stage' }).click();
    await expect.poll(() => row.textContent()).toMatch(/v1 DEBUG/);
    await row.getByRole('button', { name: 'Deploy' }).click();
    await expect.poll(() => (cloud.adminJson('GET', '/appconfig/svc-func-ota') as Promise<{ body: any }>).then((r) => r.body.deployed?.configuration.logging)).toBe('DEBUG');
    await expect.poll(() => row.textContent()).toMatch(/svc-func-otaDEBUG/);
    await shot('appconfig');
  });

  it('shows the audit log: every console action with who did it and how', async () => {
    await page.goto(`${cloud.url}/console#/audit`);
    await page.locator('tr[data-action="deployAppConfig"]').waitFor();
    const rows = await page.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1, 5).map((td) => td.textContent)));
    expect(rows.slice(0, 5)).toEqual([
      ['test', 'console', 'deployAppConfig', '202'],
      ['test', 'console', 'stageAppConfig', '200'],
      ['test', 'console', 'pauseRollout', '200'],
      ['test', 'console', 'setRollout', '200'],
      ['test', 'console', 'consoleLogin', '201'],
    ]);
    await shot('audit');
    // Filtered as `fleet audit` is: by who, by action, by day; the page fits the window.
    await page.getByLabel('Action (such as pauseRollout)').fill('pauseRollout');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody tr td').nth(3).textContent()).toBe('pauseRollout');
    expect(await page.locator('p.count').textContent()).toMatch(/^Entries 1–1 matching the filters/);
    await page.getByLabel('From (UTC)').fill('2999-01-01');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('p.count').textContent()).toMatch(/^No entries/);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Who').fill('test');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBeGreaterThanOrEqual(5);
    const width = await page.evaluate('document.documentElement.scrollWidth') as number;
    expect(width).toBeLessThanOrEqual(page.viewportSize()!.width);
    await shot('audit-filtered');
  });

  it('refuses a cross-origin form and a cross-origin fetch: the cookie alone changes nothing', async () => {
    await page.goto(evilUrl);
    await expect.poll(() => page.title()).toMatch(/^fetch /);
    expect(await page.title()).toBe('fetch blocked'); // no CORS: the browser never lets it through
    await page.evaluate("document.getElementById('f').submit()");
    await page.waitForURL(/\/revoke$/);
    const answer = JSON.parse((await page.locator('body').textContent()) ?? '{}');
    expect(answer.error).toBe('csrf_check_failed');
    const versions = (await cloud.adminJson('GET', TRACK)).body.versions;
    expect(versions.map((v: any) => v.status)).toEqual(['RELEASED', 'RELEASED']);
    expect(versions[1].rollout.state).toBe('paused');
    // The same outside a browser: the session cookie without its CSRF token, or from another origin.
    const cookies = Object.fromEntries((await context.cookies(cloud.url)).map((c) => [c.name, c.value]));
    const cookie = `fleet_session=${cookies.fleet_session}; fleet_csrf=${cookies.fleet_csrf}`;
    const noToken = await fetch(`${cloud.url}${TRACK}/2026.02.01/rollout/resume`, { method: 'POST', headers: { cookie } });
    expect(noToken.status).toBe(403);
    const otherOrigin = await fetch(`${cloud.url}${TRACK}/2026.02.01/rollout/resume`, { method: 'POST', headers: { cookie, 'x-csrf-token': cookies.fleet_csrf!, origin: evilUrl.slice(0, -1) } });
    expect(otherOrigin.status).toBe(403);
    expect(((await otherOrigin.json()) as any).error).toBe('csrf_check_failed');
    const own = await fetch(`${cloud.url}${TRACK}/2026.02.01/rollout/resume`, { method: 'POST', headers: { cookie, 'x-csrf-token': cookies.fleet_csrf!, origin: cloud.url } });
    expect(own.status).toBe(200);
  });

  it('an operator whose token subject holds HTML sees it as text; logging out ends the session (its cookie is refused after)', async () => {
    await page.goto(`${cloud.url}/console`);
    const kept = Object.fromEntries((await context.cookies(cloud.url)).map((c) => [c.name, c.value]));
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Super-user token (JWT)').waitFor();
    expect(await context.cookies(cloud.url)).toEqual([]);
    const replayed = await fetch(`${cloud.url}/admin/devices`, { headers: { cookie: `fleet_session=${kept.fleet_session}; fleet_csrf=${kept.fleet_csrf}` } });
    expect([replayed.status, ((await replayed.json()) as any).error]).toEqual([401, 'session_expired']);
    await login(XSS_SUBJECT);
    expect(await page.locator('.subject').textContent()).toBe(XSS_SUBJECT);
    await page.goto(`${cloud.url}/console#/audit`);
    await page.locator('tr[data-action="consoleLogin"]').first().waitFor();
    expect(await page.locator('td.actor').first().textContent()).toBe(XSS_SUBJECT);
    expect(await page.locator('td.actor script').count()).toBe(0);
    expect(await xssRan()).toBeNull();
    await shot('audit-html-subject');
  });
  it('says when a session ended by itself (its token expired) and how to get a longer one', async () => {
    const short = await mintToken(new TextEncoder().encode(TEST_JWT_SECRET), { subject: 'brief', groups: ['superuser'], ttlSeconds: 3 });
    await page.goto(`${cloud.url}/console`);
    if (await page.getByRole('button', { name: 'Log out' }).count()) await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Super-user token (JWT)').fill(short);
    await page.getByRole('button', { name: 'Log in' }).click();
    expect(await page.locator('.subject').textContent()).toBe('brief');
    expect(await page.locator('.until').textContent()).toMatch(/^until \d\d:\d\d:\d\d UTC$/);
    // The token's three seconds pass; the next page asks the cloud, which refuses the session.
    await expect
      .poll(async () => {
        await page.goto(`${cloud.url}/console#/audit`);
        await page.goto(`${cloud.url}/console#/devices`);
        return page.locator('p.ended').count();
      }, { timeout: 20_000, interval: 1000 })
      .toBe(1);
    expect(await page.locator('p.ended').textContent()).toMatch(/^Your session ended at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: a session lasts as long as the token it was opened with/);
    expect(await page.locator('.hint').textContent()).toContain('npx fleet token --ttl 28800 lasts a working day');
    await shot('session-ended');
  }, 60_000);
});
