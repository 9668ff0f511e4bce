// A/A offline runs through the API (issue 40): 200 runs of two identical variants over a 30-item dataset
// (each item's difficulty shared, noisy scores), each opened, logged and compared through HTTP; the share
// called different must stay within alpha (5%) and its Monte Carlo error.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';
import { seededRandom } from './helpers/random.js';

const RUNS = 200;
const ITEMS = 30;

describe('A/A offline runs', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'runs-aa');
    api = runtime.api;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  test(`${RUNS} A/A runs: called different at most alpha`, async () => {
    const { slug } = await api.createExperiment();
    const items = Array.from({ length: ITEMS }, (_, i) => ({ id: `q${i}`, input: `question ${i}` }));
    assert.equal((await api.post('/datasets', { name: 'aa-questions', items })).statusCode, 201);
    const random = seededRandom(2026);
    const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    let called = 0;
    let wilcoxonCalled = 0;
    for (let k = 0; k < RUNS; k++) {
      const opened = await api.post(`/experiment/${slug}/runs`, { dataset: 'aa-questions' });
      assert.equal(opened.statusCode, 201, opened.body);
      const runId = opened.json().id as string;
      const results = items.flatMap((item) => {
        const level = normal() * 2;
        return ['A', 'B'].map((variantKey) => ({
          variantKey,
          runId,
          itemId: item.id,
          metrics: { score: level + normal() },
        }));
      });
      await api.logMany(slug, results);
      const res = await api.get(`/runs/${runId}/comparison`);
      assert.equal(res.statusCode, 200, res.body);
      const c = res.json().metrics[0].comparisons[0];
      assert.equal(c.items, ITEMS);
      if (c.significant) called++;
      if (c.wilcoxon.pValue < 0.05) wilcoxonCalled++;
    }
    // 5% of 200 is 10, with a standard error of about 3.1.
    const bound = RUNS * (0.05 + 2 * Math.sqrt((0.05 * 0.95) / RUNS));
    assert.ok(called <= bound, `paired t called ${called} of ${RUNS} A/A runs different`);
    assert.ok(wilcoxonCalled <= bound, `Wilcoxon called ${wilcoxonCalled} of ${RUNS} different`);
    // Online, none of the 12,000 results counts.
    const analysis = (await api.get(`/experiment/${slug}/analysis`)).json();
    assert.ok(JSON.stringify(analysis.metrics).indexOf('"n":12000') === -1);
  });
});
