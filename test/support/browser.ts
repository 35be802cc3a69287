// What every browser test does the same way: Debian's chromium (never a downloaded browser), a page that
// records its script errors, the admin token login, and screenshots written only with UPDATE_SCREENSHOTS=1
// so that `npm test` leaves the work tree clean.
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ADMIN_TOKEN } from './harness.js';

const SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
export const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const CHROMIUM = '/usr/bin/chromium';
/** The `skip` of a browser suite: false, or why it cannot run here (CI installs the package). */
export const CHROMIUM_MISSING: string | false = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the browser tests`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A new page whose uncaught script errors are pushed to `problems` (tests assert it stays empty). With
 * `consoleErrors`, so are the console's errors (a CSP violation, a missing catalogue key), except
 * Chromium's line about each refused request: the 401s and 422s are part of the scenarios.
 */
export async function openPage(
  browser: Browser,
  problems: string[],
  {
    locale = 'en-US',
    width = 1366,
    height = 860,
    consoleErrors = false,
  }: { locale?: string; width?: number; height?: number; consoleErrors?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height }, locale });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  if (consoleErrors)
    page.on('console', (m) => {
      if (
        m.type() === 'error' &&
        !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())
      )
        problems.push(`console: ${m.text()}`);
    });
  return { context, page };
}

/** Waits until the UI has drawn the page (the router clears main's aria-busy); at once when it has. */
export const settled = (page: Page): Promise<void> =>
  page
    .locator('main[aria-busy="true"]')
    .waitFor({ state: 'detached' })
    .catch(() => {});

/** Opens a URL and waits until its page is drawn. */
export async function goTo(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await settled(page);
}

/** Logs in with a token: `?via=token` opens the token form (accounts log in with e-mail and password). */
export async function loginWithToken(page: Page, base: string, token = ADMIN_TOKEN): Promise<void> {
  await page.goto(`${base}/ui/login?via=token`);
  await page.locator('input[name=token]').fill(token);
  await page.keyboard.press('Enter');
  await page.locator('main h1', { hasText: 'Dashboard' }).waitFor();
}

/** Saves docs/screenshots/<name>.png with UPDATE_SCREENSHOTS=1, without the passing notices; else nothing. */
export async function saveScreenshot(page: Page, name: string, fullPage = true): Promise<void> {
  if (!UPDATE_SCREENSHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.evaluate(() => document.getElementById('toasts')?.replaceChildren());
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage });
}
