// Results for reading (issue 36) in headless Chromium against a real server, at 1400 and 390 px: each
// row of the results list shows its input and output as text (first lines, "more" to read on) beside its
// score, numbers rounded everywhere (a logged 1517.5356831594258 reads 1,518); "Side by side" groups every
// result of two variants by input with n, mean score and win rate per variant, as computed here by hand,
// and their newest outputs as text. No overflow sideways, no console errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  assertNoConsoleErrors,
  assertNoOverflow,
  openDashboard,
  screenshot,
  waitUntil,
} from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-compare-root-key-0123456789abcd';
const SLUG = 'compare-view';
const ui = dashboardRun(API_KEY);
const call = ui.call;

const RESET = 'How do I reset my password?';
const SHIP = 'Do you ship abroad?';
const LINES = ['Open Settings.', 'Choose Security.', 'Press Reset.', 'Check your mail.', 'Follow the link.'];
const ids: Record<string, string> = {};

async function log(name: string, body: Record<string, unknown>): Promise<void> {
  ids[name] = (await call<{ logId: string }>('POST', `/experiment/${SLUG}/log`, body)).logId;
}

let seeded: Promise<void> | undefined;
/** Seeds once, from the first test (the server starts in dashboardRun's before hook). */
const seed = () => {
  seeded ??= seedOnce();
  return seeded;
};

async function seedOnce(): Promise<void> {
  await call('POST', '/experiments', {
    slug: SLUG,
    name: 'Compare view',
    status: 'running',
    variants: [
      { key: 'long', payload: { style: 'long' }, trafficPercent: 50 },
      { key: 'short', payload: { style: 'short' }, trafficPercent: 50 },
    ],
    metrics: [{ name: 'quality', direction: 'increase', role: 'primary' }],
  });
  // RESET: long 4, 5 (2 by feedback), 1; short 3, 3 (its keys in another order).
  await log('r1', {
    variantKey: 'long',
    input: { question: RESET, lang: 'en' },
    output: { text: LINES.join('\n') },
    metrics: { quality: 4, latency_ms: 1517.5356831594258 },
  });
  await log('r2', {
    variantKey: 'short',
    input: { lang: 'en', question: RESET },
    output: { answer: 'Settings.' },
    metrics: { quality: 3 },
  });
  await log('r3', {
    variantKey: 'long',
    input: { question: RESET, lang: 'en' },
    output: { text: 'Go to Settings.' },
    metrics: { quality: 5 },
  });
  await call('POST', `/experiment/${SLUG}/feedback`, {
    logId: ids.r3,
    metrics: { quality: 2 },
    comment: 'Too short: it skips the email step.',
  });
  await log('r4', {
    variantKey: 'short',
    input: { question: RESET, lang: 'en' },
    output: { answer: 'Security tab.' },
    metrics: { quality: 3 },
  });
  await log('r5', {
    variantKey: 'long',
    input: { lang: 'en', question: RESET },
    output: { text: 'Ask support.' },
    metrics: { quality: 1 },
  });
  // SHIP: long 5; short 1, 2, 3.
  await log('s1', {
    variantKey: 'short',
    input: { question: SHIP },
    output: { answer: 'No.' },
    metrics: { quality: 1 },
  });
  await log('s2', {
    variantKey: 'long',
    input: { question: SHIP },
    output: { text: 'Yes, to 40 countries.' },
    metrics: { quality: 5 },
  });
  await log('s3', {
    variantKey: 'short',
    input: { question: SHIP },
    output: { answer: 'Yes.' },
    metrics: { quality: 2 },
  });
  await log('s4', {
    variantKey: 'short',
    input: { question: SHIP },
    output: { answer: 'Some.' },
    metrics: { quality: 3 },
  });
  // Long only, unscored, an output with no text field: shown as JSON, its numbers rounded.
  await log('o1', {
    variantKey: 'long',
    input: { question: 'Hi' },
    output: { tokens: 12, cost: 0.000123456, p: 0.123456 },
  });
}

const text = async (page: Page, selector: string) =>
  ((await page.locator(selector).first().innerText()) ?? '').trim();

