// runDataset and the dataset/run management calls (issue 40) against a real server process: 200 items ×
// 2 variants × 3 trials = 1,200 pairs through a proxy that answers one log 503 without forwarding it and
// drops the answer of another after the server committed it; retried throws, failures that are never
// logged, progress (a function, lines on stderr, an updating TTY line), the server's comparison, and every
// logged pair stored exactly once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AgentSplit, AgentSplitError, type DatasetItem, type RunProgress } from '../src/index.js';
import { type LogProxy, startLogProxy } from './log-proxy.js';
import { memoryLogger, ROOT_KEY, startServer, type TestServer } from './server.js';

const ITEMS = 200;
const TRIALS = 3;
const FLAKY = new Set(['q10', 'q20', 'q30']); // the first call of each (variant, item) throws
const BROKEN = new Set(['q50', 'q51']); // every call throws
const DROPPED = '/careful/q7/2'; // the proxy forwards this log, then drops the answer
const REFUSED = '/plain/q9/1'; // the proxy answers this log 503 without forwarding it

let server: TestServer;
let proxy: LogProxy;

before(async () => {
  server = await startServer();
  proxy = await startLogProxy(server.baseUrl, { refuse: REFUSED, drop: DROPPED });
});

after(async () => {
  proxy?.close();
  await server?.stop();
});

function client(baseUrl = server.baseUrl): AgentSplit {
  return new AgentSplit({ baseUrl, apiKey: ROOT_KEY, logger: memoryLogger(), flushOnExit: false });
}

