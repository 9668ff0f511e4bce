// OFREP in a browser (issue 28, ADR 0029): the published web SDK (@openfeature/web-sdk) with the
// published web provider (@openfeature/ofrep-web-provider), bundled by esbuild and run in headless
// Chromium against a real server. The provider evaluates every flag at start (bulk); a sticky user gets
// the variant assign gives; an unknown flag the code default; and the `after` hook the README shows posts
// each flag's assignmentId to POST /exposures once, so the exposure is counted.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import {
  API_KEY,
  type Api,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';
import { launchBrowser } from './helpers/browser.js';

const PAGE_HTML = '<!doctype html><title>ofrep</title>';

const ENTRY = `
export { OpenFeature } from '@openfeature/web-sdk';
export { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
`;

/** What the page does, as the README's snippet: provider, context, and the exposure hook. */
const PAGE_SCRIPT = `
window.startFlags = async (key, user, base = location.origin, options = {}) => {
  const { OpenFeature, OFREPWebProvider } = window.OF;
  const posted = new Set();
  window.exposurePosts = [];
  OpenFeature.addHooks({
    after(hookContext, details) {
      const assignmentId = details.flagMetadata?.assignmentId;
      if (typeof assignmentId !== 'string' || posted.has(hookContext.flagKey)) return;
      posted.add(hookContext.flagKey);
      const { targetingKey, ...context } = hookContext.context;
      window.exposurePosts.push(
        fetch(base + '/exposures', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ exposures: [{ experiment: hookContext.flagKey, assignmentId, context }] }),
        }).then((r) => r.status),
      );
    },
  });
  await OpenFeature.setContext({ targetingKey: user, plan: 'pro' });
  await OpenFeature.setProviderAndWait(
    new OFREPWebProvider({
      baseUrl: base,
      headers: [['x-api-key', key]],
      cacheMode: 'disabled',
      changeDetection: 'none',
      ...options,
    }),
  );
  return 'ready';
};
window.read = (flag, fallback) => {
  const d = window.OF.OpenFeature.getClient().getObjectDetails(flag, fallback);
  return { value: d.value, variant: d.variant, reason: d.reason, errorCode: d.errorCode, metadata: d.flagMetadata };
};
window.settle = async () => Promise.all(window.exposurePosts);
`;

/** What PAGE_SCRIPT puts on the page's window. */
interface PageApi {
  startFlags(key: string, user: string, base?: string, options?: Record<string, unknown>): Promise<string>;
  read(
    flag: string,
    fallback: Record<string, unknown>,
  ): {
    value: Record<string, unknown>;
    variant?: string;
    reason?: string;
    errorCode?: string;
    metadata: Record<string, string | number>;
  };
  settle(): Promise<number[]>;
}

