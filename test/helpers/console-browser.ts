// The operator console's browser for tests (docs/operator-console.md): Debian's chromium driven by
// playwright-core (no browser download), a new empty profile, loopback only; and the console's log-in
// with a super-user token.
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
