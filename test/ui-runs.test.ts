// Datasets and offline runs in the dashboard (issue 40), in headless Chromium against a real server: the
// datasets page lists a 40-item dataset and pages its items (input, expected, metadata as text), any
// version; an experiment's "Offline runs" tab lists its runs; a run's comparison shows the verdict
// sentence first, a table whose every figure is the API's comparison as the page formats it, and the items
// that changed most with both outputs; "Start online" makes the experiment run with the control and the
// winner only, 50% each; a run of three variants has a control picker (no variant beats B: no button, the
// reason instead); a refusal (a completed experiment) shows the server's own error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
// @ts-expect-error: the dashboard is plain JavaScript (no build step), without type declarations
import * as pageFormat from '../dashboard/format.js';
import {
  assertNoConsoleErrors,
  assertNoOverflow,
  openDashboard,
  screenshot,
  waitUntil,
} from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-runs-root-key-0123456789abcdefgh';
const SLUG = 'offline-eval';
const DONE = 'offline-done';
const DATASET = 'support-questions';
const ITEMS = 40;
// The page's own rounding (as the scorecard's tests use it), so the texts compare exactly.
type Format = (x: unknown, kind?: string) => string;
const { formatCount, formatNumber, formatP, formatPoints, formatTime, formatValue } = pageFormat as Record<
  'formatCount' | 'formatNumber' | 'formatP' | 'formatPoints' | 'formatTime' | 'formatValue',
  Format
>;
const ui = dashboardRun(API_KEY, { setup: seed });
const call = ui.call;
const runs: Record<string, string> = {};

const question = (i: number) => `Question ${i}: where is my order?`;
const PAYLOADS: Record<string, Record<string, unknown>> = {
  A: { prompt: 'You are terse.' },
  B: { prompt: 'You are careful.' },
  C: { prompt: 'You are chatty.' },
};

/** A's, B's and C's answer to item i: B is right far more often (30 wins, 5 ties, 5 losses against A). */
function answer(variant: string, i: number) {
  const correct = variant === 'B' ? i % 8 !== 0 : i % 4 === 0 || (variant === 'C' && i === 1);
  const latency = 1000 + ((i * 37) % 200) + (variant === 'B' ? -40 + (i % 5) * 7 : 0);
  const text =
    variant === 'B'
      ? `B checks order ${i} first.\nThen it answers question ${i}.`
      : `${variant} answers ${i} at once.`;
  return { correct, latency_ms: variant === 'C' ? latency + ((i % 3) - 1) * 5 : latency, text };
}

async function openRun(slug: string, variants: string[]): Promise<string> {
  const run = await call('POST', `/experiment/${slug}/runs`, { dataset: DATASET, variants });
  const results = variants.flatMap((variantKey) =>
    Array.from({ length: ITEMS }, (_, i) => {
      const a = answer(variantKey, i);
      return {
        variantKey,
        runId: run.id,
        itemId: `q${i}`,
        trial: 1,
        input: { question: question(i) },
        output: { answer: a.text },
        metrics: { correct: a.correct, latency_ms: a.latency_ms },
      };
    }),
  );
  await call('POST', `/experiment/${slug}/logs`, { results });
  return run.id;
}

const METRICS = [
  { name: 'correct', direction: 'increase', role: 'primary' },
  { name: 'latency_ms', direction: 'decrease', role: 'secondary' },
];

