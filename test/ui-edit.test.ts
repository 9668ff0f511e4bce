// Running an experiment from the dashboard (issue 16) in headless Chromium against a real server: create it
// through the form (payload JSON checked as you type, weights that must sum to 100, metric definitions, the
// API's refusal shown next to the field it names), start it, send traffic through the API and watch the
// exposures and the verdict appear on their own, edit the weights (a new version, and its diff), pause and
// complete it: each status button is exactly an allowed transition. Screenshots at 1280 and 390 px.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
// @ts-expect-error: the dashboard is plain JavaScript (no build step), without type declarations
import { fieldOf } from '../dashboard/parts/form-rules.js';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-edit-root-key-0123456789abcdef';
const ui = dashboardRun(API_KEY);
const SLUG = 'checkout-prompt';

/** The server's rule (src/core/experiment.ts): the buttons must offer exactly these. */
const ALLOWED: Record<string, string[]> = {
  draft: ['running', 'archived'],
  running: ['paused', 'completed', 'archived'],
  paused: ['running', 'completed', 'archived'],
  completed: ['archived'],
  archived: [],
};

const call = ui.call;

/** The status buttons shown, as the statuses they lead to. */
async function statusButtons(page: Page): Promise<string[]> {
  const group = page.getByRole('group', { name: 'Change status' });
  const ids = await group
    .locator('button[data-testid^="status-"]')
    .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('data-testid')!.slice('status-'.length)));
  return ids.sort();
}

async function expectStatus(page: Page, status: string): Promise<void> {
  await page.locator('h1 [data-testid="status-badge"]', { hasText: status }).waitFor();
  assert.equal((await call('GET', `/experiment/${SLUG}`)).status, status);
  assert.deepEqual(await statusButtons(page), [...ALLOWED[status]!].sort(), `buttons for ${status}`);
}

/** `n` users through assign and log, B succeeding more often and cheaper. */
async function traffic(n: number, from: number): Promise<void> {
  for (let start = from; start < from + n; start += 50) {
    await Promise.all(
      Array.from({ length: 50 }, async (_, j) => {
        const i = start + j;
        const a = await call('POST', `/experiment/${SLUG}/assign`, { userId: `user-${i}` });
        const b = a.variant === 'B';
        await call('POST', `/experiment/${SLUG}/log`, {
          variantKey: a.variant,
          userId: `user-${i}`,
          assignmentId: a.assignmentId,
          input: { cart: i % 7 },
          output: { text: b ? 'Short answer.' : 'A longer answer.' },
          metrics: {
            success: (i * 7) % 10 < (b ? 8 : 5),
            latency_ms: (b ? 700 : 900) + ((i * 37) % 200),
            cost_usd: (b ? 0.0019 : 0.0024) + (i % 5) * 0.0001,
          },
        });
      }),
    );
  }
}

