// Who enters (issue 35, ADR 0038) in the dashboard, in headless Chromium against a real server: a targeting
// condition set through the editor (an example clicked, JSON checked as you type), coverage, layer and an
// override saved and read back through the API; the experiment page says who enters in one line; a condition
// the server refuses shows the server's 400 beside the field, naming targeting.plan.$inn, with the text kept;
// a layer overlap shows the 409 naming the other experiment; the preview box says why a user is out (reason
// targeting, the explanation) or in. No overflow at 1400 and 390 px; no console errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
// @ts-expect-error: the dashboard is plain JavaScript (no build step), without type declarations
import { whoFieldOf } from '../dashboard/parts/who-enters.js';
// @ts-expect-error: as above
import { conditionText, whoParts } from '../dashboard/parts/who-summary.js';
import { assertNoConsoleErrors, assertNoOverflow, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-targeting-root-key-0123456789abcd';
const SLUG = 'pro-prompt';

const ui = dashboardRun(API_KEY);
const call = ui.call;
const ab = [
  { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
];

async function openEdit(width = 1400): Promise<Page> {
  const page = await openDashboard(ui.browser, ui.base, {
    key: API_KEY,
    hash: `#/experiment/${SLUG}/edit`,
    width,
  });
  await page.getByTestId('who-enters').waitFor();
  return page;
}

test('targeting set in the editor is saved and summed up in one line on the experiment page', async () => {
  await call('POST', '/experiments', { slug: SLUG, assignment: 'sticky', variants: ab });
  const page = await openDashboard(ui.browser, ui.base, {
    key: API_KEY,
    hash: `#/experiment/${SLUG}`,
    width: 1400,
  });
  try {
    assert.equal(await page.getByTestId('who-enters-line').innerText(), 'Everyone enters');
    await page.getByTestId('tab-edit').click();
    const targeting = page.getByTestId('field-targeting');
    await targeting.waitFor();
    assert.equal(await targeting.inputValue(), '');

    // Checked as JSON while typing: a clear message, and the form does not save it.
    await targeting.fill('{"plan": ');
    assert.match(await page.getByTestId('error-targeting').innerText(), /^Not valid JSON yet/);
    assert.equal(await targeting.getAttribute('aria-invalid'), 'true');
    await targeting.fill('["plan"]');
    assert.match(await page.getByTestId('error-targeting').innerText(), /A condition is a JSON object/);

    // An example fills the editor with valid JSON.
    await page.getByTestId('targeting-example').filter({ hasText: 'plan in [pro, team]' }).click();
    assert.deepEqual(JSON.parse(await targeting.inputValue()), { plan: { $in: ['pro', 'team'] } });
    assert.equal(await page.getByTestId('error-targeting').count(), 0);

    await page.getByTestId('field-coverage').fill('20');
    await page.getByTestId('field-layerKey').fill('prompts');
    await page
      .getByTestId('layer-hint')
      .filter({ hasText: 'No other experiment uses layer prompts.' })
      .waitFor();
    await page.getByTestId('field-layerEnd').fill('0.5');
    await page.getByTestId('add-override').click();
    const qa = page.getByTestId('override-0');
    await qa.getByTestId('override-variant').selectOption('B');
    await qa.getByTestId('override-value').fill('qa-1, qa-2');
    await page.getByTestId('add-override').click();
    const staff = page.getByTestId('override-1');
    await staff.getByTestId('override-variant').selectOption('A');
    await staff.getByTestId('override-mode').selectOption('condition');
    await staff.getByTestId('override-value').fill('{"email": {"$regex": "@staff\\\\."}}');
    await page.getByTestId('field-defaultVariant').selectOption('B');
    await assertNoOverflow(page, 'edit at 1400');
    await screenshot(page, 'targeting-edit-1400');
    await page.getByTestId('save').click();

    await page.getByTestId('experiment-overview').waitFor();
    const saved = await call('GET', `/experiment/${SLUG}`);
    assert.deepEqual(saved.targeting, { plan: { $in: ['pro', 'team'] } });
    assert.equal(saved.coverage, 20);
    assert.deepEqual(saved.layer, { key: 'prompts', range: [0, 0.5] });
    assert.deepEqual(saved.overrides, [
      { variant: 'B', userIds: ['qa-1', 'qa-2'] },
      { variant: 'A', condition: { email: { $regex: '@staff\\.' } } },
    ]);
    assert.equal(saved.defaultVariant, 'B');
    assert.equal(
      await page.getByTestId('who-enters-line').innerText(),
      'Who enters: plan in [pro, team] · 20% coverage · layer prompts [0, 0.5) · 2 overrides · others get B',
    );
    await assertNoOverflow(page, 'experiment at 1400');

    // The form reads the saved values back.
    await page.getByTestId('tab-edit').click();
    await page.getByTestId('who-enters').waitFor();
    assert.deepEqual(JSON.parse(await page.getByTestId('field-targeting').inputValue()), saved.targeting);
    assert.equal(await page.getByTestId('field-coverage').inputValue(), '20');
    assert.equal(await page.getByTestId('override-1').getByTestId('override-mode').inputValue(), 'condition');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});

test('a condition the server refuses shows its 400 beside the field, and the text stays', async () => {
  const page = await openEdit();
  try {
    const bad = '{"plan": {"$inn": ["pro"]}}';
    await page.getByTestId('field-targeting').fill(bad);
    await page.getByTestId('save').click();
    const error = page.getByTestId('error-targeting');
    await error.waitFor();
    assert.match(await error.innerText(), /targeting\.plan\.\$inn: unknown operator \$inn/);
    assert.equal(await page.getByTestId('field-targeting').inputValue(), bad, 'what was typed is kept');
    assert.equal(await page.getByTestId('field-targeting').getAttribute('aria-invalid'), 'true');
    assert.deepEqual((await call('GET', `/experiment/${SLUG}`)).targeting, {
      plan: { $in: ['pro', 'team'] },
    });

    // A layer range another running experiment holds: the 409 names it and the free ranges.
    await call('POST', '/experiments', {
      slug: 'other-prompt',
      status: 'running',
      variants: ab,
      layer: { key: 'prompts', range: [0.5, 1] },
    });
    await call('PATCH', `/experiment/${SLUG}`, { status: 'running' });
    await page.reload();
    await page.getByTestId('who-enters').waitFor();
    assert.equal(
      await page.getByTestId('layer-hint').innerText(),
      'Layer prompts: other-prompt (running) [0.5, 1); free for a running experiment: [0, 0.5).',
    );
    await page.getByTestId('field-layerEnd').fill('0.7');
    await page.getByTestId('save').click();
    await page.getByTestId('error-layer').waitFor();
    assert.match(
      await page.getByTestId('error-layer').innerText(),
      /overlaps running experiment 'other-prompt'/,
    );
    assert.equal(await page.getByTestId('field-layerEnd').inputValue(), '0.7');
    await screenshot(page, 'targeting-refused-1400');
    // The browser logs the refused PATCH itself; the page logs nothing else.
    assertNoConsoleErrors(page, [/Failed to load resource: the server responded with a status of (400|409)/]);
  } finally {
    await page.context().close();
  }
});

/** The first of u-0 … u-299 whose preview (through the API) says `wanted`. */
async function userWith(context: object, wanted: (p: { inExperiment: boolean; reason: string }) => boolean) {
  for (let i = 0; i < 300; i++) {
    const p = await call('POST', `/experiment/${SLUG}/preview`, { userId: `u-${i}`, context });
    if (wanted(p)) return `u-${i}`;
  }
  throw new Error('no user of 300 fits');
}

test('preview says why a user is out (targeting) or in, at 1400 and 390 px', async () => {
  // Half the layer is this experiment's: a user in that half, on the free plan, is stopped by targeting.
  const outside = await userWith({ plan: 'free' }, (p) => p.reason === 'targeting');
  const inside = await userWith({ plan: 'pro' }, (p) => p.inExperiment);
  for (const width of [1400, 390]) {
    const page = await openEdit(width);
    try {
      const preview = page.getByTestId('preview');
      await preview.getByTestId('preview-user').fill(outside);
      await preview.getByTestId('preview-context').fill('{"plan": "free"}');
      await preview.getByTestId('preview-run').click();
      const answer = preview.getByTestId('preview-answer');
      await answer.waitFor();
      assert.equal(await answer.getAttribute('data-reason'), 'targeting');
      assert.equal(
        await preview.getByTestId('preview-entered').innerText(),
        'not in the experiment (targeting)',
      );
      assert.equal(await preview.getByTestId('preview-variant').innerText(), 'B', 'the default variant');
      assert.match(
        await preview.getByTestId('preview-explanation').innerText(),
        /^targeting: `plan` is "free", rule wants \{"\$in":\["pro","team"\]\}/,
      );

      // A QA id is served its override before targeting is asked.
      await preview.getByTestId('preview-user').fill('qa-1');
      await preview.getByTestId('preview-user').press('Enter');
      await preview.locator('[data-testid="preview-answer"][data-reason="override"]').waitFor();
      assert.equal(
        await preview.getByTestId('preview-entered').innerText(),
        'not in the experiment (override)',
      );
      assert.equal(await page.getByTestId('experiment-edit').count(), 1, 'Enter previewed, it did not save');

      // A pro user whom the layer and coverage let in.
      await preview.getByTestId('preview-user').fill(inside);
      await preview.getByTestId('preview-context').fill('{"plan": "pro"}');
      await preview.getByTestId('preview-run').click();
      await preview.locator('[data-testid="preview-answer"][data-in="true"]').waitFor();
      assert.equal(await preview.getByTestId('preview-entered').innerText(), 'in the experiment');
      assert.match(
        await preview.getByTestId('preview-explanation').innerText(),
        new RegExp(
          `^split: layer and targeting let '${inside}' in; '${inside}' hashes to 0\\.\\d+, in [AB]'s range`,
        ),
      );

      // A context that is not JSON is said so, and Preview waits for it.
      await preview.getByTestId('preview-context').fill('{plan');
      assert.equal(await preview.getByTestId('preview-run').isDisabled(), true);
      await preview.getByTestId('preview-context').fill('{"plan": "pro"}');

      await assertNoOverflow(page, `edit at ${width}`);
      await screenshot(page, `targeting-preview-${width}`);
      await page.getByTestId('tab-overview').click();
      await page.getByTestId('who-enters-line').waitFor();
      await assertNoOverflow(page, `experiment at ${width}`);
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  }
});

test('the one-line summary: words for simple clauses, compact JSON otherwise, cut at 120 characters', () => {
  assert.equal(
    conditionText({ country: { $ne: 'FR' }, appVersion: { $vgte: '1.2.0' } }),
    'country ≠ FR and appVersion ≥ v1.2.0',
  );
  assert.equal(conditionText({ plan: 'pro' }), 'plan = pro');
  const rich = { $or: [{ plan: 'pro' }, { tags: { $elemMatch: { $eq: 'beta' } } }] };
  assert.equal(conditionText(rich), JSON.stringify(rich));
  const long = conditionText({ note: { $in: Array.from({ length: 40 }, (_, i) => `value-${i}`) } });
  assert.equal(long.length, 120);
  assert.ok(long.endsWith('…'));
  assert.deepEqual(
    whoParts({ targeting: null, coverage: 100, layer: null, overrides: [], defaultVariant: null }),
    [],
  );
  assert.deepEqual(
    whoParts({ targeting: null, coverage: 10, layer: null, overrides: [{}], defaultVariant: null }),
    ['everyone', '10% coverage', '1 override'],
  );
  assert.equal(whoFieldOf('targeting.plan.$inn: unknown operator $inn'), 'targeting');
  assert.equal(whoFieldOf('overrides[0].variant must name a variant (A, B)'), 'overrides');
  assert.equal(whoFieldOf("layer 'l' range [0, 0.7) overlaps running experiment 'x'"), 'layer');
  assert.equal(whoFieldOf('body/coverage must be <= 100'), 'coverage');
  assert.equal(whoFieldOf('variants[1].key must be unique'), null);
});

test('a new experiment is created with its targeting, and no preview box before it exists', async () => {
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: '#/new', width: 390 });
  try {
    await page.getByTestId('who-enters').waitFor();
    assert.equal(await page.getByTestId('preview').count(), 0);
    await page.getByLabel('Slug', { exact: true }).fill('fr-free-prompt');
    await page.getByTestId('targeting-example').filter({ hasText: 'country not FR' }).click();
    await page.getByTestId('field-coverage').fill('50');
    await assertNoOverflow(page, 'new at 390');
    await page.getByTestId('save').click();
    await page.getByTestId('experiment-overview').waitFor();
    const created = await call('GET', '/experiment/fr-free-prompt');
    assert.deepEqual(created.targeting, { country: { $ne: 'FR' } });
    assert.equal(created.coverage, 50);
    assert.equal(created.layer, null);
    assert.equal(
      await page.getByTestId('who-enters-line').innerText(),
      'Who enters: country ≠ FR · 50% coverage',
    );
    await assertNoOverflow(page, 'experiment at 390');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});