/** A seeded uniform in [0, 1) (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const items = Array.from({ length: ITEMS }, (_, i) => ({
  id: `q${i}`,
  input: { question: `question ${i}` },
  expected: { answer: `answer ${i}` },
  metadata: { level: i % 7 },
}));

type Payload = { style: 'plain' | 'careful' };

test('the dataset and run calls answer what the server has', async () => {
  const c = client();
  await c.createExperiment({
    slug: 'answers',
    status: 'running',
    variants: [
      { key: 'plain', payload: { style: 'plain' }, trafficPercent: 50 },
      { key: 'careful', payload: { style: 'careful' }, trafficPercent: 50 },
    ],
    metrics: [
      { name: 'correct', direction: 'increase', role: 'primary' },
      { name: 'score', direction: 'increase', role: 'secondary' },
    ],
  });
  const created = await c.createDataset('questions', items, { description: '200 questions' });
  assert.deepEqual([created.name, created.version, created.items], ['questions', 1, ITEMS]);
  assert.equal(created.description, '200 questions');
  const small = await c.createDataset('small', items.slice(0, 3));
  const change = await c.addItems('small', [{ id: 'extra', input: { question: 'extra' } }]);
  assert.deepEqual([change.version, change.items, change.added, change.changed], [2, 4, 1, 0]);
  assert.deepEqual(await c.getDataset('small'), (await server.api('GET', '/datasets/small')).body);
  assert.deepEqual(
    (await c.listDatasets()).map((d) => [d.name, d.version]),
    [
      ['questions', 1],
      ['small', 2],
    ],
  );
  assert.equal(small.version, 1);
  const run = await c.openRun('answers', 'small', { version: 1, trials: 2, variants: ['careful', 'plain'] });
  assert.deepEqual(
    [run.experiment, run.dataset, run.version, run.items, run.trials, run.variants],
    ['answers', 'small', 1, 3, 2, ['careful', 'plain']],
  );
  assert.deepEqual(await c.getRun(run.id), run);
  assert.deepEqual(await c.listRuns('answers'), [run]);
  const comparison = await c.runComparison(run.id, { control: 'plain', alpha: 0.1 });
  assert.deepEqual(
    comparison,
    (await server.api('GET', `/runs/${run.id}/comparison?control=plain&alpha=0.1`)).body,
  );
  assert.equal(comparison.run.id, run.id);
  await assert.rejects(
    c.getRun('no-such-run'),
    (e: unknown) => e instanceof AgentSplitError && e.status === 404,
  );
  await assert.rejects(
    c.createDataset('small', []),
    (e: unknown) => e instanceof AgentSplitError && e.status === 409,
  );
  await c.close();
});

test('runDataset: 1,200 pairs, retried throws, failures not logged, each log stored once', async (t) => {
  const c = client(proxy.url);
  const seen = proxy.seen;
  const random = seeded(40);
  const calls = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  let firstItem: DatasetItem | undefined;
  const payloads = new Set<string>();
  const progress: RunProgress[] = [];
  const started = Date.now();
  const result = await c.runDataset<Payload>(
    'answers',
    'questions',
    async (payload, item) => {
      const key = `${payload.style}/${item.id}`;
      const n = (calls.get(key) ?? 0) + 1;
      calls.set(key, n);
      payloads.add(JSON.stringify(payload));
      if (item.id === 'q0') firstItem = item;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      if (BROKEN.has(item.id)) throw new Error(`cannot answer ${item.id}`);
      if (FLAKY.has(item.id) && n === 1) throw new Error('model overloaded');
      const careful = payload.style === 'careful';
      const level = (item.metadata as { level: number }).level;
      const correct = random() < (careful ? 0.85 : 0.55);
      if (item.id.endsWith('3')) return { correct, score: level + (careful ? 1 : 0) + random() };
      return {
        metrics: { correct, score: level + (careful ? 1 : 0) + random() },
        output: { answer: `${payload.style} answers ${item.id}` },
      };
    },
    { trials: TRIALS, backoffMs: 0, progress: (p) => progress.push(p) },
  );
  const seconds = (Date.now() - started) / 1000;
  const total = ITEMS * 2 * TRIALS;
  const failed = BROKEN.size * 2 * TRIALS;
  const fnCalls = [...calls.values()].reduce((s, n) => s + n, 0);
  t.diagnostic(
    `${total} pairs, ${fnCalls} calls of fn, ${result.logged} logged, ${result.failures.length} failed, ` +
      `${FLAKY.size * 2} retried after a throw, max ${maxInFlight} at once, ${seconds.toFixed(2)} s`,
  );

  // fn got the variants' payloads and the items exactly as the server lists them
  assert.deepEqual([...payloads].sort(), ['{"style":"careful"}', '{"style":"plain"}']);
  assert.deepEqual(firstItem, { ...items[0], since: 1 });
  assert.ok(maxInFlight <= 8 && maxInFlight > 1, `at most 8 at once (${maxInFlight})`);
  // calls: one per pair, one more for each flaky (variant, item), three for each broken pair
  assert.equal(fnCalls, total + FLAKY.size * 2 + failed * 2);

  // progress: one call per pair, done rising by one up to the total, the last {1200, 1200, 12}
  assert.equal(progress.length, total);
  assert.deepEqual(
    progress.map((p) => p.done),
    Array.from({ length: total }, (_, i) => i + 1),
  );
  assert.ok(progress.every((p, i) => p.failed >= (progress[i - 1]?.failed ?? 0)));
  assert.deepEqual(progress.at(-1), { done: total, total, failed });

  // failures: the broken pairs, three attempts each, never logged
  assert.equal(result.failures.length, failed);
  for (const f of result.failures) {
    assert.ok(BROKEN.has(f.itemId), f.itemId);
    assert.equal(f.attempts, 3);
    assert.equal(f.error, `cannot answer ${f.itemId}`);
  }
  assert.deepEqual(
    result.failures.slice(0, 6).map((f) => [f.variant, f.itemId, f.trial]),
    [
      ['plain', 'q50', 1],
      ['careful', 'q50', 1],
      ['plain', 'q50', 2],
      ['careful', 'q50', 2],
      ['plain', 'q50', 3],
      ['careful', 'q50', 3],
    ],
  );
  assert.equal(result.logged, total - failed);

  // the comparison is the server's, of this run
  const run = result.run;
  assert.deepEqual(
    [run.dataset, run.version, run.items, run.trials, run.variants],
    ['questions', 1, ITEMS, TRIALS, ['plain', 'careful']],
  );
  const direct = await server.api('GET', `/runs/${run.id}/comparison?control=plain`);
  assert.deepEqual(result.comparison, direct.body);
  const cmp = result.comparison;
  assert.equal(cmp.run.id, run.id);
  assert.equal(cmp.control, 'plain');
  assert.equal(cmp.items, ITEMS - BROKEN.size);
  assert.deepEqual(
    cmp.variants.map((v) => [v.key, v.results, v.items]),
    [
      ['plain', (ITEMS - BROKEN.size) * TRIALS, ITEMS - BROKEN.size],
      ['careful', (ITEMS - BROKEN.size) * TRIALS, ITEMS - BROKEN.size],
    ],
  );
  for (const name of ['correct', 'score']) {
    const m = cmp.metrics.find((x) => x.name === name)!.comparisons[0]!;
    assert.equal(m.variant, 'careful');
    assert.equal(m.better, true, `${name}: ${JSON.stringify(m.difference)}`);
  }
  assert.match(cmp.verdict.summary, /^careful beats plain on `correct`/);

  // every logged pair stored exactly once: none of the failures, no duplicates of the retried logs
  const stored: Array<{ variantKey: string; run: { itemId: string; trial: number }; output: unknown }> = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = await server.api('GET', `/experiment/answers/results?run=${run.id}&limit=1000${q}`);
    assert.equal(page.status, 200);
    stored.push(...page.body.results);
    cursor = page.body.nextCursor;
  } while (cursor !== null);
  assert.equal(stored.length, result.logged);
  const triples = stored.map((r) => `${r.variantKey}/${r.run.itemId}/${r.run.trial}`);
  assert.equal(new Set(triples).size, stored.length, 'no pair stored twice');
  assert.ok(!stored.some((r) => BROKEN.has(r.run.itemId)));
  for (const id of FLAKY) assert.equal(triples.filter((x) => x.includes(`/${id}/`)).length, 2 * TRIALS);
  const one = stored.find((r) => r.variantKey === 'careful' && r.run.itemId === 'q1');
  assert.deepEqual(one?.output, { answer: 'careful answers q1' });

  // the proxy: every log with its own key; the dropped answer and the 503 retried with the same key
  const logKeys = [...seen.keys()].filter((k) => k.startsWith(`${run.id}/`));
  assert.equal(logKeys.length, result.logged);
  const dropped = seen.get(`${run.id}${DROPPED}`)!;
  assert.deepEqual(dropped, [
    { status: 200, replayed: false, forwarded: true },
    { status: 200, replayed: true, forwarded: true },
  ]);
  assert.deepEqual(seen.get(`${run.id}${REFUSED}`), [
    { status: 503, replayed: false, forwarded: false },
    { status: 200, replayed: false, forwarded: true },
  ]);
  assert.equal(triples.filter((x) => `/${x}` === DROPPED).length, 1, 'the dropped log is stored once');
  assert.equal(triples.filter((x) => `/${x}` === REFUSED).length, 1);
  const others = [...seen.entries()].filter(
    ([k]) => k.startsWith(`${run.id}/`) && !k.endsWith(DROPPED) && !k.endsWith(REFUSED),
  );
  assert.ok(others.every(([, s]) => s.length === 1 && s[0]!.status === 200));
  assert.ok(seconds < 60, `${seconds} s`);
  await c.close();
});

/** Runs `body` with process.stderr.write captured and isTTY set as given; answers what was written. */
async function capture(isTTY: boolean, body: () => Promise<unknown>): Promise<string[]> {
  const stderr = process.stderr;
  const write = stderr.write;
  const had = Object.getOwnPropertyDescriptor(stderr, 'isTTY');
  const written: string[] = [];
  stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof stderr.write;
  Object.defineProperty(stderr, 'isTTY', { value: isTTY, configurable: true, writable: true });
  try {
    await body();
  } finally {
    stderr.write = write;
    if (had === undefined) delete (stderr as { isTTY?: boolean }).isTTY;
    else Object.defineProperty(stderr, 'isTTY', had);
  }
  return written.filter((s) => s.includes('run '));
}

