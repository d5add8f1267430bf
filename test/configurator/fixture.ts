// What the configurator's browser tests run against: the five-board rig's virtual boards (their
// firmware in XS, radios in a virtual air), the real cloud and an MQTT broker (harness/bench.ts
// ScenarioContext, as the bench's scenarios have them), the configurator's real server with a site
// file in a temporary folder, and Debian's chromium driven by playwright-core with a new, empty
// profile. Everything listens on loopback. Screenshots go to reports/configurator/ (git-ignored).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { startConfigurator, type RunningConfigurator } from '../../configurator/server/app.ts';
import { ScenarioContext } from '../../harness/bench.ts';
import type { BenchBoard } from '../../harness/board.ts';
import { startBroker, type Broker } from '../../harness/broker.ts';
import { loadRig } from '../../harness/rig.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const REPORT_DIR = join(root, 'reports', 'configurator');
export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A new chromium with an empty profile; every page it opens fails the test on a script error or a CSP report. */
export async function launchBrowser(profileParent: string): Promise<{ context: BrowserContext; problems: string[]; urls: string[] }> {
  const profile = mkdtempSync(join(profileParent, 'chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  const urls: string[] = [];
  context.on('page', (p) => watch(p, problems));
  for (const p of context.pages()) watch(p, problems);
  context.on('request', (r) => urls.push(r.url()));
  return { context, problems, urls };
}

function watch(page: Page, problems: string[]): void {
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    // A refused inline script or eval shows as a console error naming the Content Security Policy.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of (4\d\d|5\d\d)/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
}

export interface ConfiguratorBench {
  ctx: ScenarioContext;
  broker: Broker;
  work: string;
  configurator: RunningConfigurator;
  context: BrowserContext;
  page: Page;
  /** Script errors, CSP refusals and dialogs seen on any page. */
  problems: string[];
  /** Every URL the browser requested. */
  urls: string[];
  board(id: string): BenchBoard;
  /** A full-page screenshot in reports/configurator/<name>.png. */
  shot(name: string, page?: Page): Promise<void>;
  close(): Promise<void>;
}

/**
 * The bench of one test file. `settings` are the virtual boards' firmware settings (a short
 * provisioning time in the tests that watch it end).
 */
export async function openBench(name: string, o: { settings?: Record<string, unknown>; log?: (line: string) => void } = {}): Promise<ConfiguratorBench> {
  mkdirSync(REPORT_DIR, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), `configurator-${name}-`));
  const rig = loadRig(join(root, 'harness', 'rigs', 'five-board.json'));
  const broker = await startBroker('aedes', 0);
  const ctx = new ScenarioContext(rig, broker, join(work, 'bench'), REPORT_DIR, name, o.settings ?? {});
  await ctx.open();
  const configurator = await startConfigurator({ site: join(work, 'site.db'), ...(o.log ? { log: o.log } : {}) });
  const { context, problems, urls } = await launchBrowser(work);
  const page = context.pages()[0] ?? (await context.newPage());
  const bench: ConfiguratorBench = {
    ctx,
    broker,
    work,
    configurator,
    context,
    page,
    problems,
    urls,
    board(id) {
      const b = ctx.boards.find((x) => x.spec.id === id);
      if (!b) throw new Error(`no board ${id} on the rig`);
      return b;
    },
    async shot(file, p = page) {
      await p.screenshot({ path: join(REPORT_DIR, `${name}-${file}.png`), fullPage: true });
    },
    async close() {
      await context.close().catch(() => undefined);
      await configurator.close().catch(() => undefined);
      await ctx.close().catch(() => undefined);
      await broker.close().catch(() => undefined);
      rmSync(work, { recursive: true, force: true });
    },
  };
  return bench;
}

/** The Ethernet address of a started virtual board's device-local API (what `fleet virtual` prints). */
export function ethernetUrl(board: BenchBoard): string {
  const urls = (board as unknown as { engine: { urls: Record<string, string> } }).engine.urls;
  if (!urls.ethernet) throw new Error(`board ${board.spec.id} has no Ethernet listener`);
  return urls.ethernet;
}

/** Adds a controller with the controllers page's form, as an installer does. */
export async function addController(page: Page, name: string, address: string): Promise<void> {
  const form = page.locator('form', { has: page.getByRole('heading', { name: 'Add a controller' }) });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Address of its API').fill(address);
  await form.getByRole('button', { name: 'Add controller' }).click();
  await expect.poll(() => form.getByTestId('add-message').textContent()).toBe(`Added ${name}`);
}

/** What these helpers use of the page's globals (the tests' types have no DOM). */
type PageGlobals = { getComputedStyle(e: unknown): { backgroundColor: string }; document: { activeElement: unknown } };

/** The background colour the browser paints an element with, as `rgb(r, g, b)`. */
export const backgroundOf = (l: Locator) => l.evaluate((e) => (globalThis as unknown as PageGlobals).getComputedStyle(e).backgroundColor);

/** Whether an element has the focus. */
export const hasFocus = (l: Locator) => l.evaluate((e) => e === (globalThis as unknown as PageGlobals).document.activeElement);

/** The danger style of destructive buttons (styles.css --danger), and the ordinary buttons' accent. */
export const DANGER_RGB = 'rgb(180, 35, 24)';
export const ACCENT_RGB = 'rgb(11, 87, 208)';