describe('creating and running an experiment from the dashboard', () => {
  test('create through the form, start, traffic, verdict, edit weights, pause, complete (1280 px)', async () => {
    const page = await openDashboard(ui.browser, ui.base, { key: API_KEY });
    try {
      await page.getByTestId('new-experiment').click();
      const form = page.getByTestId('experiment-form');
      await form.waitFor();
      await page.getByTestId('field-assignment').selectOption('random'); // sticky is the default
      await page.getByLabel('Slug', { exact: true }).fill(SLUG);
      await page.getByLabel('Name', { exact: true }).fill('Checkout prompt');
      await page
        .getByLabel('Description', { exact: true })
        .fill('Does a concise prompt answer as well, for less?');

      // Payload JSON is checked as it is typed.
      const [a, b] = [page.getByTestId('variant-row-0'), page.getByTestId('variant-row-1')];
      await a.getByTestId('variant-payload').fill('{"prompt": "You are a helpful assistant."');
      assert.match(await a.locator('.field-error').innerText(), /Not valid JSON/);
      assert.equal(await a.getByTestId('variant-payload').getAttribute('aria-invalid'), 'true');
      await a.getByTestId('variant-payload').fill('{"prompt": "You are a helpful assistant."}');
      assert.equal(await a.locator('.field-error').count(), 0);
      await b
        .getByTestId('variant-payload')
        .fill('{"prompt": "You are a concise assistant.", "max_tokens": 200}');

      // Weights must sum to 100; the remainder is shown.
      await b.getByTestId('variant-weight').fill('30');
      assert.match(await page.getByTestId('weight-sum').innerText(), /80%: 20% left/);
      await page.getByTestId('save').click();
      const weight = b.getByTestId('variant-weight');
      assert.equal(await weight.getAttribute('aria-invalid'), 'true');
      assert.match((await weight.getAttribute('aria-describedby')) ?? '', /weight-sum/);
      assert.equal(
        (await fetch(`${ui.base}/experiment/${SLUG}`, { headers: { 'x-api-key': API_KEY } })).status,
        404,
      );
      await b.getByTestId('variant-weight').fill('50');
      assert.match(await page.getByTestId('weight-sum').innerText(), /sum to 100%/);

      // Metric definitions: each direction and role chosen (a new metric has no default).
      const metrics: Array<[string, string, string]> = [
        ['success', 'increase', 'primary'],
        ['cost_usd', 'decrease', 'guardrail'],
        ['latency_ms', 'decrease', 'secondary'],
      ];
      for (const [i, [name, direction, role]] of metrics.entries()) {
        await page.getByTestId('add-metric').click();
        const row = page.getByTestId(`metric-row-${i}`);
        await row.getByTestId('metric-name').fill(name);
        await row.getByTestId('metric-direction').selectOption(direction);
        await row.getByTestId('metric-role').selectOption(role);
      }
      await page.getByTestId('metric-row-0').getByTestId('metric-mde').fill('10');

      // A guardrail's tolerated loss, in percent, checked as the server checks it; only guardrails have one.
      const [success, cost, latency] = [0, 1, 2].map((i) => page.getByTestId(`metric-row-${i}`));
      assert.equal(await success!.getByTestId('metric-threshold').count(), 0, 'a primary has no threshold');
      assert.equal(await latency!.getByTestId('metric-threshold').count(), 0, 'a secondary has no threshold');
      const threshold = cost!.getByTestId('metric-threshold');
      await threshold.fill('-1');
      assert.equal(await threshold.getAttribute('aria-invalid'), 'true');
      assert.match(await cost!.locator('.field-error').innerText(), /percentage from 0 to 1000/);
      await threshold.fill('5');
      assert.equal(await threshold.getAttribute('aria-invalid'), 'false');

      // The statistic: a quantile needs numbers, so not with a proportion declared.
      const statistic = latency!.getByTestId('metric-statistic');
      assert.deepEqual(
        await statistic
          .locator('option')
          .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value)),
        ['mean', 'p50', 'p90', 'p95', 'p99'],
      );
      await statistic.selectOption('p95');
      await latency!.getByTestId('metric-kind').selectOption('proportion');
      assert.equal(await statistic.getAttribute('aria-invalid'), 'true');
      assert.match(await latency!.locator('.field-error').innerText(), /needs numeric values/);
      await page.getByTestId('save').click();
      assert.equal(
        (await fetch(`${ui.base}/experiment/${SLUG}`, { headers: { 'x-api-key': API_KEY } })).status,
        404,
        'nothing is sent while a field is wrong',
      );
      await latency!.getByTestId('metric-kind').selectOption('');
      assert.equal(await latency!.locator('.field-error').count(), 0);
      await screenshot(page, 'experiment-create-1280');
      await page.getByTestId('save').click();

      await page.getByTestId('experiment-overview').waitFor();
      const created = await call('GET', `/experiment/${SLUG}`);
      assert.equal(created.name, 'Checkout prompt');
      assert.equal(created.status, 'draft');
      assert.deepEqual(created.variants, [
        { key: 'A', payload: { prompt: 'You are a helpful assistant.' }, trafficPercent: 50 },
        {
          key: 'B',
          payload: { prompt: 'You are a concise assistant.', max_tokens: 200 },
          trafficPercent: 50,
        },
      ]);
      assert.deepEqual(created.metrics, [
        { name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.1 },
        { name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05 },
        { name: 'latency_ms', direction: 'decrease', role: 'secondary', statistic: 'p95' },
      ]);
      await expectStatus(page, 'draft');

      // Start it; traffic arrives through the API; the page shows it without a reload.
      await page.getByTestId('status-running').click();
      await expectStatus(page, 'running');
      await traffic(400, 0);
      // A random experiment: its calls are its units, shown once (no users beside them).
      await page.getByTestId('exposed-total').filter({ hasText: /^400$/ }).waitFor({ timeout: 15_000 });
      assert.equal(await page.getByTestId('exposed-total').getAttribute('data-unit'), 'call');
      assert.equal(await page.getByTestId('exposures-total').count(), 0);
      const analysis = await call('GET', `/experiment/${SLUG}/analysis`);
      assert.deepEqual(
        Object.values(analysis.exposures).reduce((x: number, y) => x + (y as number), 0),
        400,
      );
      assert.deepEqual(analysis.exposed, { unit: 'call', counts: analysis.exposures });
      await page.getByTestId('verdict-summary').filter({ hasText: analysis.verdict.summary }).waitFor();
      assert.equal(await page.getByTestId('verdict').getAttribute('data-status'), analysis.verdict.status);
      assert.notEqual(analysis.verdict.status, 'not-enough-data');
      await page.getByTestId('metric-row-success').waitFor();
      // What the form declared reaches the scorecard: the guardrail's threshold and status, the statistic's label.
      const costRow = page.getByTestId('metric-row-cost_usd');
      assert.match(await costRow.getByTestId('threshold').innerText(), /threshold 5%/);
      const guardrail = costRow.getByTestId('cell-cost_usd-B').getByTestId('guardrail');
      const status = analysis.metrics.find((m: { name: string }) => m.name === 'cost_usd').variants[1]
        .guardrail.status;
      assert.equal(await guardrail.getAttribute('data-status'), status);
      assert.match(await guardrail.innerText(), new RegExp(`^Guardrail ${status}: .+; threshold 5%$`));
      assert.equal(
        await page.getByTestId('metric-row-latency_ms').getByTestId('metric-label').innerText(),
        analysis.metrics.find((m: { name: string }) => m.name === 'latency_ms').label,
      );
      assert.match(
        await page.getByTestId('metric-row-latency_ms').getByTestId('metric-label').innerText(),
        /^p95 /,
      );
      await screenshot(page, 'experiment-running-1280');

      // Edit the weights: a new version, and the diff says what changed.
      await page.getByTestId('tab-edit').click();
      await form.waitFor();
      // The stored threshold (a fraction) shows in percent, the statistic as chosen.
      assert.equal(await page.getByTestId('metric-row-1').getByTestId('metric-threshold').inputValue(), '5');
      assert.equal(
        await page.getByTestId('metric-row-2').getByTestId('metric-statistic').inputValue(),
        'p95',
      );
      await page.getByTestId('save').click();
      await page.getByText('Nothing changed.').waitFor();
      await page.getByTestId('variant-row-0').getByTestId('variant-weight').fill('30');
      await page.getByTestId('variant-row-1').getByTestId('variant-weight').fill('70');
      assert.match(await page.getByTestId('version-note').innerText(), /version 2/);
      // The form has rendered both weights (a click before that would save 30 + 50 and be refused).
      await page.locator('[data-testid="weight-sum"][data-total="100"]').waitFor();
      await screenshot(page, 'experiment-edit-1280');
      await page.getByTestId('save').click();
      await page.getByTestId('experiment-overview').waitFor();
      const edited = await call('GET', `/experiment/${SLUG}`);
      assert.equal(edited.version, 2);
      assert.deepEqual(
        edited.variants.map((v: { trafficPercent: number }) => v.trafficPercent),
        [30, 70],
      );
      const changes = page.getByTestId('diff-change');
      await changes.first().waitFor();
      const words = (await changes.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
      assert.deepEqual(words, ['A weight 50% 30%', 'B weight 50% 70%']);
      await page.getByTestId('variant-A').getByTestId('weight').filter({ hasText: '30%' }).waitFor();

      // Pause, then complete (asks first): each time exactly the allowed buttons.
      await page.getByTestId('status-paused').click();
      await expectStatus(page, 'paused');
      await page.getByTestId('status-completed').click();
      assert.equal(
        (await call('GET', `/experiment/${SLUG}`)).status,
        'paused',
        'nothing happens before confirming',
      );
      await page.getByTestId('confirm-status').click();
      await expectStatus(page, 'completed');
      await screenshot(page, 'experiment-completed-1280');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });

  test("the API's refusal is shown next to the field it names", async () => {
    const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: '#/new' });
    try {
      await page.getByTestId('experiment-form').waitFor();
      await page.getByLabel('Slug', { exact: true }).fill(SLUG);
      await page.getByTestId('save').click();
      const error = page.getByTestId('error-slug');
      await error.waitFor();
      assert.match(await error.innerText(), /already exists/);
      assert.equal(await page.getByLabel('Slug', { exact: true }).getAttribute('aria-invalid'), 'true');
      // The browser logs the refused request itself (409); nothing else may be logged.
      assertNoConsoleErrors(page, [/Failed to load resource: .* 409 .*\/experiments\)$/]);
    } finally {
      await page.context().close();
    }
  });

  test('after a refused save, typing in another field keeps the focus there', async () => {
    const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: '#/new' });
    try {
      await page.getByTestId('experiment-form').waitFor();
      await page.getByLabel('Slug', { exact: true }).fill('focus-kept');
      const weights = page.getByTestId('variant-weight');
      await weights.nth(0).fill('30');
      await page.getByTestId('save').click();
      // The form refuses (30 + 50) and focuses the first field that says why.
      await page.locator('[data-testid="weight-sum"][data-total="80"]').waitFor();
      await page.waitForFunction("document.activeElement?.getAttribute('data-testid') === 'variant-weight'");
      // Typing in the second weight, key by key, with the form still invalid after every key:
      // each key re-renders the errors, and none may move the focus back to the first field.
      await weights.nth(1).click();
      await weights.nth(1).press('Control+a');
      for (const key of ['7', '0']) {
        await page.keyboard.press(key);
        await page.waitForTimeout(50);
      }
      assert.equal(await weights.nth(0).inputValue(), '30');
      assert.equal(await weights.nth(1).inputValue(), '70');
      await page.locator('[data-testid="weight-sum"][data-total="100"]').waitFor();
    } finally {
      await page.context().close();
    }
  });

  test('the form works at 390 px: a sticky experiment with three variants split evenly', async () => {
    const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width: 390, hash: '#/new' });
    try {
      await page.getByTestId('experiment-form').waitFor();
      await page.getByLabel('Slug', { exact: true }).fill('onboarding-tone');
      await page.getByTestId('field-assignment').selectOption('sticky');
      await page.getByTestId('add-variant').click();
      await page.getByTestId('variant-row-2').getByTestId('variant-key').fill('C');
      assert.match(await page.getByTestId('weight-sum').innerText(), /100%/);
      await page.getByTestId('variant-row-2').getByTestId('variant-weight').fill('20');
      assert.match(await page.getByTestId('weight-sum').innerText(), /120%: 20% too much/);
      await page.getByTestId('split-evenly').click();
      assert.match(await page.getByTestId('weight-sum').innerText(), /sum to 100%/);
      await screenshot(page, 'experiment-create-390');
      await page.getByTestId('save').click();
      await page.getByTestId('experiment-overview').waitFor();
      const created = await call('GET', '/experiment/onboarding-tone');
      assert.equal(created.assignment, 'sticky');
      assert.deepEqual(
        created.variants.map((v: { key: string; trafficPercent: number }) => [v.key, v.trafficPercent]),
        [
          ['A', 33.33],
          ['B', 33.33],
          ['C', 33.34],
        ],
      );
      await page.getByTestId('tab-edit').click();
      await page.getByTestId('experiment-form').waitFor();
      assert.equal(
        await page.getByLabel('Slug', { exact: true }).isEditable(),
        false,
        'the slug cannot change',
      );
      await screenshot(page, 'experiment-edit-390');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });

  test("the form places each of the API's refusals on the field it names", async () => {
    const variant = (key: string, trafficPercent: number) => ({ key, payload: {}, trafficPercent });
    const cases: Array<[string, unknown, string | null]> = [
      ['POST', { slug: '-bad', variants: [variant('A', 100)] }, 'slug'],
      ['POST', { slug: SLUG, variants: [variant('A', 100)] }, 'slug'],
      ['POST', { slug: 'x1', variants: [variant('A', 60), variant('A', 40)] }, 'variants.1.key'],
      ['POST', { slug: 'x2', variants: [variant('A', 60), variant('B', 30)] }, 'variants'],
      [
        'POST',
        { slug: 'x3', variants: [{ key: 'A', payload: [], trafficPercent: 100 }] },
        'variants.0.payload',
      ],
      [
        'POST',
        { slug: 'x4', variants: [{ key: 'A', payload: {}, trafficPercent: '100' }] },
        'variants.0.trafficPercent',
      ],
      [
        'POST',
        { slug: 'x5', variants: [variant('A', 100)], metrics: [{ name: 'm', direction: 'up' }] },
        'metrics.0.direction',
      ],
      [
        'POST',
        {
          slug: 'x6',
          variants: [variant('A', 100)],
          metrics: [{ name: 'm', direction: 'increase', minimumDetectableEffect: 20 }],
        },
        'metrics.0.minimumDetectableEffect',
      ],
      [
        'POST',
        {
          slug: 'x8',
          variants: [variant('A', 100)],
          metrics: [{ name: 'm', direction: 'decrease', role: 'guardrail', threshold: -0.1 }],
        },
        'metrics.0.threshold',
      ],
      [
        'POST',
        {
          slug: 'x9',
          variants: [variant('A', 100)],
          metrics: [{ name: 'm', direction: 'decrease', kind: 'proportion', statistic: 'p95' }],
        },
        'metrics.0.statistic',
      ],
      ['POST', { slug: 'x7', name: 'n'.repeat(201), variants: [variant('A', 100)] }, 'name'],
      ['PATCH', { status: 'draft' }, null],
    ];
    for (const [method, body, field] of cases) {
      const path = method === 'POST' ? '/experiments' : `/experiment/${SLUG}`;
      const res = await fetch(`${ui.base}${path}`, {
        method,
        headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.ok(res.status === 400 || res.status === 409, `${JSON.stringify(body)}: ${res.status}`);
      const { error } = (await res.json()) as { error: string };
      assert.equal(fieldOf(error), field, error);
    }
  });

  test('a read key sees no edit control', async () => {
    const { key } = await call('POST', '/keys', { name: 'viewer', scopes: ['read'] });
    const page = await openDashboard(ui.browser, ui.base, { key, hash: `#/experiment/${SLUG}` });
    try {
      await page.getByTestId('experiment-overview').waitFor();
      assert.equal(await page.getByRole('group', { name: 'Change status' }).count(), 0);
      assert.equal(await page.getByTestId('tab-edit').count(), 0);
      assert.equal(await page.getByTestId('nav-new').count(), 0);
      await page.goto(`${ui.base}/ui/#/new`);
      await page.getByText('changing experiments needs an admin key').waitFor();
      assert.equal(await page.getByTestId('experiment-form').count(), 0);
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });
});
