// Browser tests of the dashboard: Debian's chromium driven by playwright-core (never `playwright install`:
// it downloads a browser and fails here). Every page opened here records console errors and uncaught
// page errors; a test ends with assertNoConsoleErrors(page). Screenshots go to test/artifacts/ (ignored
// by git) for a person to look at.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where screenshots are written. */
export const ARTIFACTS_DIR = join(repoRoot, 'test', 'artifacts');

/** Debian's chromium (`.ci/run` installs it); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** No sandbox (CI runs as root), no GPU, and nothing that calls out to Google while a test runs. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Where the dashboard keeps the key (sessionStorage only). */
export const KEY_STORAGE = 'agentsplit.key';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

export interface OpenOptions {
  /** Typed into the login form and submitted; absent or null: the page is left at the prompt. */
  key?: string | null;
  /** Viewport width in CSS pixels (1280 desktop, 390 a phone); default 1280. */
  width?: number;
  /** Default: 800 on a desktop width, 844 on a phone width. */
  height?: number;
  /** The hash route to open, e.g. `#/experiment/checkout-prompt`; default: the start page. */
  hash?: string;
}

/** What went wrong in each page: console errors (CSP violations among them) and uncaught errors. */
const problems = new WeakMap<Page, string[]>();

/**
 * A new tab (its own context, so its own sessionStorage) on `${baseUrl}/ui/`, recording every console
 * error and page error. With a key, signs in through the login form as a person would; what the page
 * shows next is for the test to wait for.
 */
export async function openDashboard(
  browser: Browser,
  baseUrl: string,
  options: OpenOptions = {},
): Promise<Page> {
  const width = options.width ?? 1280;
  const height = options.height ?? (width < 600 ? 844 : 800);
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const seen: string[] = [];
  problems.set(page, seen);
  page.on('console', (message) => {
    if (message.type() === 'error') {
      const where = message.location().url;
      seen.push(`console error: ${message.text()}${where ? ` (${where})` : ''}`);
    }
  });
  page.on('pageerror', (error) => seen.push(`page error: ${error.stack ?? error.message}`));
  await page.goto(`${baseUrl}/ui/${options.hash ?? ''}`, { waitUntil: 'load' });
  if (options.key != null) {
    const form = page.getByTestId('login-form');
    await form.locator('input').first().fill(options.key);
    await form.locator('input').first().press('Enter');
  }
  return page;
}

/** The errors recorded so far in this page (console errors and uncaught exceptions). */
export function consoleErrors(page: Page): string[] {
  return [...(problems.get(page) ?? [])];
}

/**
 * Fails unless the page logged no error. `allow`: messages a test expects, e.g. the browser's own
 * "Failed to load resource … 401" line when it checks that a wrong key is refused.
 */
export function assertNoConsoleErrors(page: Page, allow: RegExp[] = []): void {
  const unexpected = consoleErrors(page).filter((text) => !allow.some((pattern) => pattern.test(text)));
  assert.deepEqual(unexpected, [], `the page logged errors:\n${unexpected.join('\n')}`);
}

/** Writes test/artifacts/<name>.png (the whole page) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Waits until `check` holds, polled from the test (every 50 ms, 10 s at most; then it fails saying
 * `what`). Not page.waitForFunction: when its predicate is not true at once it polls by evaluating text in
 * the page, which the dashboard's Content-Security-Policy refuses (no 'unsafe-eval').
 */
export async function waitUntil(page: Page, check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `waited 10 s for ${what}`);
    await page.waitForTimeout(50);
  }
}

/** Fails when the page is wider than its viewport (something overflows sideways). */
export async function assertNoOverflow(page: Page, where: string): Promise<void> {
  const [scroll, inner] = (await page.evaluate(
    '[document.documentElement.scrollWidth, window.innerWidth]',
  )) as [number, number];
  assert.ok(scroll <= inner, `${where}: the page is ${scroll} px wide in a ${inner} px viewport`);
}
