// Who enters (issue 35, ADR 0038) through a real server: targeting, coverage, layers, overrides and the
// default variant on assign, OFREP, preview; what is refused when saved; what is never counted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

let dir: string;
let rt: TestRuntime;
let api: Api;

const ab = [
  { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
];

before(async () => {
  dir = makeTempDir();
  rt = await startTestRuntime(dir, 'targeting');
  api = rt.api;
});

after(async () => {
  await rt?.close();
  removeTempDir(dir);
});

async function create(fields: Record<string, unknown>): Promise<string> {
  const res = await api.post('/experiments', {
    slug: uniqueSlug('who'),
    status: 'running',
    variants: ab,
    ...fields,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().slug;
}

async function assign(slug: string, userId: string, context?: Record<string, unknown>) {
  const res = await api.post(`/experiment/${slug}/assign`, context ? { userId, context } : { userId });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

async function preview(slug: string, userId: string, context?: Record<string, unknown>) {
  const res = await api.post(`/experiment/${slug}/preview`, context ? { userId, context } : { userId });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

/** Waits until `slug` has `n` exposures (they are written in batches), then answers them. */
async function exposuresWhen(slug: string, n: number) {
  const until = Date.now() + 20_000;
  for (;;) {
    const rows = await rt.exposuresOf(slug);
    if (rows.length >= n || Date.now() > until) return rows;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('targeting', { skip: SKIP_BACKEND }, () => {
  test('a targeted unit enters; others get the default variant, inExperiment false, reason targeting, no exposure', async () => {
    const slug = await create({
      assignment: 'sticky',
      targeting: { plan: { $in: ['pro', 'team'] } },
      defaultVariant: 'B',
    });
    const out = await assign(slug, 'free-user', { plan: 'free' });
    assert.deepEqual(Object.keys(out), ['variant', 'payload', 'assignmentId', 'inExperiment', 'reason']);
    assert.deepEqual(
      [out.variant, out.payload, out.inExperiment, out.reason],
      ['B', { prompt: 'b' }, false, 'targeting'],
    );
    assert.match(out.assignmentId, /\.1\.x1\./, 'the id marks the unit as kept out');
    const missing = await assign(slug, 'no-context');
    assert.equal(missing.reason, 'targeting', 'a comparison on a missing attribute fails');
    const inside = await assign(slug, 'pro-user', { plan: 'pro' });
    assert.deepEqual(Object.keys(inside), ['variant', 'payload', 'assignmentId', 'inExperiment']);
    assert.equal(inside.inExperiment, true);
    const rows = await exposuresWhen(slug, 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      (await rt.exposuresOf(slug)).map((e) => e.userId),
      ['pro-user'],
      'only the entered unit is an exposure',
    );
    assert.equal(rows.length, 1);
  });

  test('userId is an attribute unless the context sets it', async () => {
    const slug = await create({ assignment: 'sticky', targeting: { userId: { $regex: '^vip-' } } });
    assert.equal((await assign(slug, 'vip-1')).inExperiment, true);
    assert.equal((await assign(slug, 'vip-1', { userId: 'someone' })).reason, 'targeting');
    assert.equal((await assign(slug, 'plain', { userId: 'vip-2' })).inExperiment, true);
  });

  test('an invalid condition is refused when saved with a 400 naming its path', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ plan: { $inn: ['pro'] } }, /targeting\.plan\.\$inn: unknown operator \$inn/],
      [{ plan: { $in: 'pro' } }, /targeting\.plan\.\$in needs an array/],
      [{ email: { $regex: '(unclosed' } }, /targeting\.email\.\$regex: the regex is invalid/],
      [{ $or: { a: 1 } }, /targeting\.\$or needs an array of conditions/],
      [['plan'], /targeting must be (an )?object/],
      [{ userId: { $inGroup: 'nobody-made-this' } }, /saved groups that do not exist: nobody-made-this/],
    ];
    for (const [targeting, message] of cases) {
      assertError(
        await api.post('/experiments', { slug: uniqueSlug('bad'), variants: ab, targeting }),
        400,
        message,
      );
    }
    const slug = await create({});
    assertError(
      await api.patch(`/experiment/${slug}`, { targeting: { a: { $size: 'x' } } }),
      400,
      /targeting\.a\.\$size/,
    );
    assertError(
      await api.patch(`/experiment/${slug}`, { overrides: [{ variant: 'Z', userIds: ['qa'] }] }),
      400,
      /overrides\[0\]\.variant must name a variant \(A, B\)/,
    );
    assertError(
      await api.patch(`/experiment/${slug}`, {
        overrides: [{ variant: 'A', condition: { x: { $bad: 1 } } }],
      }),
      400,
      /overrides\[0\]\.condition\.x\.\$bad/,
    );
    assertError(
      await api.patch(`/experiment/${slug}`, { defaultVariant: 'Z' }),
      400,
      /defaultVariant must name a variant/,
    );
    assertError(
      await api.patch(`/experiment/${slug}`, { layer: { key: 'l', range: [0.5, 0.2] } }),
      400,
      /layer\.range/,
    );
    assertError(await api.patch(`/experiment/${slug}`, { coverage: 101 }), 400, /coverage/);
  });

  test('a pathological regex ((a+)+$ on 50 a and a b) is answered at once by assign and preview', async () => {
    const slug = await create({ targeting: { text: { $regex: '(a+)+$' } } });
    const text = `${'a'.repeat(50)}b`;
    const started = performance.now();
    const answer = await assign(slug, 'u', { text });
    const shown = await preview(slug, 'u', { text });
    const ms = performance.now() - started;
    assert.deepEqual([answer.inExperiment, answer.reason], [false, 'targeting'], 'no run of a ends the text');
    assert.equal(shown.inExperiment, false);
    assert.equal((await assign(slug, 'u', { text: 'aaaa' })).inExperiment, true);
    assert.ok(ms < 1000, `${ms} ms`);
  });

  test('changing targeting, coverage or layer makes a new version; overrides and the default do not', async () => {
    const slug = await create({});
    const v = async (body: Record<string, unknown>) => {
      const res = await api.patch(`/experiment/${slug}`, body);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().version;
    };
    assert.equal(await v({ targeting: { plan: 'pro' } }), 2);
    assert.equal(await v({ targeting: { plan: 'pro' } }), 2, 'the same condition is no change');
    assert.equal(await v({ coverage: 50 }), 3);
    assert.equal(await v({ layer: { key: uniqueSlug('l'), range: [0, 0.5] } }), 4);
    assert.equal(await v({ overrides: [{ variant: 'B', userIds: ['qa'] }], defaultVariant: 'B' }), 4);
    const history = (await api.get(`/events?experiment=${slug}`)).json();
    const changed = history.events.filter((e: { type: string }) => e.type === 'experiment.updated');
    assert.ok(
      changed.some((e: { data: { changes?: Record<string, unknown> } }) =>
        JSON.stringify(e.data).includes('targeting'),
      ),
    );
  });
});

describe('overrides, coverage, layers', { skip: SKIP_BACKEND }, () => {
  test('overrides serve their variant first, marked, never exposures; results with their ids are stored, never counted', async () => {
    const slug = await create({
      assignment: 'sticky',
      targeting: { plan: 'pro' },
      overrides: [
        { variant: 'B', userIds: ['qa-1'] },
        { variant: 'A', condition: { email: { $regex: '@qa\\.example$' } } },
      ],
    });
    const qa = await assign(slug, 'qa-1', { plan: 'free' });
    assert.deepEqual([qa.variant, qa.inExperiment, qa.reason], ['B', false, 'override']);
    const byCondition = await assign(slug, 'x', { email: 'me@qa.example' });
    assert.deepEqual([byCondition.variant, byCondition.reason], ['A', 'override']);
    const entered = await assign(slug, 'real', { plan: 'pro' });
    await exposuresWhen(slug, 1);
    const log = async (a: { variant: string; assignmentId: string }, userId: string) => {
      const res = await api.post(`/experiment/${slug}/log`, {
        variantKey: a.variant,
        assignmentId: a.assignmentId,
        userId,
        metrics: { rating: 5 },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    await log(qa, 'qa-1');
    await log(entered, 'real');
    const fb = await api.post(`/experiment/${slug}/feedback`, {
      assignmentId: qa.assignmentId,
      metrics: { thumbs: true },
    });
    assert.equal(fb.statusCode, 200, fb.body);
    assert.equal((await api.allResults(slug)).length, 2, 'both results are stored');
    const analysis = (await api.get(`/experiment/${slug}/analysis`)).json();
    assert.deepEqual(analysis.exposures, {
      A: entered.variant === 'A' ? 1 : 0,
      B: entered.variant === 'B' ? 1 : 0,
    });
    const rating = analysis.metrics.find((m: { name: string }) => m.name === 'rating');
    const n = rating.variants.reduce((s: number, v: { n: number }) => s + v.n, 0);
    assert.equal(n, 1, 'only the entered unit counts');
    assert.equal(
      analysis.metrics.find((m: { name: string }) => m.name === 'thumbs'),
      undefined,
      'feedback on an overridden unit is not analysed',
    );
    // A rebuild from the stored rows leaves them out too.
    const rebuilt = await rt.store.rebuildRollups();
    assert.ok(rebuilt.results >= 2);
    const again = (await api.get(`/experiment/${slug}/analysis`)).json();
    assert.equal(
      again.metrics
        .find((m: { name: string }) => m.name === 'rating')
        .variants.reduce((s: number, v: { n: number }) => s + v.n, 0),
      1,
    );
  });

  test('coverage: raising it only adds units, and the entered split follows the weights', async () => {
    const slug = await create({
      assignment: 'sticky',
      coverage: 20,
      variants: [
        { key: 'A', payload: {}, trafficPercent: 30 },
        { key: 'B', payload: {}, trafficPercent: 70 },
      ],
    });
    const ids = Array.from({ length: 400 }, (_, i) => `cov-${i}`);
    const before = await Promise.all(ids.map((id) => preview(slug, id)));
    const res = await api.patch(`/experiment/${slug}`, { coverage: 60 });
    assert.equal(res.json().version, 2);
    const afterRaise = await Promise.all(ids.map((id) => preview(slug, id)));
    let entered = 0;
    for (let i = 0; i < ids.length; i++) {
      if (!before[i].inExperiment) continue;
      entered++;
      assert.equal(afterRaise[i].inExperiment, true, `${ids[i]} left when coverage rose`);
      assert.equal(afterRaise[i].variant, before[i].variant, `${ids[i]} moved variant`);
    }
    const now = afterRaise.filter((p) => p.inExperiment).length;
    assert.ok(entered > 40 && entered < 130, `${entered} of 400 at 20%`);
    assert.ok(now > entered, `${now} at 60% against ${entered} at 20%`);
    assert.ok(
      afterRaise.filter((p) => !p.inExperiment).every((p) => p.reason === 'coverage' && p.variant === 'A'),
    );
  });

  test('layers: overlapping running experiments are a 409 naming the other and the free ranges', async () => {
    const key = uniqueSlug('layer');
    const first = await create({ layer: { key, range: [0, 0.5] }, assignment: 'sticky' });
    const clash = await api.post('/experiments', {
      slug: uniqueSlug('clash'),
      status: 'running',
      variants: ab,
      layer: { key, range: [0.4, 0.8] },
    });
    assertError(
      clash,
      409,
      new RegExp(
        `overlaps running experiment '${first}' \\(\\[0, 0\\.5\\)\\); free ranges of '${key}': \\[0\\.5, 1\\)`,
      ),
    );
    const draft = await api.post('/experiments', {
      slug: uniqueSlug('later'),
      variants: ab,
      layer: { key, range: [0.4, 0.8] },
    });
    assert.equal(draft.statusCode, 201, 'a draft takes no range yet');
    assertError(await api.patch(`/experiment/${draft.json().slug}`, { status: 'running' }), 409, /overlaps/);
    const second = await create({ layer: { key, range: [0.5, 1] }, assignment: 'sticky' });
    const layer = (await api.get(`/layers/${key}`)).json();
    assert.deepEqual(layer.free, []);
    assert.deepEqual(
      layer.experiments.map((e: { experiment: string; status: string }) => [e.experiment, e.status]),
      [
        [first, 'running'],
        [draft.json().slug, 'draft'],
        [second, 'running'],
      ],
    );
    // Every unit is in at most one of the two.
    for (let i = 0; i < 300; i++) {
      const [a, b] = await Promise.all([assign(first, `l-${i}`), assign(second, `l-${i}`)]);
      assert.ok(!(a.inExperiment && b.inExperiment), `l-${i} entered both`);
      assert.ok(a.inExperiment || b.inExperiment, `l-${i} entered neither though the layer is full`);
      if (!a.inExperiment) assert.equal(a.reason, 'layer');
    }
    const empty = (await api.get(`/layers/${uniqueSlug('none')}`)).json();
    assert.deepEqual(empty.free, [[0, 1]]);
  });

  test('OFREP answers the entry reasons: SPLIT, TARGETING_MATCH for an override, DEFAULT when kept out', async () => {
    const slug = await create({ targeting: { plan: 'pro' }, overrides: [{ variant: 'B', userIds: ['qa'] }] });
    const ofrep = async (context: Record<string, unknown>) => {
      const res = await api.post(`/ofrep/v1/evaluate/flags/${slug}`, { context });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const split = await ofrep({ targetingKey: 'u1', plan: 'pro' });
    assert.deepEqual([split.reason, split.metadata.inExperiment], ['SPLIT', true]);
    const qa = await ofrep({ targetingKey: 'qa' });
    assert.deepEqual([qa.reason, qa.variant, qa.metadata.entryReason], ['TARGETING_MATCH', 'B', 'override']);
    const out = await ofrep({ targetingKey: 'u2', plan: 'free' });
    assert.deepEqual(
      [out.reason, out.variant, out.metadata.inExperiment, out.metadata.entryReason],
      ['DEFAULT', 'A', false, 'targeting'],
    );
    const bulk = await api.post('/ofrep/v1/evaluate/flags', {
      context: { targetingKey: 'u2', plan: 'free' },
    });
    const flag = bulk.json().flags.find((f: { key: string }) => f.key === slug);
    assert.deepEqual([flag.reason, flag.metadata.entryReason], ['DEFAULT', 'targeting']);
  });

  test('preview says which clause decided, for any status, and records nothing', async () => {
    const slug = await create({
      status: 'draft',
      assignment: 'sticky',
      targeting: { plan: { $in: ['pro', 'team'] }, country: 'DE' },
    });
    const p = await preview(slug, 'u', { plan: 'free', country: 'DE' });
    assert.equal(p.reason, 'targeting');
    assert.match(p.explanation, /^targeting: `plan` is "free", rule wants \{"\$in":\["pro","team"\]\}/);
    assert.match(p.explanation, /the experiment is draft/);
    const ok = await preview(slug, 'u', { plan: 'pro', country: 'DE' });
    assert.match(ok.explanation, /^split: targeting let 'u' in; 'u' hashes to 0\.\d+, in [AB]'s range/);
    assert.deepEqual(await rt.exposuresOf(slug), []);
    assertError(
      await api.post(`/experiment/${uniqueSlug('nope')}/preview`, { userId: 'u' }),
      404,
      /no experiment/,
    );
  });
});
