// Issue 34 item 1: each analysis has a time budget (ANALYSIS_BUDGET_SECONDS) and the workers a bounded
// queue (ANALYSIS_THREADS, ANALYSIS_QUEUE). Past the budget the work is stopped (its worker ended) and the
// client gets 503 naming the budget; past the queue, 503 at once; both with Retry-After. The server
// answers meanwhile. A budget of a quarter second, one worker and no queue make both certain here: the
// wide experiment's analysis takes about a second.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertError, SKIP_BACKEND, send } from './helpers/app.js';
import { wideSuite } from './helpers/wide.js';

describe('the analysis budget and queue', { skip: SKIP_BACKEND }, () => {
  const suite = wideSuite('budget', { threads: 1, queue: 0, budgetMs: 250 });

  test('past its budget an analysis is stopped: 503 naming the budget, Retry-After; the server answers', async () => {
    const pending = suite.api.call({ method: 'GET', url: `/experiment/${suite.wide.slug}/analysis` });
    const health = await send(suite.api.port, { method: 'GET', url: '/healthz', headers: {} });
    assert.equal(health.statusCode, 200);
    const res = await pending;
    const message = assertError(res, 503, /budget of 0\.25 s \(ANALYSIS_BUDGET_SECONDS\)/);
    assert.match(message, /was stopped/);
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal(await suite.counted('budget'), 1);
  });

  test('past the queue a request is refused at once with 503 and Retry-After', async () => {
    const first = suite.api.call({ method: 'GET', url: `/experiment/${suite.wide.slug}/analysis?alpha=0.2` });
    const second = await suite.api.call({
      method: 'GET',
      url: `/experiment/${suite.wide.slug}/analysis?alpha=0.3`,
    });
    assertError(second, 503, /analysis workers are busy \(1 running, 0 waiting/);
    assert.ok(Number(second.headers['retry-after']) >= 1);
    assertError(await first, 503, /budget/);
    assert.equal(await suite.counted('busy'), 1);
  });

  test('the same analysis asked twice at once is computed once', async () => {
    const url = `/experiment/${suite.wide.slug}/analysis?alpha=0.4`;
    const [a, b] = await Promise.all([
      suite.api.call({ method: 'GET', url }),
      suite.api.call({ method: 'GET', url }),
    ]);
    // Both share the one run (stopped at the budget): neither is refused as busy.
    assertError(a, 503, /budget/);
    assertError(b, 503, /budget/);
    assert.equal(await suite.counted('busy'), 1);
  });
});