describe('OFREP with the published web provider in Chromium', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let rt: TestRuntime;
  let api: Api;
  let browser: Browser;
  let bundle: string;
  let slug: string;
  /** The other origin's server (Chromium refuses a page fulfilled by page.route to reach loopback). */
  let pageServer: Server;
  let pageOrigin: string;

  before(async () => {
    pageServer = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE_HTML);
    });
    await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
    pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
    dir = makeTempDir();
    // Any origin: the second test's page is on another origin than the API (CORS, as a real page).
    rt = await startTestRuntime(dir, 'ui_ofrep', { corsOrigins: ['*'] });
    api = rt.api;
    slug = (await api.createExperiment({ slug: 'web-sticky', assignment: 'sticky' })).slug;
    await api.createExperiment({ slug: 'web-random' });
    const out = await build({
      stdin: { contents: ENTRY, resolveDir: process.cwd(), loader: 'js' },
      bundle: true,
      format: 'iife',
      globalName: 'OF',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    bundle = out.outputFiles[0]!.text;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await new Promise((r) => pageServer?.close(r));
    await rt?.close();
    removeTempDir(dir);
  });

  /**
   * A page with the bundle added: on the server's own origin (its HTML served by the test through
   * page.route; no CORS), or served by a tiny server of the test on another port (another origin: every
   * call to the API is cross-origin).
   */
  async function open(
    crossOrigin = false,
  ): Promise<{ page: Page; bulk: string[]; statuses: number[]; errors: string[] }> {
    const base = crossOrigin ? pageOrigin : `http://127.0.0.1:${api.port}`;
    const context = await browser.newContext();
    const page = await context.newPage();
    const bulk: string[] = [];
    const statuses: number[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/ofrep/v1/evaluate/flags')) bulk.push(r.method());
    });
    page.on('response', (r) => {
      if (r.url().endsWith('/ofrep/v1/evaluate/flags') && r.request().method() === 'POST')
        statuses.push(r.status());
    });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    if (!crossOrigin)
      await page.route(`${base}/ofrep-page`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body: PAGE_HTML }),
      );
    await page.goto(`${base}/ofrep-page`);
    await page.addScriptTag({ content: bundle });
    await page.addScriptTag({ content: PAGE_SCRIPT });
    return { page, bulk, statuses, errors };
  }

  test('bulk at start; the sticky variant equals assign; unknown flags the default; the hook counts the exposure', async () => {
    const { page, bulk, errors } = await open();
    try {
      for (const user of ['web-user-1', 'web-user-2', 'web-user-3']) {
        const fresh = await open();
        try {
          assert.equal(
            await fresh.page.evaluate(({ k, u }) => (globalThis as unknown as PageApi).startFlags(k, u), {
              k: API_KEY,
              u: user,
            }),
            'ready',
          );
          const d = await fresh.page.evaluate(
            (f) => (globalThis as unknown as PageApi).read(f, { prompt: 'default' }),
            slug,
          );
          const assigned = await api.assign(slug, { userId: user });
          assert.equal(d.reason, 'SPLIT');
          assert.equal(d.variant, assigned.variant, user);
          assert.deepEqual(d.value, assigned.payload);
          assert.deepEqual(fresh.errors, []);
        } finally {
          await fresh.page.context().close();
        }
      }

      const user = 'web-user-9';
      assert.equal(
        await page.evaluate(({ k, u }) => (globalThis as unknown as PageApi).startFlags(k, u), {
          k: API_KEY,
          u: user,
        }),
        'ready',
      );
      assert.deepEqual(bulk, ['POST'], 'one bulk evaluation at start');
      const before = (await rt.exposuresOf(slug)).filter((e) => e.userId === user).length;
      assert.equal(before, 0, 'the bulk evaluation records nothing');

      const unknown = await page.evaluate(() =>
        (globalThis as unknown as PageApi).read('no-such-flag', { prompt: 'code default' }),
      );
      assert.deepEqual(unknown.value, { prompt: 'code default' });
      assert.equal(unknown.errorCode, 'FLAG_NOT_FOUND');

      // Read twice: the hook posts once.
      const first = await page.evaluate((f) => (globalThis as unknown as PageApi).read(f, {}), slug);
      await page.evaluate((f) => (globalThis as unknown as PageApi).read(f, {}), slug);
      assert.deepEqual(await page.evaluate(() => (globalThis as unknown as PageApi).settle()), [200]);
      const mine = (await rt.exposuresOf(slug)).filter((e) => e.userId === user);
      assert.equal(mine.length, 1, 'one exposure for the first read');
      assert.equal(mine[0]!.variantKey, first.variant);
      assert.equal(mine[0]!.assignmentId, first.metadata.assignmentId);
      assert.equal(first.metadata.experimentVersion, 1);
      assert.deepEqual(mine[0]!.context, { plan: 'pro' });
      const analysis = await api.get(`/experiment/${slug}/analysis`);
      assert.ok(analysis.json().exposures[first.variant!] >= 1);
      assert.deepEqual(errors, [], 'the page logged errors');
    } finally {
      await page.context().close();
    }
  });
  test('from another origin (CORS): polling sends the ETag back and an unchanged answer is 304', async () => {
    const key = (
      await api.post('/keys', { name: 'web-page', scopes: ['assign'], experiments: [slug] })
    ).json().key as string;
    const { page, statuses, errors } = await open(true);
    try {
      const apiBase = `http://127.0.0.1:${api.port}`;
      const started = await page.evaluate(
        ({ k, b }) =>
          (globalThis as unknown as PageApi).startFlags(k, 'web-user-5', b, {
            changeDetection: 'polling',
            pollInterval: 300,
          }),
        { k: key, b: apiBase },
      );
      assert.equal(started, 'ready');
      const d = await page.evaluate((f) => (globalThis as unknown as PageApi).read(f, {}), slug);
      assert.equal(d.variant, (await api.assign(slug, { userId: 'web-user-5' })).variant);
      const until = Date.now() + 15_000;
      while (!statuses.includes(304) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      assert.equal(statuses[0], 200);
      assert.ok(statuses.includes(304), `bulk statuses: ${statuses.join(',')}`);
      assert.deepEqual(
        statuses.filter((s) => s !== 200 && s !== 304),
        [],
      );
      assert.deepEqual(errors, [], 'the page logged errors');
    } finally {
      await page.context().close();
    }
  });
});