test('default progress: a line on stderr per 10% and at the end; an updating line on a TTY', async () => {
  const c = client();
  let id = '';
  const lines = await capture(false, async () => {
    id = (await c.runDataset('answers', 'questions', () => ({ correct: true }))).run.id;
  });
  assert.deepEqual(
    lines,
    Array.from({ length: 10 }, (_, i) => `run ${id}: ${(i + 1) * 40}/400 done, 0 failed\n`),
  );
  const tty = await capture(true, async () => {
    id = (
      await c.runDataset(
        'answers',
        'small',
        (_p, item) => {
          if (item.id === 'extra') throw new Error('no');
          return { correct: false };
        },
        { backoffMs: 0 },
      )
    ).run.id;
  });
  assert.ok(tty.length >= 1 && tty.every((s) => s.startsWith(`\rrun ${id}: `)), JSON.stringify(tty));
  assert.equal(tty.at(-1), `\rrun ${id}: 8/8 done, 2 failed\n`);
  const quiet = await capture(false, () =>
    c.runDataset('answers', 'small', () => ({ correct: true }), { progress: false }),
  );
  assert.deepEqual(quiet, []);
  await c.close();
});

test('a log the server refuses (4xx) is a failure of its pair, not retried; setup errors reject', async () => {
  const c = client();
  let calls = 0;
  const result = await c.runDataset(
    'answers',
    'small',
    (_payload, item) => {
      calls++;
      if (item.id === 'q1') return { metrics: { ['x'.repeat(200)]: 1 } }; // a metric name the server refuses
      if (item.id === 'q2') return 'not an object' as never;
      return { metrics: { correct: true }, output: 'plain text', input: 'asked' };
    },
    { progress: false, backoffMs: 0 },
  );
  assert.equal(calls, 8, 'neither refusal calls fn again');
  assert.deepEqual(
    result.failures.map((f) => [f.variant, f.itemId, f.attempts]),
    [
      ['plain', 'q1', 1],
      ['careful', 'q1', 1],
      ['plain', 'q2', 1],
      ['careful', 'q2', 1],
    ],
  );
  assert.match(result.failures[0]!.error, /^log answered 400 /);
  assert.match(result.failures[2]!.error, /must return an object/);
  assert.equal(result.logged, 4);
  const stored = await server.api('GET', `/experiment/answers/results?run=${result.run.id}`);
  assert.deepEqual(stored.body.results[0].output, { value: 'plain text' });
  assert.deepEqual(stored.body.results[0].input, { value: 'asked' });

  let called = false;
  const fn = () => {
    called = true;
    return { correct: true };
  };
  await assert.rejects(
    c.runDataset('answers', 'no-such-dataset', fn),
    (e: unknown) => e instanceof AgentSplitError && e.status === 404,
  );
  await assert.rejects(
    c.runDataset('no-such-experiment', 'small', fn),
    (e: unknown) => e instanceof AgentSplitError && e.status === 404,
  );
  await assert.rejects(
    c.runDataset('answers', 'small', fn, { trials: 0 }),
    (e: unknown) => e instanceof AgentSplitError && e.status === 400,
  );
  const down = new AgentSplit({ baseUrl: 'http://127.0.0.1:9', apiKey: ROOT_KEY, logger: memoryLogger() });
  await assert.rejects(
    down.runDataset('answers', 'small', fn),
    (e: unknown) => e instanceof AgentSplitError && e.status === 0,
  );
  assert.equal(called, false);
  await down.close();
  await c.close();
});
