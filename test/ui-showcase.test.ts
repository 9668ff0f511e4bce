// The showcase issue 16 asks for: a real-looking prompt experiment (two prompts, 700 sticky users, 2,000
// results with success, latency, tokens and cost, and a judge score sent later as feedback), sent through
// the public API, then every page of the dashboard in headless Chromium at 1280 and 390 px, signed in with
// the root key. Each page is screenshotted to test/artifacts/showcase-<page>-<width>.png for a person to
// look at; the scorecard's effects and intervals and the verdict sentence must be the API's, rounded the
// way the page rounds (dashboard/format.js, which the page itself uses).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';
import { seededRandom } from './helpers/random.js';

const API_KEY = 'ui-showcase-root-key-0123456789abcdef';
const ui = dashboardRun(API_KEY, { setup: setUp });
const SLUG = 'support-answer-prompt';
const USERS = 700;
const RESULTS = 2000;
const FEEDBACK_USERS = 300;
const WIDTHS = [1280, 390];

/** The page's own formatting (plain ES module, no types: imported by URL so tsc does not resolve it). */
interface Format {
  formatLift(x: number | null): string;
  formatInterval(ci: [number | null, number | null]): string;
  formatCount(n: number): string;
  formatPoints(effect: Effect): string;
}

interface Effect {
  estimate: number | null;
  ci: [number | null, number | null];
}
interface Arm {
  key: string;
  n: number;
  mean: number | null;
  relative?: Effect;
  absolute?: Effect;
}
interface MetricAnalysis {
  name: string;
  kind: string;
  role?: string;
  variants: Arm[];
}
interface Analysis {
  control: string;
  method: string;
  alpha: number;
  verdict: { status: string; summary: string };
  exposures: Record<string, number>;
  metrics: MetricAnalysis[];
}

let format: Format;

const call = ui.call;

/** Runs `task` over `items`, `width` at a time (enough to be quick, few enough to keep the machine calm). */
async function inParallel<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) {
    out.push(...(await Promise.all(items.slice(i, i + width).map(task))));
  }
  return out;
}

const QUESTIONS = [
  'Where is my order #%? It said two days.',
  'How do I change the email on my account?',
  'I was charged twice for order #%, can you refund one?',
  'Can I return shoes I already wore outside once?',
  'The app logs me out every time I close it.',
  'Do you ship to Norway, and how long does it take?',
];
const ANSWERS = {
  A: [
    'Thanks for reaching out! I looked into this for you. Your order left our warehouse yesterday and is with the carrier; deliveries in your area usually take two to four working days. You will receive an email with tracking as soon as the carrier scans it.',
    'I understand how frustrating that is. Here is everything you need to know: open Settings, choose Account, then Email, and confirm the change from the link we send to the new address. If the link does not arrive within ten minutes, check your spam folder.',
  ],
  B: [
    'Your order is with the carrier and should arrive within four working days. Shall I send you the tracking link?',
    'Go to Settings > Account > Email and confirm from the link we send. Want me to resend it now?',
  ],
};