async function seed(): Promise<void> {
  await call('POST', '/experiments', {
    slug: SLUG,
    name: 'Offline evaluation',
    status: 'draft',
    variants: ['A', 'B', 'C'].map((key, i) => ({
      key,
      payload: PAYLOADS[key],
      trafficPercent: i === 0 ? 34 : 33,
    })),
    metrics: METRICS,
  });
  const item = (i: number, q = question(i)) => ({
    id: `q${i}`,
    input: { question: q },
    expected: { answer: `Answer ${i}` },
    metadata: { topic: i % 2 === 0 ? 'shipping' : 'billing' },
  });
  const items = Array.from({ length: ITEMS }, (_, i) => item(i, i === 3 ? 'Old question 3' : question(i)));
  await call('POST', '/datasets', { name: DATASET, description: 'Questions from the support inbox', items });
  // Version 2 changes q3: version 1 keeps the old text.
  await call('POST', `/datasets/${DATASET}/items`, { items: [item(3)] });
  runs.ab = await openRun(SLUG, ['A', 'B']);
  runs.abc = await openRun(SLUG, ['A', 'B', 'C']);
  await call('POST', '/experiments', {
    slug: DONE,
    status: 'running',
    variants: ['A', 'B'].map((key) => ({ key, payload: PAYLOADS[key], trafficPercent: 50 })),
    metrics: METRICS,
  });
  runs.done = await openRun(DONE, ['A', 'B']);
  await call('PATCH', `/experiment/${DONE}`, { status: 'completed' });
}

const text = async (page: Page, testid: string, within = page.locator('body')) =>
  (await within.getByTestId(testid).first().innerText()).trim();

test("datasets: the list, a dataset's items a page at a time, an earlier version", async () => {
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY });
  try {
    await page.getByTestId('nav-datasets').click();
    const row = page.locator(`[data-testid="dataset-row"][data-name="${DATASET}"]`);
    await row.waitFor();
    const listed = (await call('GET', '/datasets')).datasets[0];
    assert.equal(listed.items, ITEMS);
    assert.equal(await text(page, 'dataset-items', row), String(ITEMS));
    assert.equal(await text(page, 'dataset-version', row), '2');
    assert.equal(await text(page, 'dataset-updated', row), formatTime(listed.updatedAt));
    await screenshot(page, 'datasets-list');
    await row.getByTestId('dataset-link').click();
    await page.getByTestId('items-table').waitFor();
    const rows = page.getByTestId('item-row');
    assert.equal(await rows.count(), 25);
    const first = rows.first();
    assert.equal(await text(page, 'item-id', first), 'q0');
    assert.equal(await text(page, 'item-input', first), question(0));
    assert.equal(await text(page, 'item-expected', first), 'Answer 0');
    assert.equal(await text(page, 'item-metadata', first), 'topic: shipping');
    const q3 = page.locator('[data-testid="item-row"][data-item-id="q3"]');
    assert.equal(await text(page, 'item-input', q3), question(3));
    assert.match(await text(page, 'items-shown'), /^Items 1–25 of 40 in version 2/);
    await page.getByTestId('items-next').click();
    await waitUntil(page, async () => (await rows.count()) === 15, 'the second page: 15 items');
    assert.equal(await text(page, 'item-id', rows.first()), 'q25');
    assert.equal(await page.getByTestId('items-next').isDisabled(), true);
    // Version 1: q3 as it was, back on the first page.
    await page.getByTestId('version-picker').selectOption('1');
    await waitUntil(
      page,
      async () => (await page.getByTestId('items-table').getAttribute('data-version')) === '1',
      'version 1',
    );
    assert.equal(await text(page, 'item-input', q3), 'Old question 3');
    await screenshot(page, 'dataset-items');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});

// The page's cell texts, from the API's JSON (formatValue, formatPoints, formatP as the page's format.js).
const pText = (p: number | null | undefined) =>
  p === null || p === undefined ? '—' : p < 1e-4 ? '< 0.0001' : String(Number(p.toPrecision(2)));
