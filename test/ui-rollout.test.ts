// The ramp view (issue 38, "Surfaces") in headless Chromium at 1400 and 390 px against a real server whose
// monitor runs every second: "Ship B" on a winning verdict opens the start form with B chosen, the ramp waits
// for its approval, the Approve button lets the schedule complete it and the experiment reads "Released B to
// everyone"; a rollout whose cost guardrail B breaks by 30% is rolled back by the monitor and the page says
// so first, with the guardrail's interval beyond its threshold; Pause, Resume and Roll back move it (checked
// through GET as well), a read key sees the view without buttons, and a refused start (400) or move (409)
// shows the server's sentence. No overflow, no console errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { assertNoConsoleErrors, assertNoOverflow, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';
import { PAGE_WAIT_MS, rampIn, traffic, until } from './helpers/rollout-page.js';

const API_KEY = 'ui-rollout-root-key-0123456789abcdef';
const ui = dashboardRun(API_KEY, { env: { MONITOR_INTERVAL_SECONDS: '1' } });
const call = ui.call;
const WIDTHS = [1400, 390];

const variants = [
  { key: 'A', payload: { prompt: 'formal' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'friendly' }, trafficPercent: 50 },
];

interface RolloutView {
  state: string;
  percent: number;
  approved: number;
  reason: string | null;
  steps: Array<{ percent: number; minMinutes: number; approval: boolean }>;
  history: Array<{ type: string; actor: { kind: string; name?: string } }>;
}

const rolloutOf = (slug: string) => call<RolloutView>('GET', `/experiment/${slug}/rollout`);

async function open(width: number, slug: string, key = API_KEY): Promise<Page> {
  const page = await openDashboard(ui.browser, ui.base, { key, width, hash: `#/experiment/${slug}` });
  await page.getByTestId('experiment-overview').waitFor();
  return page;
}

