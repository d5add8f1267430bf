// The operator console's browser for tests (docs/operator-console.md): Debian's chromium driven by
// playwright-core (no browser download), a new empty profile, loopback only; and the console's log-in
// with a super-user token; the widths a page is looked at, where it must not scroll sideways.
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { TEST_JWT_SECRET } from './cloud.ts';

export const token = (subject: string, groups = ['superuser']) => mintToken(new TextEncoder().encode(TEST_JWT_SECRET), { subject, groups });

/** A new persistent profile in `profileDir`, headless, with no network but what the page asks of loopback. */
export async function launchConsoleBrowser(profileDir: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
  });
  return { context, page: context.pages()[0] ?? (await context.newPage()) };
}

/** Opens the console and logs in with a super-user token for `subject`; returns the token. */
export async function logIn(page: Page, cloudUrl: string, subject = 'test'): Promise<string> {
  const jwt = await token(subject);
  await page.goto(`${cloudUrl}/console`);
  await page.getByLabel('Super-user token (JWT)').fill(jwt);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('.subject').waitFor();
  return jwt;
}

/** The widths a page is looked at: a laptop, and a phone held upright. */
export const WIDTHS = [1280, 420] as const;

/** How far the page is wider than the window (0 or less: it scrolls down, never sideways; a table scrolls in its own box). */
export const overflow = async (page: Page) => ((await page.evaluate('document.documentElement.scrollWidth')) as number) - page.viewportSize()!.width;

/** Runs `look` at each of WIDTHS, the window set to it first; back to 1,280 px after. */
export async function atEachWidth(page: Page, look: (width: number) => Promise<void>): Promise<void> {
  try {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await look(width);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}
