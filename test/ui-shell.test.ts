// The dashboard's shell (issue 16) against a real server process: `/` leads to /ui/; the pages and the
// vendored libraries are served without a key and hold none; node_modules and the API stay closed; the
// CSP admits the page's import map and nothing inline; and in headless Chromium, a wrong key is refused
// with a clear message, a read key sees no edit controls, the root (admin) key does, with no console
// error, at 1280 and 390 px wide.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join, relative, sep } from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { assertNoConsoleErrors, KEY_STORAGE, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-shell-root-key-0123456789abcdef';
const ui = dashboardRun(API_KEY, { setup: setUp });
const DASHBOARD_DIR = join(import.meta.dirname, '..', 'dashboard');
const VENDOR = {
  'preact.module.js': 'javascript',
  'hooks.module.js': 'javascript',
  'htm.module.js': 'javascript',
  'uPlot.esm.js': 'javascript',
  'uPlot.min.css': 'text/css',
};
const WIDTHS = [1280, 390];

let readKey: string;

async function api(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${ui.base}${path}`, {
    method,
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A GET with the path sent exactly as written (fetch would resolve `..` before sending). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const url = new URL(ui.base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every file under dashboard/, as the path after /ui/. */
function dashboardFiles(at = DASHBOARD_DIR): string[] {
  return readdirSync(at, { withFileTypes: true }).flatMap((entry) => {
    const path = join(at, entry.name);
    if (entry.isDirectory()) return dashboardFiles(path);
    return [relative(DASHBOARD_DIR, path).split(sep).join('/')];
  });
}

/** The file's data, written once the server answers. */
async function setUp(): Promise<void> {
  const created = await api('POST', '/experiments', {
    slug: 'checkout-prompt',
    name: 'Checkout prompt',
    status: 'running',
    variants: [
      { key: 'A', payload: { prompt: 'You are a helpful assistant.' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'You are a concise assistant.' }, trafficPercent: 50 },
    ],
  });
  assert.equal(created.status, 201, await created.text());
  const key = await api('POST', '/keys', { name: 'dashboard-viewer', scopes: ['read'] });
  assert.equal(key.status, 201);
  readKey = ((await key.json()) as { key: string }).key;
}

describe('serving the dashboard', () => {
  test('the start banner prints the dashboard URL', () => {
    assert.match(ui.server.output(), new RegExp(`Dashboard: ${ui.base.replaceAll('.', '\\.')}/ui/`));
  });

  test('GET / and GET /ui redirect (302) to /ui/, without a key', async () => {
    for (const path of ['/', '/ui']) {
      const res = await fetch(`${ui.base}${path}`, { redirect: 'manual' });
      assert.equal(res.status, 302, path);
      assert.equal(res.headers.get('location'), '/ui/', path);
    }
  });

  test('/ui/ is the page, without a key: an import map to /ui/vendor/ and app.js as a module', async () => {
    const res = await fetch(`${ui.base}/ui/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.match(html, /<script type="importmap">/);
    assert.match(html, /"preact": "\/ui\/vendor\/preact\.module\.js"/);
    assert.match(html, /<script type="module" src="\/ui\/app\.js">/);
  });

  test('the vendored libraries are served by name, without a key, with their types', async () => {
    for (const [name, type] of Object.entries(VENDOR)) {
      const res = await fetch(`${ui.base}/ui/vendor/${name}`);
      assert.equal(res.status, 200, name);
      assert.match(res.headers.get('content-type') ?? '', new RegExp(type), name);
      assert.ok((await res.text()).length > 1000, `${name} has its contents`);
    }
    const preact = await (await fetch(`${ui.base}/ui/vendor/preact.module.js`)).text();
    assert.match(preact, /export\{[^}]*as render/, 'the ES module build of preact');
  });

  test('every file of dashboard/ is served without a key and contains no key', async () => {
    const files = dashboardFiles();
    assert.ok(files.includes('index.html') && files.includes('app.js'), files.join(', '));
    for (const file of files) {
      const res = await fetch(`${ui.base}/ui/${file}`);
      assert.equal(res.status, 200, file);
      const text = await res.text();
      assert.equal(text.includes(API_KEY), false, `${file} holds the root key`);
      assert.equal(text.includes(readKey), false, `${file} holds a managed key`);
      assert.doesNotMatch(text, /ask_[A-Za-z0-9_-]{43}/, `${file} holds something shaped like a key`);
    }
  });

  test('node_modules, the repository and the API stay closed through /ui/', async () => {
    for (const path of [
      '/ui/vendor/package.json',
      '/ui/vendor/preact.mjs',
      '/ui/node_modules/preact/package.json',
      '/ui/../package.json',
      '/ui/vendor/../../package.json',
      '/ui/%2e%2e/package.json',
    ]) {
      const res = await rawGet(path);
      assert.ok(res.status === 403 || res.status === 404, `${path}: ${res.status}`);
      assert.equal(res.body.includes('"dependencies"'), false, path);
    }
    for (const path of ['/ui/../experiments', '/ui/%2e%2e/experiments', '/ui/../keys']) {
      const res = await rawGet(path);
      assert.notEqual(res.status, 200, path);
      assert.equal(res.body.includes('checkout-prompt'), false, path);
      assert.equal(res.body.includes('dashboard-viewer'), false, path);
    }
    const noKey = await fetch(`${ui.base}/experiments`);
    assert.equal(noKey.status, 401, 'the API still needs a key');
  });

  test("the CSP: scripts from this origin plus the import map's hash, nothing inline, no framing", async () => {
    const res = await fetch(`${ui.base}/ui/`);
    const html = await res.text();
    const map = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)![1]!;
    const hash = `'sha256-${createHash('sha256').update(map).digest('base64')}'`;
    const csp = res.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name!, values];
      }),
    );
    assert.deepEqual(directives.get('script-src'), ["'self'", hash]);
    assert.deepEqual(directives.get('script-src-attr'), ["'none'"]);
    assert.deepEqual(directives.get('connect-src'), ["'self'"]);
    assert.deepEqual(directives.get('default-src'), ["'self'"]);
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
    assert.deepEqual(directives.get('object-src'), ["'none'"]);
    assert.equal(csp.includes('unsafe-eval'), false);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    // The page holds no data, so it may be cached, but is revalidated (an upgrade is seen at once).
    assert.equal(res.headers.get('cache-control'), 'public, max-age=0');
    assert.ok(res.headers.get('etag'));
    const apiAnswer = await api('GET', '/experiments');
    assert.equal(apiAnswer.headers.get('cache-control'), 'no-store', 'API answers are still never stored');
    assert.equal(apiAnswer.headers.get('content-security-policy'), null);
  });
});

