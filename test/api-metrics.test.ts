// Metrics that are stored but not analysed (issue 13): values that are not numbers or true/false, and
// names beyond an experiment's cap (hole 2). Both are kept, neither silently: the log answer says so.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_METRICS_PER_EXPERIMENT } from '../src/core/metric-cap.js';
import type { Rollups } from '../src/store/rollup-types.js';
import {
  type Api,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

let dir: string;
let runtime: TestRuntime;
let api: Api;

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return;
  runtime = await startTestRuntime(dir, 'metrics');
  api = runtime.api;
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

async function analysedNames(slug: string): Promise<string[]> {
  const res = await api.get(`/experiment/${slug}/analysis`);
  assert.equal(res.statusCode, 200, res.body.slice(0, 500));
  return res.json().metrics.map((m: { name: string }) => m.name);
}

describe('a metric value that is not a number or true/false', { skip: SKIP_BACKEND }, () => {
  test('a metric sent as a string is stored, left out of analysis, and the log answer warns naming it', async () => {
    const { slug } = await api.createExperiment();
    const res = await api.post(`/experiment/${slug}/log`, {
      variantKey: 'A',
      metrics: { latency_ms: '812', tokens: 153 },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(
      res.json().warning,
      "metric 'latency_ms' is a string, not a number or true/false: stored, not analysed",
    );
    const [stored] = await api.allResults(slug);
    assert.deepEqual(stored!.metrics, { latency_ms: '812', tokens: 153 });
    assert.deepEqual(await analysedNames(slug), ['tokens']);
  });

  test('logs: the warnings name each metric sent as a string once, however many results carry it', async () => {
    const { slug } = await api.createExperiment();
    const res = await api.post(`/experiment/${slug}/logs`, {
      results: [
        { variantKey: 'A', metrics: { latency_ms: '812', rating: 5 } },
        { variantKey: 'B', metrics: { latency_ms: '790', rating: 4 } },
        { variantKey: 'B', metrics: { rating: 3 } },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().warnings, [
      "metric 'latency_ms' is a string, not a number or true/false: stored, not analysed",
    ]);
    assert.equal((await api.allResults(slug)).length, 3);
  });

  test('other values that are not analysed are named with what they are; numbers and true/false carry no warning', async () => {
    const { slug } = await api.createExperiment();
    const plain = await api.post(`/experiment/${slug}/log`, {
      variantKey: 'A',
      metrics: { n: 1.5, ok: true, zero: 0, no: false },
    });
    assert.equal(plain.json().warning, undefined, plain.body);
    const res = await api.post(`/experiment/${slug}/log`, {
      variantKey: 'A',
      metrics: { deep: { a: 1 }, list: [1], nothing: null, huge: 1e200 },
    });
    assert.equal(
      res.json().warning,
      [
        "metric 'deep' is an object, not a number or true/false: stored, not analysed",
        "metric 'list' is an array, not a number or true/false: stored, not analysed",
        "metric 'nothing' is null, not a number or true/false: stored, not analysed",
        "metric 'huge' is beyond ±1e100 (its square would overflow the sums): stored, not analysed",
      ].join('; '),
    );
  });

  test('several warnings in one log answer are joined with "; " (an unknown variant and a string metric)', async () => {
    const { slug } = await api.createExperiment();
    const res = await api.post(`/experiment/${slug}/log`, { variantKey: 'Z', metrics: { score: 'high' } });
    assert.equal(res.statusCode, 200, res.body);
    const parts = res.json().warning.split('; ');
    assert.equal(parts.length, 2, res.body);
    assert.match(parts[0], /variantKey 'Z' matches no variant/);
    assert.equal(parts[1], "metric 'score' is a string, not a number or true/false: stored, not analysed");
  });

  test('a result with many metrics that are not analysed names a few and counts the rest', async () => {
    const { slug } = await api.createExperiment();
    const metrics = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s${i}`, String(i)]));
    const res = await api.post(`/experiment/${slug}/log`, { variantKey: 'A', metrics });
    const warning: string = res.json().warning;
    assert.ok(warning.length < 1000, warning);
    assert.match(warning, /metric 's0' is a string/);
    assert.match(warning, /and 35 more metrics that are not numbers or true\/false: stored, not analysed$/);
  });
});

describe(`distinct metric names per experiment: at most MAX_METRICS_PER_EXPERIMENT (${MAX_METRICS_PER_EXPERIMENT}) are analysed (hole 2)`, {
  skip: SKIP_BACKEND,
}, () => {
  const cap = MAX_METRICS_PER_EXPERIMENT;
  const name = (i: number) => `m${String(i).padStart(3, '0')}`;
  /** Metrics named name(from)…name(to - 1), with integer values (sums are exact in any order). */
  const metrics = (from: number, to: number, value: number) =>
    Object.fromEntries(Array.from({ length: to - from }, (_, k) => [name(from + k), value + k]));
  let slug: string;
  let experimentId: number;
  let manyAnswer: { logIds: string[]; warnings?: string[] };

  before(async () => {
    if (SKIP_BACKEND) return;
    slug = (await api.createExperiment()).slug;
    experimentId = (await runtime.store.findExperiment(slug))!.id;
    // 250 names: the first `cap` (in the order they arrive) are analysed, the last 50 are over the cap.
    const res = await api.post(`/experiment/${slug}/logs`, {
      results: [
        { variantKey: 'A', metrics: metrics(0, 100, 1) },
        { variantKey: 'B', metrics: metrics(100, 200, 2) },
        { variantKey: 'A', metrics: metrics(150, 250, 3) },
        { variantKey: 'B', metrics: metrics(0, 10, 4) },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    manyAnswer = res.json();
  });

  test('results beyond the cap are stored whole; the answer warns naming a few new names and the cap', async () => {
    const stored = await api.allResults(slug);
    assert.equal(stored.length, 4);
    assert.deepEqual(stored[2]!.metrics, metrics(150, 250, 3));
    assert.equal(manyAnswer.warnings?.length, 1, JSON.stringify(manyAnswer));
    const [warning] = manyAnswer.warnings as [string];
    assert.match(warning, /'m200', 'm201', 'm202' and 47 more/);
    assert.match(warning, new RegExp(`at most ${cap} distinct metric names`));
    assert.ok(!warning.includes("'m203'"), warning);
    assert.ok(warning.length < 400, warning);
  });

  test('a single log with a name beyond the cap is stored and warned about; names already analysed are not', async () => {
    const res = await api.post(`/experiment/${slug}/log`, {
      variantKey: 'A',
      metrics: { m000: 7, late_name: 1, m249: 2 },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.json().warning, /'late_name', 'm249'/);
    assert.match(res.json().warning, new RegExp(`at most ${cap} distinct metric names`));
    const known = await api.post(`/experiment/${slug}/log`, { variantKey: 'B', metrics: { m199: 1 } });
    assert.equal(known.json().warning, undefined, known.body);
  });

  test('analysis lists only the names within the cap', async () => {
    const names = await analysedNames(slug);
    assert.equal(names.length, cap);
    assert.deepEqual(
      names,
      Array.from({ length: cap }, (_, i) => name(i)),
    );
  });

  test('asking analysis for a name beyond the cap → 400 naming at most 10 of the metrics and counting the rest', async () => {
    const res = await api.get(`/experiment/${slug}/analysis?metrics=m220`);
    const message = assertError(res, 400, /metric 'm220' has no data/);
    assert.match(message, new RegExp(`m009 and ${cap - 10} more\\)`), message);
    assert.ok(!message.includes('m010'), message);
    assert.ok(message.length < 400, message);
  });

  test('rebuilding the rollups from raw rows reproduces the live ones exactly, and the cap holds after it', async () => {
    const live = await runtime.store.readRollups(experimentId);
    const counts = await runtime.store.rebuildRollups(experimentId);
    assert.equal(counts.results, 6);
    const rebuilt = await runtime.store.readRollups(experimentId);
    const rows = (r: Rollups) =>
      r.metrics
        .map(
          (m) =>
            `${m.version}/${m.variantKey}/${m.metric}/${m.kind} n=${m.n} sum=${m.sum} ss=${m.sumSquares}`,
        )
        .sort();
    assert.equal(new Set(live.metrics.map((m) => m.metric)).size, cap);
    assert.deepEqual(rows(rebuilt), rows(live));
    const after = await api.post(`/experiment/${slug}/log`, { variantKey: 'A', metrics: { newest: 1 } });
    assert.match(after.json().warning, /'newest'/);
    assert.equal((await analysedNames(slug)).length, cap);
  });

  test('names sent as strings take no place under the cap', async () => {
    const other = (await api.createExperiment()).slug;
    await api.log(other, { variantKey: 'A', metrics: metrics(0, cap - 1, 1) });
    await api.log(other, { variantKey: 'A', metrics: { text: 'a string', last: 1 } });
    const names = await analysedNames(other);
    assert.equal(names.length, cap);
    assert.ok(names.includes('last') && !names.includes('text'));
  });
});