const signed = (x: number) => (x === 0 ? '0' : `${x > 0 ? '+' : '-'}${formatNumber(Math.abs(x))}`);
const points = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, signDisplay: 'exceptZero' });

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read field by field
function expectedCells(kind: string, c: any, control: string): Record<string, string> {
  const proportion = kind === 'proportion';
  const ci = c.difference.ci as [number, number];
  const boot = c.bootstrap.ci as [number, number];
  const cells: Record<string, string> = {
    'run-variant': `${c.variant} vs ${control}`,
    'run-control-mean': formatValue(c.control.mean, kind),
    'run-treatment-mean': formatValue(c.treatment.mean, kind),
    'run-difference': proportion
      ? formatPoints({ estimate: c.difference.estimate, ci })
      : `${signed(c.difference.estimate)} [${signed(ci[0])}, ${signed(ci[1])}]`,
    'run-p': pText(c.difference.pValue),
    'run-holm': pText(c.adjustedPValue),
    'run-wilcoxon': pText(c.wilcoxon.pValue),
    'run-bootstrap': proportion
      ? `[${points.format(boot[0] * 100)}, ${points.format(boot[1] * 100)}] points`
      : `[${signed(boot[0])}, ${signed(boot[1])}]`,
    'run-wtl': `${c.wins} / ${c.ties} / ${c.losses}`,
    'run-items-needed': formatCount(c.itemsNeeded),
  };
  if (proportion) {
    cells['run-mcnemar'] =
      `${control} only ${c.mcnemar.b} · ${c.variant} only ${c.mcnemar.c}\n${formatP(c.mcnemar.pValue)}`;
  }
  return cells;
}

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON
async function assertTable(page: Page, comparison: any): Promise<void> {
  const table = page.getByTestId('comparison-table');
  assert.equal(await table.getAttribute('data-control'), comparison.control);
  let count = 0;
  for (const m of comparison.metrics) {
    for (const c of m.comparisons) {
      count++;
      const row = page.locator(
        `[data-testid="comparison-row"][data-metric="${m.name}"][data-variant="${c.variant}"]`,
      );
      for (const [testid, want] of Object.entries(expectedCells(m.kind, c, comparison.control))) {
        assert.equal(await text(page, testid, row), want, `${m.name} ${c.variant} ${testid}`);
      }
      assert.equal(await row.getAttribute('data-significant'), String(c.significant));
    }
  }
  assert.equal(await page.getByTestId('comparison-row').count(), count);
  // The primary metric first; one trial: McNemar shown, no variance shares.
  assert.equal(await page.getByTestId('comparison-row').first().getAttribute('data-metric'), 'correct');
  assert.equal(await page.getByTestId('run-variance').count(), 0);
}

const asText = (output: unknown) => (output as { answer: string }).answer;