/** Sends the experiment, its exposures, its 2,000 results and the late judge scores through the API. */
async function seed(): Promise<void> {
  await call('POST', '/experiments', {
    slug: SLUG,
    name: 'Support answer prompt',
    description: 'Does a short answer with one next step resolve more tickets than a full, friendly one?',
    status: 'running',
    assignment: 'sticky',
    variants: [
      {
        key: 'A',
        payload: { model: 'gpt-4o', prompt: 'You are a helpful support assistant.' },
        trafficPercent: 50,
      },
      {
        key: 'B',
        payload: { model: 'gpt-4o', prompt: 'Answer in two sentences, then offer one next step.' },
        trafficPercent: 50,
      },
    ],
    metrics: [
      { name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.05 },
      { name: 'cost_usd', direction: 'decrease', role: 'guardrail' },
      { name: 'latency_ms', direction: 'decrease', role: 'secondary' },
      { name: 'tokens', direction: 'decrease', role: 'secondary' },
      { name: 'judge_score', direction: 'increase', role: 'secondary' },
    ],
  });
  const random = seededRandom(20250602);
  const normal = () => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
  const users = Array.from({ length: USERS }, (_, i) => `user-${String(i + 1).padStart(4, '0')}`);
  const assigned = await inParallel(users, 50, (userId) =>
    call<{ variant: 'A' | 'B'; assignmentId: string }>('POST', `/experiment/${SLUG}/assign`, { userId }),
  );
  const results = Array.from({ length: RESULTS }, (_, i) => {
    const u = i % USERS;
    const { variant, assignmentId } = assigned[u]!;
    const b = variant === 'B';
    // B answers shorter (fewer output tokens), hence faster and a little cheaper: the prompt is the same size.
    const inputTokens = Math.max(300, Math.round(1100 + 200 * normal()));
    const tokens = Math.max(40, Math.round((b ? 190 : 225) + 45 * normal()));
    const question = QUESTIONS[Math.floor(random() * QUESTIONS.length)]!.replace('%', String(40_000 + i));
    return {
      variantKey: variant,
      userId: users[u],
      assignmentId,
      input: { question, history: Math.floor(random() * 4) },
      output: { answer: ANSWERS[variant][i % 2], model: 'gpt-4o' },
      context: { channel: random() < 0.7 ? 'web' : 'mobile', plan: u % 4 === 0 ? 'pro' : 'free' },
      metrics: {
        success: random() < (b ? 0.62 : 0.55),
        latency_ms: Math.max(250, Math.round(300 + tokens * 4.2 + 160 * normal())),
        tokens,
        // $2.50 per million input tokens, $10 per million output tokens.
        cost_usd: Math.round(inputTokens * 2.5 + tokens * 10) / 1e6,
      },
    };
  });
  for (let i = 0; i < results.length; i += 1000) {
    await call('POST', `/experiment/${SLUG}/logs`, { results: results.slice(i, i + 1000) });
  }
  // A judge grades some conversations later: every other user among the first 600.
  const graded = assigned.filter((_, i) => i % 2 === 0).slice(0, FEEDBACK_USERS);
  await inParallel(graded, 20, ({ variant, assignmentId }) => {
    const score = Math.min(1, Math.max(0, (variant === 'B' ? 0.74 : 0.71) + 0.15 * normal()));
    return call('POST', `/experiment/${SLUG}/feedback`, {
      assignmentId,
      metrics: { judge_score: Math.round(score * 100) / 100 },
    });
  });
}

/** Exposures are written in the background: wait until all are counted, so page and test read alike. */
async function settled(): Promise<Analysis> {
  for (let i = 0; i < 100; i++) {
    const a = await call<Analysis>('GET', `/experiment/${SLUG}/analysis`);
    if (Object.values(a.exposures).reduce((x, y) => x + y, 0) >= USERS) return a;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`the exposures of ${SLUG} never reached ${USERS}`);
}

async function text(scope: Locator, testid: string): Promise<string> {
  return (await scope.getByTestId(testid).first().innerText()).trim();
}

/** "+12.7%" → 0.127; "−∞" → null. */
function percent(shown: string): number | null {
  if (/∞/.test(shown)) return null;
  const m = /^([+-]?\d+(?:\.\d+)?)%$/.exec(shown.replace('−', '-'));
  assert.ok(m, `not a percentage: ${JSON.stringify(shown)}`);
  return Number(m[1]) / 100;
}

/** Within half a unit of the last digit shown (0.05 percentage points at one decimal). */
function assertClose(shown: string, expected: number | null, what: string): void {
  const value = percent(shown);
  if (expected === null || value === null) {
    assert.equal(value, expected, what);
    return;
  }
  const decimals = shown.split('.')[1]?.replace('%', '').length ?? 0;
  const tolerance = 0.5 * 10 ** -decimals * 0.01 + 1e-12;
  assert.ok(Math.abs(value - expected) <= tolerance, `${what}: the page shows ${shown}, the API ${expected}`);
}