test('results list: input and output as text in the row, expandable, beside the score; numbers rounded', async () => {
  await seed();
  for (const width of [1400, 390]) {
    const page = await openDashboard(ui.browser, ui.base, {
      key: API_KEY,
      width,
      hash: `#/experiment/${SLUG}/results`,
    });
    try {
      const row = page.locator(`[data-testid="result-row"][data-log-id="${ids.r1}"]`);
      await row.waitFor();
      assert.equal((await row.getByTestId('result-input').innerText()).trim(), RESET);
      const output = row.getByTestId('result-output');
      // The first three lines, then "more" for the rest, "less" to fold it again.
      assert.equal((await output.locator('pre').innerText()).trim(), LINES.slice(0, 3).join('\n'));
      await output.getByTestId('text-more').click();
      assert.equal((await output.locator('pre').innerText()).trim(), LINES.join('\n'));
      assert.equal((await output.getByTestId('text-more').innerText()).trim(), 'less');
      await output.getByTestId('text-more').click();
      assert.equal((await output.locator('pre').innerText()).trim(), LINES.slice(0, 3).join('\n'));
      // The score beside it, rounded; feedback over the result's own value.
      assert.equal(
        (await row.getByTestId('result-metrics').innerText()).trim(),
        'quality: 4 · latency_ms: 1,518',
      );
      const rated = page.locator(`[data-testid="result-row"][data-log-id="${ids.r3}"]`);
      assert.equal((await rated.getByTestId('result-feedback').innerText()).trim(), 'quality: 2');
      // Feedback comments beside the score, when the API gives them with each result (`comments`);
      // a result without the field shows none.
      const listed = await call<{ results: Array<{ logId: string; comments?: Array<{ text: string }> }> }>(
        'GET',
        `/experiment/${SLUG}/results?limit=100`,
      );
      const comments = listed.results.find((r) => r.logId === ids.r3)!.comments ?? [];
      assert.deepEqual(
        comments.map((c) => c.text),
        ['Too short: it skips the email step.'],
      );
      assert.deepEqual(
        (await rated.getByTestId('result-comment').locator('.comment-text').allInnerTexts()).map((t) =>
          t.trim(),
        ),
        comments.map((c) => c.text),
      );
      // A short answer has no "more"; an object without a text field reads as JSON with numbers rounded.
      assert.equal(await rated.getByTestId('text-more').count(), 0);
      const json = page
        .locator(`[data-testid="result-row"][data-log-id="${ids.o1}"]`)
        .getByTestId('result-output');
      const shown = await json.locator('pre').innerText();
      assert.match(shown, /"tokens": 12/);
      assert.match(shown, /"cost": 0.0001235,/);
      await json.getByTestId('text-more').click();
      assert.match(await json.locator('pre').innerText(), /"p": 0.1235\b/);
      // Details: the JSON with rounded numbers, never the raw 1517.5356831594258.
      await row.getByTestId('expand-result').click();
      const detail = await text(page, '[data-testid="result-detail"]');
      assert.match(detail, /"latency_ms": 1518/);
      assert.doesNotMatch(detail, /1517\.53/);
      await assertNoOverflow(page, `results list at ${width} px`);
      await screenshot(page, `results-text-${width}`);
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  }
});

test('search: text in an output, an input or a feedback comment; too short is not sent', async () => {
  await seed();
  for (const width of [1400, 390]) {
    const page = await openDashboard(ui.browser, ui.base, {
      key: API_KEY,
      width,
      hash: `#/experiment/${SLUG}/results`,
    });
    try {
      await page.getByTestId('result-row').first().waitFor();
      const shownIds = async () =>
        (
          await page
            .getByTestId('result-row')
            .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-log-id')))
        )
          .filter((id): id is string => id !== null)
          .sort();
      const search = async (q: string, expected: Array<string | undefined>) => {
        await page.getByTestId('result-search-input').fill(q);
        await page.getByTestId('result-search-input').press('Enter');
        await waitUntil(
          page,
          async () => JSON.stringify(await shownIds()) === JSON.stringify([...expected].map(String).sort()),
          `search ${q}`,
        );
        // The page asks the API with q and shows exactly what it answers.
        const answered = await call<{ results: Array<{ logId: string }> }>(
          'GET',
          `/experiment/${SLUG}/results?limit=100&q=${encodeURIComponent(q)}`,
        );
        assert.deepEqual(await shownIds(), answered.results.map((r) => r.logId).sort(), q);
      };
      await search('SECURITY TAB', [ids.r4]); // an output, whatever the case
      await search('skips the email', [ids.r3]); // a feedback comment
      await search('Do you ship', [ids.s1, ids.s2, ids.s3, ids.s4]); // an input
      await page.getByTestId('result-search-input').fill('zz');
      assert.equal(await page.getByTestId('result-search-go').isDisabled(), true);
      assert.match(await page.getByTestId('result-search-hint').innerText(), /at least 3 characters/);
      await page.getByTestId('result-search-input').fill('no such words anywhere');
      await page.getByTestId('result-search-input').press('Enter');
      await page.getByTestId('no-results').waitFor();
      await page.getByTestId('result-search-clear').click();
      await page.getByTestId('result-row').first().waitFor();
      assert.ok((await shownIds()).length > 4, 'clearing the search lists every result again');
      await assertNoOverflow(page, `results search at ${width} px`);
      await screenshot(page, `results-search-${width}`);
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  }
});

interface Expected {
  input: string;
  n: [string, string];
  mean: [string, string];
  win: [string, string];
  newest: [string[], string[]];
}

// By hand. RESET: long (4, 2, 1) mean 2.333, short (3, 3) mean 3; long wins 4>3 twice of 6 pairs = 33.3%.
// SHIP: long (5) beats each of short's (1, 2, 3): 100%. Hi: long only, unscored.
const EXPECTED: Expected[] = [
  {
    input: RESET,
    n: ['3', '2'],
    mean: ['2.333', '3'],
    win: ['33.3%', '66.7%'],
    newest: [
      ['r5', 'r3', 'r1'],
      ['r4', 'r2'],
    ],
  },
  {
    input: SHIP,
    n: ['1', '3'],
    mean: ['5', '2'],
    win: ['100.0%', '0.0%'],
    newest: [['s2'], ['s4', 's3', 's1']],
  },
  { input: 'Hi', n: ['1', '0'], mean: ['—', '—'], win: ['—', '—'], newest: [['o1'], []] },
];

test('side by side: every result per input, with n, mean score and win rate per variant', async () => {
  await seed();
  for (const width of [1400, 390]) {
    const page = await openDashboard(ui.browser, ui.base, {
      key: API_KEY,
      width,
      hash: `#/experiment/${SLUG}/results?mode=compare`,
    });
    try {
      await page.getByTestId('compare-list').waitFor();
      assert.equal(await page.getByTestId('compare-metric').inputValue(), 'quality');
      const rows = page.getByTestId('compare-row');
      await waitUntil(page, async () => (await rows.count()) === EXPECTED.length, 'three inputs');
      for (const [i, e] of EXPECTED.entries()) {
        const row = rows.nth(i);
        assert.equal((await row.getByTestId('compare-input').innerText()).trim(), e.input);
        for (const [s, side] of (['a', 'b'] as const).entries()) {
          const cells = row.getByTestId(`compare-side-${side}`);
          assert.equal(
            (await cells.getByTestId('compare-n').innerText()).trim(),
            e.n[s],
            `${e.input} n ${side}`,
          );
          assert.equal(
            (await cells.getByTestId('compare-mean').innerText()).trim(),
            e.mean[s],
            `${e.input} mean ${side}`,
          );
          assert.equal(
            (await cells.getByTestId('compare-win').innerText()).trim(),
            e.win[s],
            `${e.input} win ${side}`,
          );
          const outputs = row.getByTestId('compare-outputs').nth(s).getByTestId('compare-output');
          assert.deepEqual(
            await outputs.evaluateAll((li) => li.map((l) => l.getAttribute('data-log-id'))),
            e.newest[s]!.map((name) => ids[name]),
          );
        }
      }
      // Outputs are text: the newest of long for RESET is "Ask support."; the five-line one expands.
      const first = rows.nth(0).getByTestId('compare-outputs').first();
      assert.equal(
        (await first.getByTestId('compare-output-text').first().innerText()).trim(),
        'Ask support.',
      );
      const long = first.locator(`[data-log-id="${ids.r1}"]`);
      await long.getByTestId('text-more').click();
      assert.equal((await long.locator('pre').innerText()).trim(), LINES.join('\n'));
      assert.doesNotMatch(await text(page, '[data-testid="compare-list"]'), /"text":/);
      await assertNoOverflow(page, `side by side at ${width} px`);
      await screenshot(page, `results-compare-${width}`);
      // Swapped: short's win rates are long's complements.
      await page.getByTestId('compare-a').selectOption('short');
      await page.getByTestId('compare-b').selectOption('long');
      await waitUntil(
        page,
        async () =>
          (await rows.nth(0).getByTestId('compare-side-a').locator('th').innerText()).trim() === 'short',
        'the sides swapped',
      );
      const a = rows.nth(0).getByTestId('compare-side-a');
      assert.equal((await a.getByTestId('compare-win').innerText()).trim(), '66.7%');
      assert.equal((await a.getByTestId('compare-mean').innerText()).trim(), '3');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  }
});