test("a run's comparison: the verdict first, every figure as the API's, the items that changed most", async () => {
  const comparison = await call('GET', `/runs/${runs.ab}/comparison`);
  assert.equal(comparison.control, 'A');
  const correct = comparison.metrics.find((m: { name: string }) => m.name === 'correct').comparisons[0];
  assert.deepEqual([correct.wins, correct.ties, correct.losses, correct.better], [30, 5, 5, true]);
  for (const width of [1280, 390]) {
    const page = await openDashboard(ui.browser, ui.base, {
      key: API_KEY,
      width,
      hash: `#/experiment/${SLUG}`,
    });
    try {
      await page.getByTestId('tab-runs').click();
      await page.getByTestId('runs-table').waitFor();
      assert.deepEqual(
        await page
          .getByTestId('run-row')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id'))),
        [runs.abc, runs.ab],
        'newest first',
      );
      await page.locator(`[data-testid="run-row"][data-run-id="${runs.ab}"]`).getByTestId('run-link').click();
      await page.getByTestId('comparison-table').waitFor();
      // The verdict sentence first, its `names` as code.
      const verdict = page.getByTestId('run-verdict');
      assert.equal(await verdict.getAttribute('data-status'), 'winner');
      assert.equal(await text(page, 'run-verdict-summary'), comparison.verdict.summary.replaceAll('`', ''));
      assert.match(comparison.verdict.summary, /^B beats A on `correct`/);
      const order = await page.evaluate(
        `[...document.querySelectorAll('[data-testid="run-verdict"], [data-testid="comparison-table"]')].map((e) => e.dataset.testid)`,
      );
      assert.deepEqual(order, ['run-verdict', 'comparison-table']);
      await assertTable(page, comparison);
      assert.equal(await page.getByTestId('run-control').count(), 0, 'two variants: no control picker');
      // The items that changed most: id, difference, input, both outputs and their scores.
      const items = page.getByTestId('changed-item');
      assert.equal(await items.count(), comparison.changed.length);
      assert.ok(comparison.changed.length > 0);
      for (const [i, c] of comparison.changed.entries()) {
        const item = items.nth(i);
        assert.equal(await text(page, 'changed-id', item), c.itemId);
        const difference = c.difference > 0 ? `+${formatNumber(c.difference)}` : formatNumber(c.difference);
        assert.equal(await text(page, 'changed-difference', item), difference);
        const sides = item.getByTestId('changed-side');
        for (const [s, side] of [c.control, c.treatment].entries()) {
          assert.equal(await text(page, 'changed-output', sides.nth(s)), asText(side.output));
          assert.equal(await text(page, 'changed-score', sides.nth(s)), formatNumber(side.mean));
        }
      }
      const firstInput = items.first().getByTestId('changed-input');
      await firstInput.waitFor();
      assert.equal(
        (await firstInput.innerText()).trim(),
        question(Number(comparison.changed[0].itemId.slice(1))),
      );
      assert.equal(await page.getByTestId('start-online').count(), 1);
      await assertNoOverflow(page, `run comparison at ${width} px`);
      await screenshot(page, `run-comparison-${width}`);
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  }
});

test('three variants: a control picker; against B no variant wins, so no button but the reason', async () => {
  const page = await openDashboard(ui.browser, ui.base, {
    key: API_KEY,
    hash: `#/runs/${runs.abc}`, // finds its experiment,
  });
  try {
    await page.getByTestId('comparison-table').waitFor();
    assert.equal(new URL(page.url()).hash, `#/experiment/${SLUG}/runs/${runs.abc}`);
    assert.equal(await page.getByTestId('start-online').count(), 1, 'B beats A');
    await page.getByTestId('run-control').selectOption('B');
    const table = page.getByTestId('comparison-table');
    await waitUntil(page, async () => (await table.getAttribute('data-control')) === 'B', 'B as the control');
    await assertTable(page, await call('GET', `/runs/${runs.abc}/comparison?control=B`));
    assert.match(await text(page, 'no-winner'), /^No variant beats B yet on correct/);
    assert.equal(await page.getByTestId('start-online').count(), 0);
    assert.equal(await page.getByTestId('run-verdict').getAttribute('data-status'), 'no-winner-yet');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});

test('start online from the winner: the experiment runs with A and B only, 50% each', async () => {
  const page = await openDashboard(ui.browser, ui.base, {
    key: API_KEY,
    hash: `#/experiment/${SLUG}/runs/${runs.ab}`,
  });
  try {
    await page.getByTestId('start-online').click();
    assert.match(await text(page, 'start-online-confirm'), /C is removed from the experiment/);
    await page.getByTestId('confirm-start-online').click();
    await page.getByTestId('start-online-done').waitFor();
    const experiment = await call('GET', `/experiment/${SLUG}`);
    assert.equal(experiment.status, 'running');
    assert.deepEqual(
      experiment.variants.map((v: { key: string; payload: unknown; trafficPercent: number }) => [
        v.key,
        v.payload,
        v.trafficPercent,
      ]),
      [
        ['A', PAYLOADS.A, 50],
        ['B', PAYLOADS.B, 50],
      ],
    );
    assert.equal(await text(page, 'status-badge'), 'running', 'the head shows it running');
    await screenshot(page, 'run-started-online');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});

test('a refusal is shown as the server words it: a completed experiment cannot run again', async () => {
  const before = await call('GET', `/experiment/${DONE}`);
  const page = await openDashboard(ui.browser, ui.base, {
    key: API_KEY,
    hash: `#/experiment/${DONE}/runs/${runs.done}`,
  });
  try {
    await page.getByTestId('start-online').click();
    await page.getByTestId('confirm-start-online').click();
    await page.getByTestId('start-online-error').waitFor();
    assert.equal(
      await text(page, 'start-online-error'),
      "cannot change status from 'completed' to 'running'; allowed from 'completed': archived",
    );
    assert.deepEqual(await call('GET', `/experiment/${DONE}`), before, 'nothing changed');
    assertNoConsoleErrors(page, [/Failed to load resource: .* 409 .*\/experiment\/offline-done\)$/]);
  } finally {
    await page.context().close();
  }
});