/** The verdict and every treatment cell of the scorecard against GET /analysis (the page's defaults). */
async function compareWithApi(page: Page): Promise<void> {
  const analysis = await call<Analysis>('GET', `/experiment/${SLUG}/analysis`);
  const { method, alpha, control } = analysis;
  await page
    .locator(
      `[data-testid="scorecard"][data-method="${method}"][data-alpha="${alpha}"][data-control="${control}"]`,
    )
    .waitFor();
  assert.equal(await text(page.locator('body'), 'verdict-summary'), analysis.verdict.summary);
  assert.equal(await page.getByTestId('verdict').getAttribute('data-status'), analysis.verdict.status);
  const total = Object.values(analysis.exposures).reduce((a, b) => a + b, 0);
  assert.equal(await text(page.locator('body'), 'exposures-total'), format.formatCount(total));
  const names = analysis.metrics.map((m) => m.name).sort();
  assert.deepEqual(names, ['cost_usd', 'judge_score', 'latency_ms', 'success', 'tokens']);
  const rows = page.getByTestId('scorecard').locator('tbody > tr');
  assert.equal(await rows.count(), analysis.metrics.length);
  // Primary, guardrails, secondary; within a role as the experiment declares them.
  const declared = (await call<{ metrics: { name: string; role: string }[] }>('GET', `/experiment/${SLUG}`))
    .metrics;
  const roles = ['primary', 'guardrail', 'secondary'];
  const expected = roles.flatMap((r) =>
    declared.filter((m) => m.role === r).map((m) => `metric-row-${m.name}`),
  );
  const shown = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-testid')));
  assert.deepEqual(shown, expected, 'row order');
  assert.equal(await text(page.getByTestId('metric-row-cost_usd'), 'role'), 'guardrail');
  for (const metric of analysis.metrics) {
    const row = page.getByTestId(`metric-row-${metric.name}`);
    for (const arm of metric.variants.filter((v) => v.key !== control)) {
      const what = `${metric.name}, ${arm.key} against ${control}`;
      const effect = arm.relative!;
      assert.notEqual(effect.estimate, null, `${what}: a relative effect (the control mean is not 0)`);
      const cell = row.getByTestId(`cell-${metric.name}-${arm.key}`);
      const lift = await text(cell, 'lift');
      const interval = await text(cell, 'ci');
      // Exactly as the page's formatter writes the API's number…
      assert.equal(lift, format.formatLift(effect.estimate), `${what}: lift`);
      assert.equal(interval, format.formatInterval(effect.ci), `${what}: interval`);
      // …and that text is the API's number to the digits shown (so the formatter is checked too).
      assertClose(lift, effect.estimate, `${what}: lift`);
      const [lo, hi] = interval.replace(/^\[|\]$/g, '').split(', ');
      assertClose(lo!, effect.ci[0], `${what}: lower bound`);
      assertClose(hi!, effect.ci[1], `${what}: upper bound`);
      // A proportion's difference in points, written as the verdict writes it.
      const points = cell.getByTestId('points');
      if (metric.kind !== 'proportion') assert.equal(await points.count(), 0, what);
      else {
        const shownPoints = await text(cell, 'points');
        assert.equal(shownPoints, format.formatPoints(arm.absolute!), `${what}: points`);
        if (metric.role === 'primary') assert.ok(analysis.verdict.summary.includes(shownPoints), what);
      }
    }
  }
}

/** A screenshot without the hover state the last click left under the pointer. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.mouse.move(0, 0);
  await screenshot(page, name);
}

/** The uPlot canvas of each chart is drawn (uPlot adds it inside the chart's box). */
async function chartsDrawn(page: Page): Promise<void> {
  for (const id of ['chart-exposures', 'chart-effect', 'chart-tradeoff']) {
    await page.locator(`[data-testid="${id}"] canvas`).first().waitFor();
  }
}

