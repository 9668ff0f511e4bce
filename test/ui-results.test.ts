// The results page (issue 26) in headless Chromium against a real server: newest first, the variant as a
// select, worst first by a declared metric and by an undeclared one (feedback counts over a result's own
// value), the feedback and the assign context shown with each result, and side by side: every result of
// two variants per question, with n and mean rating per variant. What the page shows is compared with
// the API's answers.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-results-root-key-0123456789abcd';
const ui = dashboardRun(API_KEY, { setup: setUp });
const SLUG = 'results-view';
const QUESTIONS = [
  'Where is my order?',
  'How do I reset my password?',
  'Can I change my plan?',
  'Do you ship abroad?',
];

let readKey: string;
const call = ui.call;

interface Result {
  logId: string;
  variantKey: string;
  input: { question: string } | null;
  output: { answer: string } | null;
  metrics: Record<string, unknown> | null;
  feedback: Record<string, number | boolean>;
  assignmentContext: Record<string, unknown> | null;
}
type Page_ = { results: Result[]; nextCursor: string | null };

const results = (query: string) => call<Page_>('GET', `/experiment/${SLUG}/results?${query}`);

async function seed(): Promise<void> {
  await call('POST', '/experiments', {
    slug: SLUG,
    name: 'Results view',
    status: 'running',
    variants: [
      { key: 'big', payload: { model: 'large' }, trafficPercent: 50 },
      { key: 'small', payload: { model: 'small' }, trafficPercent: 50 },
    ],
    metrics: [{ name: 'rating', direction: 'increase', role: 'primary' }],
  });
  // 30 calls: each question asked several times; every third one rated late by feedback (on its
  // assignment or on the result), the others carry their own rating; tokens are undeclared.
  for (let i = 0; i < 30; i++) {
    const userId = `user-${i}`;
    const a = await call<{ variant: string; assignmentId: string }>('POST', `/experiment/${SLUG}/assign`, {
      userId,
      context: { plan: i % 2 ? 'free' : 'pro', user: userId },
    });
    const question = QUESTIONS[i % QUESTIONS.length]!;
    const { logId } = await call<{ logId: string }>('POST', `/experiment/${SLUG}/log`, {
      variantKey: a.variant,
      userId,
      assignmentId: a.assignmentId,
      input: { question },
      output: { answer: `${a.variant} answer #${i} to ${question}` },
      metrics: i % 3 === 0 ? { tokens: 100 + i } : { tokens: 100 + i, rating: 2 + (i % 4) },
    });
    if (i % 3 === 0) {
      const target = i % 2 ? { logId } : { assignmentId: a.assignmentId };
      await call('POST', `/experiment/${SLUG}/feedback`, {
        ...target,
        metrics: { rating: i % 6 === 0 ? 1 : 5 },
      });
    }
  }
  // The assigns' exposures are written in the background: wait until every result shows its context.
  for (let tries = 0; ; tries++) {
    const all = await results('limit=100');
    if (all.results.every((r) => r.assignmentContext !== null)) break;
    assert.ok(tries < 100, 'assignment contexts were not committed');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The file's data, written once the server answers. */
async function setUp(): Promise<void> {
  readKey = (await call('POST', '/keys', { name: 'viewer', scopes: ['read'] })).key;
  await seed();
}

/** The logIds of the rows shown, top to bottom. */
async function shownIds(page: Page): Promise<string[]> {
  return page
    .getByTestId('result-row')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-log-id') ?? ''));
}

/** Waits until the rows shown are exactly `ids`, in order. */
async function waitForRows(page: Page, ids: string[]): Promise<void> {
  // Polled from here: the dashboard's Content-Security-Policy refuses the page-side eval waitForFunction uses.
  const deadline = Date.now() + 10_000;
  let shown = await shownIds(page);
  while (JSON.stringify(shown) !== JSON.stringify(ids) && Date.now() < deadline) {
    await page.waitForTimeout(50);
    shown = await shownIds(page);
  }
  assert.deepEqual(shown, ids);
}

describe('the results page in headless Chromium', () => {
  test('newest first, with the feedback and the assign context of each result; the variant is a select', async () => {
    const page = await openDashboard(ui.browser, ui.base, {
      key: readKey,
      hash: `#/experiment/${SLUG}/results`,
    });
    try {
      const newest = await results('order=desc&limit=25');
      await waitForRows(
        page,
        newest.results.map((r) => r.logId),
      );
      // Newest first is commit order reversed.
      const oldestFirst = (await results('order=asc&limit=100')).results.map((r) => r.logId);
      assert.deepEqual(await shownIds(page), oldestFirst.reverse().slice(0, 25));
      // Each row: its feedback and its assign context, as the API has them.
      for (const r of newest.results) {
        const row = page.locator(`[data-testid="result-row"][data-log-id="${r.logId}"]`);
        const feedback = await row.getByTestId('result-feedback').innerText();
        if (Object.keys(r.feedback).length === 0) assert.equal(feedback.trim(), '—');
        else assert.equal(feedback.trim(), `rating: ${r.feedback.rating}`);
        const context = await row.getByTestId('result-assign-context').innerText();
        assert.equal(
          context.trim(),
          `plan: ${r.assignmentContext!.plan} · user: ${r.assignmentContext!.user}`,
        );
      }
      const rated = newest.results.find((r) => Object.keys(r.feedback).length > 0)!;
      const row = page.locator(`[data-testid="result-row"][data-log-id="${rated.logId}"]`);
      await row.getByTestId('expand-result').click();
      const detail = page.getByTestId('result-detail');
      assert.match(
        await detail.getByLabel('Feedback').innerText(),
        new RegExp(`"rating": ${rated.feedback.rating}`),
      );
      assert.match(await detail.getByLabel('Assign context').innerText(), /"plan": "(pro|free)"/);

      // The variant filter is a select of the variants.
      const select = page.getByTestId('variant-filter');
      assert.equal(await select.evaluate((e) => e.tagName), 'SELECT');
      assert.deepEqual(await select.locator('option').allInnerTexts(), ['all', 'big', 'small']);
      await select.selectOption('small');
      await page.waitForURL(/variant=small/);
      const small = await results('order=desc&limit=25&variant=small');
      await waitForRows(
        page,
        small.results.map((r) => r.logId),
      );
      assert.deepEqual([...new Set(await page.getByTestId('result-variant').allInnerTexts())], ['small']);
      await screenshot(page, 'results-newest-first');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });

  test('worst first: by a declared metric (feedback over own values), and by an undeclared one with its direction picked', async () => {
    const page = await openDashboard(ui.browser, ui.base, {
      key: readKey,
      hash: `#/experiment/${SLUG}/results`,
    });
    try {
      await page.getByTestId('result-row').first().waitFor();
      await page.getByTestId('results-view').selectOption('worst');
      await page.getByTestId('results-metric').selectOption('rating');
      // rating should increase: worst is lowest first.
      assert.match(await page.getByTestId('worst-is').innerText(), /lowest/);
      const worst = await results('metric=rating&sort=metric&order=asc&limit=25');
      assert.equal(worst.results.length, 25);
      await waitForRows(
        page,
        worst.results.map((r) => r.logId),
      );
      // The worst are the ones rated 1 by feedback, whatever they carried themselves.
      const firstRow = page.getByTestId('result-row').first();
      assert.equal((await firstRow.getByTestId('result-feedback').innerText()).trim(), 'rating: 1');
      await screenshot(page, 'results-worst-first');
      // The next page continues worst first, by the API's cursor.
      assert.ok(worst.nextCursor);
      const rest = await results(`metric=rating&sort=metric&order=asc&limit=25&cursor=${worst.nextCursor}`);
      assert.equal(rest.results.length, 5);
      await page.getByTestId('next-page').click();
      await waitForRows(
        page,
        rest.results.map((r) => r.logId),
      );
      await page.getByTestId('prev-page').click();
      await waitForRows(
        page,
        worst.results.map((r) => r.logId),
      );

      // Best first, then an undeclared metric whose worst end is picked: highest tokens first.
      await page.getByTestId('results-view').selectOption('best');
      await waitForRows(
        page,
        (await results('metric=rating&sort=metric&order=desc&limit=25')).results.map((r) => r.logId),
      );
      await page.getByTestId('results-view').selectOption('worst');
      await page.getByTestId('results-metric').selectOption('tokens');
      await page.getByTestId('worst-is').selectOption('high');
      await waitForRows(
        page,
        (await results('metric=tokens&sort=metric&order=desc&limit=25')).results.map((r) => r.logId),
      );
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });

  test('side by side: every result per question, n and mean rating per variant as the results list has them', async () => {
    const page = await openDashboard(ui.browser, ui.base, {
      key: readKey,
      hash: `#/experiment/${SLUG}/results`,
    });
    try {
      await page.getByTestId('result-row').first().waitFor();
      await page.getByTestId('mode-compare').click();
      await page.getByTestId('compare-list').waitFor();
      // Worked out here from every result: rating as the list filters by it (feedback first, then its own).
      const all = (await results('limit=100&order=desc')).results;
      const rated = (await results('limit=100&metric=rating')).results;
      const rating = new Map(
        rated.map((r) => [
          r.logId,
          typeof r.feedback.rating === 'number' ? r.feedback.rating : Number(r.metrics!.rating),
        ]),
      );
      const rows = page.getByTestId('compare-row');
      assert.equal(await rows.count(), QUESTIONS.length);
      for (let i = 0; i < QUESTIONS.length; i++) {
        const row = rows.nth(i);
        const question = (await row.getByTestId('compare-input').innerText()).trim();
        for (const [side, variant] of [
          ['a', 'big'],
          ['b', 'small'],
        ] as const) {
          const mine = all.filter((r) => r.variantKey === variant && r.input?.question === question);
          const scores = mine.flatMap((r) => (rating.has(r.logId) ? [rating.get(r.logId)!] : []));
          const cells = row.getByTestId(`compare-side-${side}`);
          assert.equal(
            (await cells.getByTestId('compare-n').innerText()).trim(),
            String(mine.length),
            question,
          );
          const mean =
            scores.length === 0
              ? '—'
              : String(Number((scores.reduce((t, v) => t + v, 0) / scores.length).toPrecision(4)));
          assert.equal(
            (await cells.getByTestId('compare-mean').innerText()).trim(),
            mean,
            `${question} ${variant}`,
          );
          // The newest outputs, as text.
          const newest = mine.slice(0, 3).map((r) => r.output!.answer);
          assert.deepEqual(
            (
              await row
                .getByTestId('compare-outputs')
                .nth(side === 'a' ? 0 : 1)
                .getByTestId('compare-output-text')
                .allInnerTexts()
            ).map((t) => t.trim()),
            newest,
          );
        }
      }
      await screenshot(page, 'results-side-by-side');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });
});
