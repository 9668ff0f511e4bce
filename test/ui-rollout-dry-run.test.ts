// The start form's dry run (issue 38) in headless Chromium at 1400 and 390 px against a real server: on an
// experiment whose cost guardrail B raises by 20% (its own results), "Dry run" plays the form's ramp and
// says the false-rollback chance, the time to 100% and, with the observed effect, the chance of a rollback:
// the same numbers as POST …/rollout/simulate with that body (seeded). An invalid ramp cannot be dry-run;
// nothing is started. No overflow, no console errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNoConsoleErrors, assertNoOverflow, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';
import { traffic } from './helpers/rollout-page.js';

const API_KEY = 'ui-dry-run-root-key-0123456789abcdef';
const SLUG = 'dry-run';
const ui = dashboardRun(API_KEY, {
  setup: async () => {
    await ui.call('POST', '/experiments', {
      slug: SLUG,
      status: 'running',
      assignment: 'sticky',
      variants: [
        { key: 'A', payload: { prompt: 'formal' }, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'friendly' }, trafficPercent: 50 },
      ],
      metrics: [{ name: 'cost_usd', direction: 'decrease', role: 'guardrail' }],
    });
    await traffic(ui.call, SLUG, 400, (v, i) => ({ cost_usd: (1 + (i % 10) / 10) * (v === 'B' ? 1.2 : 1) }));
  },
});

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

for (const width of [1400, 390]) {
  test(`Dry run says what the ramp would do, as the API does; starts nothing (${width} px)`, async () => {
    const page = await openDashboard(ui.browser, ui.base, {
      key: API_KEY,
      width,
      hash: `#/experiment/${SLUG}`,
    });
    try {
      await page.getByTestId('rollout-open').click();
      await page.getByTestId('rollout-percents').fill('25, x');
      assert.equal(await page.getByTestId('rollout-dry-run-button').isDisabled(), true, 'an invalid ramp');
      await page.getByTestId('rollout-percents').fill('25, 50, 100');
      await page.getByTestId('rollout-minutes').fill('30');
      await page.getByTestId('rollout-dry-run-button').click();
      const result = page.getByTestId('rollout-dry-run-result');
      await result.waitFor({ timeout: 30_000 });
      const [first, second] = (await result.innerText()).split('\n').filter(Boolean);
      const direct = await ui.call<{
        identicalArms: { rollback: { chance: number }; minutesToFull: { p50: number } };
        withEffects: { rollback: { chance: number } };
        guardrails: Array<{ effect: number }>;
      }>('POST', `/experiment/${SLUG}/rollout/simulate`, {
        variant: 'B',
        steps: [{ percent: 25, minMinutes: 30 }, { percent: 50, minMinutes: 30 }, { percent: 100 }],
        onRegression: 'rollback',
        runs: 1000,
      });
      assert.match(first ?? '', /^Over 1,000 ramps at [\d,]+ units an hour: a false rollback in /);
      assert.ok(
        first?.includes(`a false rollback in ${pct(direct.identicalArms.rollback.chance)} (95%: `),
        first,
      );
      assert.ok(first?.includes(`100% after ${direct.identicalArms.minutesToFull.p50} min`), first);
      assert.match(second ?? '', /^With cost_usd \+\d+(\.\d)?% \(observed\): rolled back in /);
      assert.ok(second?.includes(`rolled back in ${pct(direct.withEffects.rollback.chance)} (95%: `), second);
      assert.ok(direct.guardrails[0]!.effect > 0.15, 'B is about 20% dearer');
      await assertNoOverflow(page, `the dry run at ${width}`);
      await screenshot(page, `rollout-dry-run-${width}`);
      const events = await ui.call<{ events: unknown[] }>('GET', `/experiment/${SLUG}/events?type=rollout.*`);
      assert.equal(events.events.length, 0, 'nothing started');
      await assertNoConsoleErrors(page);
    } finally {
      await page.close();
    }
  });
}