/** The file's data, written once the server answers. */
async function setUp(): Promise<void> {
  format = (await import(
    pathToFileURL(join(import.meta.dirname, '..', 'dashboard', 'format.js')).href
  )) as Format;
  await seed();
  await settled();
}

describe('the showcase experiment in headless Chromium', () => {
  test('the API holds what was sent: 2,000 results, 700 users, judge scores for 300 of them', async () => {
    const analysis = await call<Analysis>('GET', `/experiment/${SLUG}/analysis`);
    const total = Object.values(analysis.exposures).reduce((a, b) => a + b, 0);
    assert.equal(total, USERS);
    const success = analysis.metrics.find((m) => m.name === 'success')!;
    assert.equal(
      success.variants.reduce((a, v) => a + v.n, 0),
      USERS,
      'per user: each user one unit',
    );
    const judge = analysis.metrics.find((m) => m.name === 'judge_score')!;
    assert.equal(
      judge.variants.reduce((a, v) => a + v.n, 0),
      FEEDBACK_USERS,
    );
    const exported = await fetch(`${ui.base}/experiment/${SLUG}/results/export?format=ndjson`, {
      headers: { 'x-api-key': API_KEY },
    });
    assert.equal((await exported.text()).trim().split('\n').length, RESULTS);
  });

  for (const width of WIDTHS) {
    test(`every page at ${width} px: screenshots, the API's numbers, no console error`, async () => {
      const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width });
      try {
        // The list: the experiment with its exposures, results and verdict badge.
        await page.getByTestId('experiments-page').waitFor();
        const row = page.locator(`[data-testid="experiment-row"][data-slug="${SLUG}"]`);
        await row.getByTestId('verdict-badge').waitFor();
        assert.equal(await text(row, 'row-exposures'), format.formatCount(USERS));
        assert.equal(await text(row, 'row-results'), format.formatCount(RESULTS));
        await shoot(page, `showcase-experiments-${width}`);

        // The overview: verdict and scorecard equal the API's.
        await row.getByRole('link', { name: 'Support answer prompt' }).click();
        await page.getByTestId('scorecard').waitFor();
        await page.getByTestId('variant-B').waitFor();
        await compareWithApi(page);
        await shoot(page, `showcase-overview-${width}`);

        // The charts.
        await page.getByTestId('tab-charts').click();
        await page.getByTestId('experiment-charts').waitFor();
        await chartsDrawn(page);
        await shoot(page, `showcase-charts-${width}`);

        // The results, the first row opened: its JSON is the API's newest result.
        await page.getByTestId('tab-results').click();
        await page.getByTestId('result-row').first().waitFor();
        const first = (
          await call<{ results: { logId: string; input: { question: string } }[] }>(
            'GET',
            `/experiment/${SLUG}/results?limit=1&order=desc`,
          )
        ).results[0]!;
        const firstRow = page.getByTestId('result-row').first();
        assert.equal(await firstRow.getAttribute('data-log-id'), first.logId);
        await firstRow.getByTestId('expand-result').click();
        const detail = page.getByTestId('result-detail');
        await detail.waitFor();
        assert.ok((await detail.innerText()).includes(first.input.question), 'the input is shown');
        await shoot(page, `showcase-results-${width}`);

        // The edit form, filled with the experiment as stored.
        await page.getByTestId('tab-edit').click();
        await page.getByTestId('experiment-form').waitFor();
        assert.equal(await page.getByTestId('field-name').inputValue(), 'Support answer prompt');
        assert.equal(await page.locator('[data-testid^="metric-row-"]').count(), 5);
        assert.equal(await page.locator('[data-testid^="variant-row-"]').count(), 2);
        await shoot(page, `showcase-edit-${width}`);

        assertNoConsoleErrors(page);
      } finally {
        await page.context().close();
      }
    });
  }
});