for (const width of WIDTHS) {
  test(`Ship B from the verdict, approve the last step, the schedule releases B (${width} px)`, async () => {
    const slug = `ship-${width}`;
    await call('POST', '/experiments', {
      slug,
      status: 'running',
      assignment: 'sticky',
      variants,
      metrics: [{ name: 'success', direction: 'increase', role: 'primary' }],
    });
    await traffic(call, slug, 400, (v, i) => ({ success: i % 10 < (v === 'B' ? 7 : 4) }));
    await until(
      async () => (await call('GET', `/experiment/${slug}/analysis`)).verdict.status === 'winner',
      'B to win',
    );
    const page = await open(width, slug);
    try {
      const ship = page.getByTestId('ship-winner');
      await ship.waitFor();
      assert.equal((await ship.innerText()).trim(), 'Ship B');
      await ship.click();
      const form = page.getByTestId('rollout-form');
      await form.waitFor();
      assert.equal(await page.getByTestId('rollout-variant').inputValue(), 'B');
      assert.match(await page.getByTestId('rollout-guarded-by').innerText(), /Guarded by: no guardrails/);
      assert.equal(await page.getByTestId('rollout-percents').inputValue(), '5, 25, 50, 100');
      await page.getByTestId('rollout-percents').fill('50, 100');
      await page.getByTestId('rollout-minutes').fill('0');
      await page.getByTestId('rollout-approve').fill('100');
      await assertNoOverflow(page, `the start form at ${width}`);
      await screenshot(page, `rollout-form-${width}`);
      await page.getByTestId('rollout-start').click();

      await rampIn(page, 'running');
      assert.equal(await page.getByTestId('rollout-percent').innerText(), '50%');
      const next = page.getByTestId('rollout-next');
      assert.equal(await next.getAttribute('data-waits-approval'), 'true');
      assert.match(await next.innerText(), /Next: 100% — due · waits for approval/);
      assert.equal(await page.getByTestId('rollout-step-approval').innerText(), 'needs approval');
      assert.deepEqual(
        await page
          .getByTestId('rollout-step')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-state'))),
        ['current', 'next'],
      );
      assert.equal(await page.getByTestId('ship-winner').count(), 0, 'no Ship B while a rollout is live');
      assert.match(await page.getByTestId('rollout-no-guardrails').innerText(), /No guardrails/);
      const started = await rolloutOf(slug);
      assert.deepEqual(
        [started.state, started.percent, started.steps.map((s) => [s.percent, s.minMinutes, s.approval])],
        [
          'running',
          50,
          [
            [50, 0, false],
            [100, 0, true],
          ],
        ],
      );
      // The monitor runs every second but the last step waits for its approval.
      await sleep(2500);
      assert.equal((await rolloutOf(slug)).state, 'running');
      await assertNoOverflow(page, `the ramp at ${width}`);
      await screenshot(page, `rollout-waits-${width}`);

      await page.getByTestId('rollout-approve').click();
      await rampIn(page, 'completed');
      const released = await call('GET', `/experiment/${slug}`);
      assert.deepEqual([released.status, released.releasedVariant], ['released', 'B']);
      const done = await rolloutOf(slug);
      assert.deepEqual(
        done.history.map((e) => [e.type, e.actor.kind]),
        [
          ['rollout.started', 'key'],
          ['rollout.approved', 'key'],
          ['rollout.completed', 'schedule'],
        ],
      );
      // The page reads the experiment again: released, and who released it.
      const banner = page.getByTestId('status-banner');
      await banner.waitFor({ timeout: PAGE_WAIT_MS });
      assert.equal(await banner.getAttribute('data-actor'), 'schedule');
      assert.match(await banner.innerText(), /Released B to everyone by the rollout's schedule/);
      assert.equal(await page.getByTestId('status-badge').innerText(), 'released');
      assert.equal(await page.getByTestId('rollout-percent').innerText(), '100%');
      assert.match(await page.getByTestId('rollout-next').innerText(), /everyone gets B/);
      assert.equal(await page.getByTestId('rollout-open').count(), 0, 'a released experiment starts none');
      await page
        .getByText(/Rollout of B completed by the rollout's schedule at .*: everyone gets B/)
        .waitFor();
      await assertNoOverflow(page, `released at ${width}`);
      await screenshot(page, `rollout-released-${width}`);

      // Run again with new variants (version 2): the completed rollout ramped version 1 only.
      await call('PATCH', `/experiment/${slug}`, {
        status: 'running',
        variants: [variants[0], { key: 'C', payload: { prompt: 'curt' }, trafficPercent: 50 }],
      });
      await page.reload();
      const older = page.getByTestId('rollout-older');
      await older.waitFor();
      assert.equal(
        (await older.innerText()).trim(),
        'The last rollout (of B, completed) ramped version 1; version 2 has none.',
      );
      assert.equal(await page.getByTestId('rollout').count(), 0);
      assert.equal((await page.getByTestId('rollout-open').innerText()).trim(), 'Start rollout');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });

  test(`a 30% worse guardrail is rolled back by the monitor; the page says why first (${width} px)`, async () => {
    const slug = `harm-${width}`;
    await call('POST', '/experiments', {
      slug,
      status: 'running',
      assignment: 'sticky',
      minimumUnits: 50,
      variants,
      metrics: [{ name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05 }],
    });
    const page = await open(width, slug);
    try {
      // No rollout yet: the start button, the form with the experiment's guardrails.
      await page.getByTestId('rollout-open').click();
      assert.equal(await page.getByTestId('rollout-variant').inputValue(), 'B');
      assert.match(
        await page.getByTestId('rollout-guarded-by').innerText(),
        /Guarded by: cost_usd \(5% worse\)/,
      );
      // A refusal is the server's own sentence.
      await page.getByTestId('rollout-percents').fill('50, 90');
      await page.getByTestId('rollout-start').click();
      const refused = page.getByTestId('rollout-start-error');
      await refused.waitFor();
      assert.match(await refused.innerText(), /the last step must be 100 \(got 90\)/);
      assert.equal(
        (await call('GET', `/experiment/${slug}/events?type=rollout.*`)).events.length,
        0,
        'nothing started',
      );
      await page.getByTestId('rollout-percents').fill('50, 100');
      await page.getByTestId('rollout-start').click();
      await rampIn(page, 'running');
      assert.match(await page.getByTestId('rollout-next').innerText(), /Next: 100% — (60|59) min left/);
      const row = page.locator('[data-testid="rollout-guardrail"][data-metric="cost_usd"]');
      assert.equal(await row.getAttribute('data-status'), 'waiting');
      assert.match(await row.innerText(), /not yet judged/);

      const seen = await traffic(call, slug, 800, (v, i) => ({
        cost_usd: (1 + (i % 10) / 10) * (v === 'B' ? 1.3 : 1),
      }));
      assert.ok((seen.A ?? 0) > 300 && (seen.B ?? 0) > 300, JSON.stringify(seen));
      await until(async () => (await rolloutOf(slug)).state === 'rolled_back', 'the monitor to roll it back');
      const back = await rolloutOf(slug);
      assert.match(back.reason ?? '', /^cost_usd regressed: B is at least \d+(\.\d+)?% higher than A/);
      assert.deepEqual(
        back.history.map((e) => [e.type, e.actor.kind]),
        [
          ['rollout.started', 'key'],
          ['rollout.rolled_back', 'monitor'],
        ],
      );

      await rampIn(page, 'rolled_back');
      const reason = page.getByTestId('rollout-reason');
      assert.equal(await reason.getAttribute('data-actor'), 'monitor');
      assert.match(
        await page.getByTestId('rollout-reason-who').innerText(),
        /Rolled back by the guardrail monitor/,
      );
      assert.equal(await page.getByTestId('rollout-reason-text').innerText(), `Why: ${back.reason}`);
      assert.match(await reason.innerText(), /Everyone gets A again/);
      assert.equal(await page.getByTestId('rollout-state').innerText(), 'rolled back');
      // The reason comes first: above the steps and the guardrails.
      const y = async (id: string) => (await page.getByTestId(id).first().boundingBox())!.y;
      assert.ok((await y('rollout-reason')) < (await y('rollout-steps')));
      await until(async () => (await row.getAttribute('data-status')) === 'regression', 'the row to judge');
      const text = await row.innerText();
      assert.match(text, /regression/);
      assert.match(text, /B vs A \[\+\d+(\.\d)?%, \+\d+(\.\d)?%\] \(90% confidence sequence\)/);
      assert.match(text, /threshold 5% higher/);
      const analysis = await call(
        'GET',
        `/experiment/${slug}/analysis?method=sequential&control=A&version=1`,
      );
      const units = Number((await page.getByTestId('rollout-units-variant').innerText()).replace(/,/g, ''));
      assert.equal(units, analysis.srm.counts.B);
      // The experiment still runs: its own banner stays quiet, and a new rollout may start.
      assert.equal((await call('GET', `/experiment/${slug}`)).status, 'running');
      assert.equal(await page.getByTestId('status-banner').count(), 0);
      assert.equal((await page.getByTestId('rollout-open').innerText()).trim(), 'Start a new rollout');
      await assertNoOverflow(page, `rolled back at ${width}`);
      await screenshot(page, `rollout-rolled-back-${width}`);
      // The browser's own line for the refused start (the page showed the sentence); nothing else.
      assertNoConsoleErrors(page, [
        /status of 400 \(Bad Request\) \(http:[^)]*\/experiment\/harm-\d+\/rollout\)/,
      ]);
    } finally {
      await page.context().close();
    }
  });

  test(`Pause, Resume and Roll back move the rollout; a read key sees no buttons (${width} px)`, async () => {
    const slug = `moves-${width}`;
    await call('POST', '/experiments', { slug, status: 'running', assignment: 'sticky', variants });
    await call('POST', `/experiment/${slug}/rollout`, { variant: 'B' });
    const page = await open(width, slug);
    try {
      await rampIn(page, 'running');
      const buttons = async () =>
        page
          .locator('[data-testid^="rollout-"]:is(button)')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));
      assert.deepEqual(await buttons(), ['rollout-pause', 'rollout-rollback']);
      assert.match(await page.getByTestId('rollout-next').innerText(), /Next: 25% — (60|59) min left/);

      await page.getByTestId('rollout-pause').click();
      await rampIn(page, 'paused');
      assert.equal((await rolloutOf(slug)).state, 'paused');
      assert.equal(await page.getByTestId('rollout-reason').getAttribute('data-actor'), 'key');
      assert.match(await page.getByTestId('rollout-reason-who').innerText(), /^Paused by root/);
      assert.equal(await page.getByTestId('rollout-reason-text').innerText(), 'Why: paused by a person');
      assert.deepEqual(await buttons(), ['rollout-resume', 'rollout-rollback']);
      await assertNoOverflow(page, `paused at ${width}`);
      await screenshot(page, `rollout-paused-${width}`);

      await page.getByTestId('rollout-resume').click();
      await rampIn(page, 'running');
      assert.equal((await rolloutOf(slug)).state, 'running');
      assert.equal(await page.getByTestId('rollout-reason').count(), 0);

      // Paused elsewhere while the page still shows it running (its reads held back): Pause is refused
      // with the server's sentence; the next read shows the pause.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const path = `**/experiment/${slug}/rollout`;
      await page.route(path, async (route) => {
        if (route.request().method() === 'GET') await held;
        await route.continue();
      });
      await call('PATCH', `/experiment/${slug}/rollout`, { action: 'pause', reason: 'from the CLI' });
      await page.getByTestId('rollout-pause').click();
      const refused = page.getByTestId('rollout-action-error');
      await refused.waitFor();
      assert.equal(
        await refused.innerText(),
        'cannot pause a rollout that is paused; allowed: approve, resume, rollback',
      );
      release();
      await page.unroute(path);
      await rampIn(page, 'paused');
      assert.equal(await page.getByTestId('rollout-reason-text').innerText(), 'Why: from the CLI');
      await page.getByTestId('rollout-resume').click();
      await rampIn(page, 'running');
      assert.equal(await page.getByTestId('rollout-action-error').count(), 0);

      await page.getByTestId('rollout-rollback').click();
      assert.equal((await rolloutOf(slug)).state, 'running', 'nothing before the confirm');
      await page.getByTestId('rollout-reason-input').fill('support tickets up');
      await page.getByTestId('rollout-confirm-rollback').click();
      await rampIn(page, 'rolled_back');
      const back = await rolloutOf(slug);
      assert.deepEqual([back.state, back.reason], ['rolled_back', 'support tickets up']);
      assert.deepEqual(
        back.history.map((e) => [e.type, e.actor.kind]),
        [
          ['rollout.started', 'key'],
          ['rollout.paused', 'key'],
          ['rollout.resumed', 'key'],
          ['rollout.paused', 'key'],
          ['rollout.resumed', 'key'],
          ['rollout.rolled_back', 'key'],
        ],
      );
      assert.match(await page.getByTestId('rollout-reason-who').innerText(), /^Rolled back by root/);
      assert.equal(await page.getByTestId('rollout-reason-text').innerText(), 'Why: support tickets up');
      await page
        .getByText(/Rollout of B rolled back by root at .*: everyone gets A; support tickets up/)
        .waitFor();
      // Ended: no moves left; a new rollout may start.
      assert.deepEqual(await buttons(), ['rollout-open']);
      // The browser's own line for the refused Pause (the page showed the sentence); nothing else.
      assertNoConsoleErrors(page, [
        /status of 409 \(Conflict\) \(http:[^)]*\/experiment\/moves-\d+\/rollout\)/,
      ]);
    } finally {
      await page.context().close();
    }

    // A read key: the same view, no buttons and no start form.
    const { key } = await call('POST', '/keys', { name: `viewer-${width}`, scopes: ['read'] });
    const reader = await open(width, slug, key);
    try {
      await rampIn(reader, 'rolled_back');
      assert.equal(await reader.locator('[data-testid^="rollout-"]:is(button)').count(), 0);
      assert.equal(await reader.getByTestId('rollout-open').count(), 0);
      await assertNoOverflow(reader, `read key at ${width}`);
      assertNoConsoleErrors(reader);
    } finally {
      await reader.context().close();
    }
  });
}

