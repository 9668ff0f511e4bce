// Issue 34 items 1 and 2: analyses and time series run in worker threads (services/analysis-pool.ts), so one
// read key cannot freeze an instance, and an answer is cached until the experiment's rollups change; answers
// are bounded (core/answer-bounds.ts). The campaign's frozen-instance case, sized to seconds: a wide
// experiment (25 variants × 200 metric names) whose analyses take about a second each; /healthz and assign
// answer while eight of them run. (Timing is measured in `npm run bench`; here only the order of answers.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertError, SKIP_BACKEND, send } from './helpers/app.js';
import { wideSuite } from './helpers/wide.js';

describe('analyses off the event loop', { skip: SKIP_BACKEND }, () => {
  const suite = wideSuite('pool', { threads: 2, queue: 16 });

  test('eight analyses of a wide experiment run while /healthz and assign answer at once', async () => {
    const finished: number[] = [];
    // Different alphas: eight distinct analyses, none answered from another's work.
    const analyses = Array.from({ length: 8 }, (_, i) =>
      suite.api
        .call({ method: 'GET', url: `/experiment/${suite.wide.slug}/analysis?alpha=0.0${i + 1}` })
        .then((res) => {
          finished.push(performance.now());
          return res;
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const health = await send(suite.api.port, { method: 'GET', url: '/healthz', headers: {} });
    const healthAt = performance.now();
    const assigned = await suite.api.call({
      method: 'POST',
      url: `/experiment/${suite.wide.slug}/assign`,
      body: { userId: 'u1' },
    });
    const assignedAt = performance.now();
    const answers = await Promise.all(analyses);
    assert.equal(health.statusCode, 200);
    assert.equal(assigned.statusCode, 200, assigned.body);
    const last = Math.max(...finished);
    assert.ok(healthAt < last, '/healthz answered before the analyses finished');
    assert.ok(assignedAt < last, 'assign answered before the analyses finished');
    for (const [i, res] of answers.entries()) {
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      const body = res.json();
      assert.equal(body.alpha, Number(`0.0${i + 1}`));
      assert.equal(body.metrics.length, suite.wide.metrics);
      assert.equal(body.metrics[0].variants.length, suite.wide.variants);
    }
  });

  test('an answer is cached until a write moves the rollups; the same query in another order is the same', async () => {
    const url = `/experiment/${suite.wide.slug}/analysis?metrics=m1,m2&alpha=0.1`;
    const first = await suite.api.call({ method: 'GET', url });
    assert.equal(first.statusCode, 200, first.body);
    const cachedBefore = await suite.counted('cached');
    const again = await suite.api.call({
      method: 'GET',
      url: `/experiment/${suite.wide.slug}/analysis?alpha=0.1&metrics=m1,m2`,
    });
    assert.equal(again.body, first.body);
    assert.equal(await suite.counted('cached'), cachedBefore + 1);
    const n = (body: { results: Record<string, number> }) => body.results.v0 ?? 0;
    const logged = await suite.api.call({
      method: 'POST',
      url: `/experiment/${suite.wide.slug}/log`,
      body: { variantKey: 'v0', metrics: { m1: 1 } },
    });
    assert.equal(logged.statusCode, 200, logged.body);
    const after = await suite.api.call({ method: 'GET', url });
    assert.equal(await suite.counted('cached'), cachedBefore + 1, 'recomputed, not cached');
    assert.equal(n(after.json()), n(first.json()) + 1);
    // Feedback moves rollups too.
    const feedback = await suite.api.call({
      method: 'POST',
      url: `/experiment/${suite.wide.slug}/feedback`,
      body: { logId: logged.json().logId, metrics: { m2: 5 } },
    });
    assert.equal(feedback.statusCode, 200, feedback.body);
    const m2 = (body: { metrics: Array<{ name: string; variants: Array<{ key: string; n: number }> }> }) =>
      body.metrics.find((m) => m.name === 'm2')!.variants.find((v) => v.key === 'v0')!.n;
    const withFeedback = await suite.api.call({ method: 'GET', url });
    assert.equal(m2(withFeedback.json()), m2(after.json()) + 1);
    // A change of the definition (PATCH) is seen at once.
    const patched = await suite.api.call({
      method: 'PATCH',
      url: `/experiment/${suite.wide.slug}`,
      body: { metrics: [{ name: 'm1', role: 'primary', direction: 'increase' }] },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const declared = (await suite.api.call({ method: 'GET', url })).json();
    assert.equal(declared.metrics.find((m: { name: string }) => m.name === 'm1').role, 'primary');
  });

  test('an answer past the bound is refused with 422 saying how to narrow it', async () => {
    const res = await suite.api.call({
      method: 'GET',
      url: `/experiment/${suite.wide.slug}/analysis?segment=s`,
    });
    const message = assertError(res, 422, /35,000 figures/);
    assert.match(message, /200 metrics × 25 variants × 7/);
    assert.match(message, /at most 20,000/);
    assert.match(message, /metrics=/);
    assert.match(message, /segmentValues=/);
    const narrowed = await suite.api.call({
      method: 'GET',
      url: `/experiment/${suite.wide.slug}/analysis?segment=s&metrics=m0,m1`,
    });
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    assert.deepEqual(
      narrowed
        .json()
        .segments.map((s: { value: string }) => s.value)
        .sort(),
      [...suite.wide.values].sort(),
    );
  });

  test('segmentValues shows the values with most units, the rest merged as "(other)"', async () => {
    const res = await suite.api.call({
      method: 'GET',
      url: `/experiment/${suite.wide.slug}/analysis?segment=s&metrics=m0&segmentValues=2`,
    });
    assert.equal(res.statusCode, 200, res.body);
    const segments = res.json().segments as Array<{
      value: string;
      mergedValues?: number;
      results: Record<string, number>;
    }>;
    assert.equal(segments.length, 3);
    assert.equal(segments[2]!.value, '(other)');
    assert.equal(segments[2]!.mergedValues, suite.wide.values.length - 2);
    const units = (s: { results: Record<string, number> }) =>
      Object.values(s.results).reduce((a, b) => a + b, 0);
    assert.ok(units(segments[0]!) >= units(segments[1]!));
    const all = await suite.api.call({
      method: 'GET',
      url: `/experiment/${suite.wide.slug}/analysis?segment=s&metrics=m0`,
    });
    const rest = all
      .json()
      .segments.filter(
        (s: { value: string }) => s.value !== segments[0]!.value && s.value !== segments[1]!.value,
      );
    assert.equal(
      units(segments[2]!),
      rest.reduce((a: number, s: { results: Record<string, number> }) => a + units(s), 0),
    );
    for (const bad of ['0', '51', 'x']) {
      const refused = await suite.api.call({
        method: 'GET',
        url: `/experiment/${suite.wide.slug}/analysis?segment=s&segmentValues=${bad}`,
      });
      assertError(refused, 400, /segmentValues/);
    }
  });

  test('the time series runs in the pool too, and errors of the work keep their status', async () => {
    const series = await suite.api.call({
      method: 'GET',
      url: `/experiment/${suite.wide.slug}/analysis/timeseries?metric=m3`,
    });
    assert.equal(series.statusCode, 200, series.body);
    assert.equal(series.json().metric, 'm3');
    assertError(
      await suite.api.call({
        method: 'GET',
        url: `/experiment/${suite.wide.slug}/analysis/timeseries?metric=nope`,
      }),
      400,
      /metric 'nope' has no data/,
    );
    assertError(
      await suite.api.call({ method: 'GET', url: `/experiment/${suite.wide.slug}/analysis?control=zz` }),
      400,
      /control 'zz' is not a variant/,
    );
    assertError(
      await suite.api.call({ method: 'GET', url: '/experiment/no-such/analysis' }),
      404,
      /no experiment/,
    );
  });
});
