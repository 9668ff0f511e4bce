// The segment picker (issue 26) in headless Chromium against a real server: segments declared in the
// experiment form, traffic whose plan comes from the assign context (or the result's own), then the
// experiment page's Segment select: the exploratory note, one scorecard per plan whose counts are the ones
// sent, the choice kept in the address, and "none" back to the whole experiment. Screenshots at 1280, 390 px.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-segments-root-key-0123456789abc';
const SLUG = 'segment-picker';

const ui = dashboardRun(API_KEY);
const call = ui.call;

test('segments declared in the form, then picked on the experiment page', async () => {
  // Declared through the form.
  const form = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: '#/new' });
  await form.getByTestId('field-slug').fill(SLUG);
  await form.getByTestId('field-segments').fill('plan, region');
  await form.getByTestId('save').click();
  await form.waitForURL(new RegExp(`#/experiment/${SLUG}`));
  assert.deepEqual((await call('GET', `/experiment/${SLUG}`)).segments, ['plan', 'region']);
  assertNoConsoleErrors(form);
  await form.context().close();

  await call('PATCH', `/experiment/${SLUG}`, { status: 'running' });
  // 120 users: the plan from the assign context; every fifth result says its own plan ('team').
  const sent = new Map<string, { A: number; B: number }>();
  for (let i = 0; i < 120; i++) {
    const a = await call('POST', `/experiment/${SLUG}/assign`, {
      userId: `user-${i}`,
      context: { plan: i % 3 === 0 ? 'pro' : 'free' },
    });
    const own = i % 5 === 0;
    const plan = own ? 'team' : i % 3 === 0 ? 'pro' : 'free';
    await call('POST', `/experiment/${SLUG}/log`, {
      variantKey: a.variant,
      assignmentId: a.assignmentId,
      ...(own ? { context: { plan: 'team' } } : {}),
      metrics: { score: (i * 37) % 11, solved: i % 4 !== 0 },
    });
    const counts = sent.get(plan) ?? { A: 0, B: 0 };
    counts[a.variant as 'A' | 'B'] += 1;
    sent.set(plan, counts);
  }
  const api = await call('GET', `/experiment/${SLUG}/analysis?segment=plan`);

  for (const width of [1280, 390]) {
    const page = await openDashboard(ui.browser, ui.base, {
      key: API_KEY,
      width,
      hash: `#/experiment/${SLUG}`,
    });
    await page.getByTestId('scorecard').first().waitFor();
    assert.equal(await page.getByTestId('segments').count(), 0, 'no segments before one is picked');
    const picker = page.getByTestId('segment-picker');
    assert.deepEqual(
      await picker
        .locator('option')
        .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value)),
      ['', 'plan', 'region'],
    );
    await picker.selectOption('plan');
    await page.getByTestId('segments').waitFor();
    assert.match(page.url(), /segment=plan/);
    assert.equal(await page.getByTestId('segment-note').textContent(), api.segmentNote);
    assert.match(api.segmentNote, /exploratory/);
    const shown = page.getByTestId('segment');
    const values = await shown.evaluateAll((els) => els.map((e) => e.getAttribute('data-value')));
    assert.deepEqual(values, ['free', 'pro', 'team'], 'most results first');
    for (const value of values) {
      const block = page.locator(`[data-testid="segment"][data-value="${value}"]`);
      const counts = sent.get(value!)!;
      assert.equal(
        (await block.getByTestId('segment-results').textContent())?.trim(),
        `· results A ${counts.A}, B ${counts.B}`,
      );
      for (const variant of ['A', 'B'] as const) {
        const n = await block.getByTestId(`cell-score-${variant}`).getByTestId('n').textContent();
        assert.equal(Number(n), counts[variant], `${value} ${variant} n`);
      }
    }
    await screenshot(page, `segments-${width}`);
    // Kept in the address: a reload shows the same reading.
    await page.reload();
    await page.getByTestId('segments').waitFor();
    await page.getByTestId('segment-picker').selectOption('');
    await page.getByTestId('segments').waitFor({ state: 'detached' });
    assert.doesNotMatch(page.url(), /segment=/);
    assertNoConsoleErrors(page);
    await page.context().close();
  }
});