/** The browser's storage, as seen from the page (the tests are typed without the DOM library). */
interface WebStorage {
  getItem(name: string): string | null;
  length: number;
}
interface Tab {
  sessionStorage: WebStorage;
  localStorage: WebStorage;
}

/** The key the page keeps, and where: sessionStorage only, nothing in localStorage. */
async function storedKeys(page: Page): Promise<{ session: string | null; local: number }> {
  return page.evaluate((name) => {
    const tab = globalThis as unknown as Tab;
    return { session: tab.sessionStorage.getItem(name), local: tab.localStorage.length };
  }, KEY_STORAGE);
}

describe('signing in, in headless Chromium', () => {
  for (const width of WIDTHS) {
    test(`a wrong key is refused with a clear message and not kept (${width} px)`, async () => {
      const page = await openDashboard(ui.browser, ui.base, { key: 'not-the-key-0123456789', width });
      try {
        const error = page.getByTestId('login-error');
        await error.waitFor();
        assert.match(await error.innerText(), /not accepted|unauthori[sz]ed|wrong|invalid/i);
        assert.equal(await page.getByTestId('login-form').isVisible(), true, 'the prompt stays');
        assert.equal(await page.getByTestId('experiments-page').count(), 0);
        assert.deepEqual(await storedKeys(page), { session: null, local: 0 });
        await screenshot(page, `login-wrong-key-${width}`);
        // The browser itself logs the refused request; nothing else may be logged.
        assertNoConsoleErrors(page, [/Failed to load resource: .* 401 .*\/keys\/me\)$/]);
      } finally {
        await page.context().close();
      }
    });

    test(`a read key sees the experiments and no edit control (${width} px)`, async () => {
      const page = await openDashboard(ui.browser, ui.base, { key: readKey, width });
      try {
        await page.getByTestId('experiments-page').waitFor();
        await page.getByText('checkout-prompt').first().waitFor();
        assert.equal(await page.getByTestId('login-form').count(), 0);
        assert.equal(await page.getByTestId('new-experiment').count(), 0, 'no create button for a read key');
        assert.deepEqual(await storedKeys(page), { session: readKey, local: 0 });
        assert.equal(page.url().includes(readKey), false, 'the key is never in the URL');
        await screenshot(page, `experiments-read-key-${width}`);
        assertNoConsoleErrors(page);
      } finally {
        await page.context().close();
      }
    });

    test(`the root key sees the edit controls (${width} px)`, async () => {
      const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width });
      try {
        await page.getByTestId('experiments-page').waitFor();
        await page.getByText('checkout-prompt').first().waitFor();
        await page.getByTestId('new-experiment').waitFor();
        assert.equal(await page.getByTestId('new-experiment').isVisible(), true);
        assert.deepEqual(await storedKeys(page), { session: API_KEY, local: 0 });
        await screenshot(page, `experiments-admin-${width}`);
        assertNoConsoleErrors(page);
      } finally {
        await page.context().close();
      }
    });
  }

  test('a reload keeps the session in the tab; a new tab asks for the key again', async () => {
    const page = await openDashboard(ui.browser, ui.base, { key: readKey });
    try {
      await page.getByTestId('experiments-page').waitFor();
      await page.reload();
      await page.getByTestId('experiments-page').waitFor();
      const other = await page.context().newPage();
      await other.goto(`${ui.base}/ui/`);
      await other.getByTestId('login-form').waitFor();
      const kept = await other.evaluate(
        (name) => (globalThis as unknown as Tab).sessionStorage.getItem(name),
        KEY_STORAGE,
      );
      assert.equal(kept, null);
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });
});
