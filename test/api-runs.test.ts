// Offline runs through the API (issue 40): a run of two variants over a 60-item dataset with 2 trials,
// logged with runId/itemId/trial; its results never count online and never mix with online ones; feedback
// on them counts in the run; the comparison's paired t agrees with scipy's ttest_rel on the item means;
// results that do not fit the run are refused with the reason.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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

const ITEMS = 60;
const TRIALS = 2;

describe('offline runs', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;
  let runId: string;
  const scores = new Map<string, number[]>();

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'runs');
    api = runtime.api;
    slug = (
      await api.createExperiment({ metrics: [{ name: 'correct', direction: 'increase', role: 'primary' }] })
    ).slug;
    const items = Array.from({ length: ITEMS }, (_, i) => ({
      id: `q${i}`,
      input: { question: `question ${i}` },
    }));
    const created = await api.post('/datasets', { name: 'support-questions', items });
    assert.equal(created.statusCode, 201, created.body);
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  test('open a run: every variant, the newest version, its item count', async () => {
    const res = await api.post(`/experiment/${slug}/runs`, { dataset: 'support-questions', trials: TRIALS });
    assert.equal(res.statusCode, 201, res.body);
    const run = res.json();
    assert.deepEqual(
      { ...run, id: undefined, createdAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        experiment: slug,
        dataset: 'support-questions',
        version: 1,
        variants: ['A', 'B'],
        trials: TRIALS,
        items: ITEMS,
      },
    );
    runId = run.id;
    assert.deepEqual((await api.get(`/runs/${runId}`)).json(), run);
    assert.deepEqual((await api.get(`/experiment/${slug}/runs`)).json(), { runs: [run], nextCursor: null });
  });

  test("a run's results: logged with runId, itemId and trial; never online", async () => {
    const random = seededRandom(40);
    const results = [];
    for (let i = 0; i < ITEMS; i++) {
      const level = random() * 10;
      for (const variantKey of ['A', 'B']) {
        for (let trial = 1; trial <= TRIALS; trial++) {
          const score = level + (variantKey === 'B' ? 0.8 : 0) + random();
          scores.set(`${variantKey}/q${i}`, [...(scores.get(`${variantKey}/q${i}`) ?? []), score]);
          results.push({
            variantKey,
            runId,
            itemId: `q${i}`,
            trial,
            output: { answer: `${variantKey} answers ${i}` },
            metrics: { score, correct: variantKey === 'B' ? i % 10 < 8 : i % 10 < 5 },
          });
        }
      }
    }
    const ids = await api.logMany(slug, results);
    assert.equal(ids.length, ITEMS * 2 * TRIALS);
    // Online: no results listed, nothing analysed.
    assert.deepEqual((await api.allResults(slug)).length, 0);
    const analysis = (await api.get(`/experiment/${slug}/analysis`)).json();
    assert.ok(
      analysis.metrics.every((m: { variants: Array<{ n: number }> }) => m.variants.every((v) => v.n === 0)),
      JSON.stringify(analysis.metrics),
    );
    const listed = await api.allResults(slug, `&run=${runId}`);
    assert.equal(listed.length, ITEMS * 2 * TRIALS);
    assert.deepEqual((listed[0] as unknown as { run: unknown }).run, { id: runId, itemId: 'q0', trial: 1 });
  });

  test('the comparison: paired t as scipy ttest_rel on item means, the verdict, McNemar off with trials', async () => {
    const res = await api.get(`/runs/${runId}/comparison?control=A`);
    assert.equal(res.statusCode, 200, res.body);
    const c = res.json();
    assert.equal(c.items, ITEMS);
    assert.deepEqual(
      c.variants.map((v: { key: string; results: number }) => [v.key, v.results]),
      [
        ['A', ITEMS * TRIALS],
        ['B', ITEMS * TRIALS],
      ],
    );
    const score = c.metrics.find((m: { name: string }) => m.name === 'score').comparisons[0];
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const a = Array.from({ length: ITEMS }, (_, i) => mean(scores.get(`A/q${i}`)!));
    const b = Array.from({ length: ITEMS }, (_, i) => mean(scores.get(`B/q${i}`)!));
    const py = spawnSync(
      'python3',
      [
        '-c',
        'import json,sys\nfrom scipy.stats import ttest_rel\nd=json.load(sys.stdin)\nr=ttest_rel(d["b"],d["a"])\nci=r.confidence_interval()\nprint(json.dumps([r.pvalue,ci.low,ci.high]))',
      ],
      { input: JSON.stringify({ a, b }), encoding: 'utf8' },
    );
    const [p, lo, hi] = JSON.parse(py.stdout) as number[];
    assert.ok(
      Math.abs(score.difference.pValue - p!) <= 1e-9 * Math.max(p!, 1e-300),
      `${score.difference.pValue} vs ${p}`,
    );
    assert.ok(Math.abs(score.difference.ci[0] - lo!) < 1e-9 && Math.abs(score.difference.ci[1] - hi!) < 1e-9);
    assert.ok(score.variance !== null, 'two trials: the variance shares');
    const correct = c.metrics.find((m: { name: string }) => m.name === 'correct').comparisons[0];
    assert.equal(correct.mcnemar, null, 'McNemar needs one trial an item');
    assert.deepEqual([correct.wins, correct.losses], [18, 0]);
    assert.match(c.verdict.summary, /^B beats A on `correct`: \+30\.0 points \[/);
    assert.equal(c.changed.length, 10);
    assert.ok(c.changed[0].control.output.answer.startsWith('A answers'));
  });

  test('feedback on a run result counts in the run, never online', async () => {
    const page = await api.get(`/experiment/${slug}/results?run=${runId}&variant=A&limit=1`);
    const [first] = page.json().results as Array<{ logId: string }>;
    const res = await api.post(`/experiment/${slug}/feedback`, {
      logId: first!.logId,
      metrics: { judge: 0.25 },
    });
    assert.equal(res.statusCode, 200, res.body);
    const c = (await api.get(`/runs/${runId}/comparison`)).json();
    assert.ok(c.metrics.some((m: { name: string }) => m.name === 'judge'));
    const analysis = (await api.get(`/experiment/${slug}/analysis`)).json();
    const judge = analysis.metrics.find((m: { name: string }) => m.name === 'judge');
    assert.ok(
      judge === undefined || judge.variants.every((v: { n: number }) => v.n === 0),
      JSON.stringify(judge),
    );
  });

  test('results that do not fit the run are refused with the reason', async () => {
    const log = (body: Record<string, unknown>) =>
      api.post(`/experiment/${slug}/log`, { variantKey: 'A', ...body });
    const refused = async (body: Record<string, unknown>, status: number, reason: RegExp) => {
      const res = await log(body);
      assert.equal(res.statusCode, status, res.body);
      assert.match(res.json().error, reason);
    };
    await refused(
      { runId, itemId: 'nope', trial: 1 },
      400,
      /item 'nope' is not in version 1 of dataset 'support-questions'/,
    );
    await refused({ runId, itemId: 'q1', trial: 3 }, 400, /trial must be from 1 to 2/);
    await refused({ runId: 'no-such-run', itemId: 'q1' }, 404, /has no run with id 'no-such-run'/);
    await refused({ itemId: 'q1', trial: 1 }, 400, /send runId/);
    await refused({ runId }, 400, /needs itemId/);
    const other = await api.createExperiment();
    const res = await api.post(`/experiment/${other.slug}/log`, { variantKey: 'A', runId, itemId: 'q1' });
    assert.equal(res.statusCode, 404, res.body);
    const bad = await api.get(`/runs/${runId}/comparison?control=Z`);
    assert.equal(bad.statusCode, 400);
    assert.equal((await api.get('/runs/none')).statusCode, 404);
    const three = await api.post(`/experiment/${slug}/runs`, {
      dataset: 'support-questions',
      variants: ['A', 'Z'],
    });
    assert.equal(three.statusCode, 400);
    assert.match(three.json().error, /'Z' are not variants/);
    const missing = await api.post(`/experiment/${slug}/runs`, { dataset: 'nope' });
    assert.equal(missing.statusCode, 404);
  });

  test("an experiment's runs a page at a time, newest first, every run once", async () => {
    const { slug: paged } = await api.createExperiment();
    const opened: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api.post(`/experiment/${paged}/runs`, { dataset: 'support-questions' });
      assert.equal(res.statusCode, 201, res.body);
      opened.unshift(res.json().id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const path: string = `/experiment/${paged}/runs?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`;
      const page = (await api.get(path)).json();
      assert.ok(page.runs.length <= 2);
      seen.push(...page.runs.map((r: { id: string }) => r.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    assert.deepEqual(seen, opened);
    assert.equal(pages, 3);
    assert.equal((await api.get(`/experiment/${paged}/runs?limit=0`)).statusCode, 400);
    assert.equal((await api.get(`/experiment/${paged}/runs?limit=101`)).statusCode, 400);
  });
});