test('a rollout whose first step waits: pending until Approve starts it (390 px)', async () => {
  const slug = 'pending-390';
  await call('POST', '/experiments', { slug, status: 'running', assignment: 'sticky', variants });
  await call('POST', `/experiment/${slug}/rollout`, {
    variant: 'B',
    steps: [{ percent: 10, approval: true }, { percent: 100 }],
  });
  const page = await open(390, slug);
  try {
    await rampIn(page, 'pending');
    assert.equal(await page.getByTestId('rollout-state').innerText(), 'waits for approval');
    assert.equal(await page.getByTestId('rollout-percent').innerText(), '0%');
    assert.equal(
      await page.getByTestId('rollout-next').innerText(),
      'Waits for approval to start at 10%; everyone gets A until then.',
    );
    assert.equal((await page.getByTestId('rollout-approve').innerText()).trim(), 'Approve 10%');
    await assertNoOverflow(page, 'pending at 390');
    await page.getByTestId('rollout-approve').click();
    await rampIn(page, 'running');
    const r = await rolloutOf(slug);
    assert.deepEqual([r.state, r.percent, r.approved], ['running', 10, 0]);
    assert.equal(await page.getByTestId('rollout-percent').innerText(), '10%');
    assert.equal(await page.getByTestId('rollout-step-approval').innerText(), 'approved');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});
