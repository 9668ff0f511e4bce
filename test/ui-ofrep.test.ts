// OFREP in a browser (issue 28, ADR 0029): the published web SDK (@openfeature/web-sdk) with the
// published web provider (@openfeature/ofrep-web-provider), bundled by esbuild and run in headless
// Chromium against a real server. The provider evaluates every flag at start (bulk); a sticky user gets
// the variant assign gives; an unknown flag the code default; and the `after` hook the README shows posts
// each flag's assignmentId to POST /exposures once, so the exposure is counted.
import assert from 'node:assert/strict';
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

const ENTRY = `
export { OpenFeature } from '@openfeature/web-sdk';
export { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
`;

/** What the page does, as the README's snippet: provider, context, and the exposure hook. */
const PAGE_SCRIPT = `
window.startFlags = async (key, user) => {
  const { OpenFeature, OFREPWebProvider } = window.OF;
  const base = location.origin;
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
    new OFREPWebProvider({ baseUrl: base, headers: [['x-api-key', key]], cacheMode: 'disabled', changeDetection: 'none' }),
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
  startFlags(key: string, user: string): Promise<string>;
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

  before(async () => {
    dir = makeTempDir();
    rt = await startTestRuntime(dir, 'ui_ofrep');
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
    await rt?.close();
    removeTempDir(dir);
  });

  /** A page on the server's own origin (so no CORS), its HTML served by the test, the bundle added. */
  async function open(): Promise<{ page: Page; bulk: string[]; errors: string[] }> {
    const base = `http://127.0.0.1:${api.port}`;
    const context = await browser.newContext();
    const page = await context.newPage();
    const bulk: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/ofrep/v1/evaluate/flags')) bulk.push(r.method());
    });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route(`${base}/ofrep-page`, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>ofrep</title>' }),
    );
    await page.goto(`${base}/ofrep-page`);
    await page.addScriptTag({ content: bundle });
    await page.addScriptTag({ content: PAGE_SCRIPT });
    return { page, bulk, errors };
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
});
