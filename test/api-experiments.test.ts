// Managing experiments (issue 2, section 2): create, list, read, change, delete, through app.inject.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  type Api,
  assertError,
  type Experiment,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

let dir: string;
let runtime: TestRuntime;
let api: Api;
/** The runtime's random source; tests that need exact picks set it. */
let draw: () => number = Math.random;

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return; // the suites below are skipped too
  runtime = await startTestRuntime(dir, 'experiments', { random: () => draw() });
  api = runtime.api;
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

const ab = [
  { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
];

function createBody(fields: Record<string, unknown> = {}) {
  return { slug: uniqueSlug(), variants: ab, ...fields };
}

async function expectCreateError(fields: Record<string, unknown>, message: RegExp): Promise<void> {
  assertError(await api.post('/experiments', createBody(fields)), 400, message);
}

/** An experiment moved along `path` from draft. */
async function inStatus(path: string[]): Promise<Experiment> {
  const created = await api.createExperiment({ status: 'draft' });
  for (const status of path) await api.setStatus(created.slug, status);
  return created;
}

const PATH_TO: Record<string, string[]> = {
  draft: [],
  running: ['running'],
  paused: ['running', 'paused'],
  completed: ['running', 'completed'],
  archived: ['archived'],
};

describe('POST /experiments', { skip: SKIP_BACKEND }, () => {
  test('answers 201 with every field and the defaults (draft, inactive, random, seed = slug, version 1)', async () => {
    const slug = uniqueSlug('defaults');
    const res = await api.post('/experiments', { slug, variants: ab });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'active',
      'assignment',
      'coverage',
      'createdAt',
      'decision',
      'defaultVariant',
      'description',
      'guardrailAction',
      'layer',
      'metrics',
      'minimumUnits',
      'name',
      'overrides',
      'releasedVariant',
      'seed',
      'segments',
      'slug',
      'status',
      'targeting',
      'updatedAt',
      'variants',
      'version',
    ]);
    // Who enters (issue 35): everyone, by default.
    assert.deepEqual(
      [body.targeting, body.coverage, body.layer, body.overrides, body.defaultVariant],
      [null, 100, null, [], null],
    );
    assert.deepEqual(body.metrics, [], 'no metric definitions unless declared');
    assert.deepEqual(body.segments, [], 'no segments unless declared');
    assert.equal(body.guardrailAction, 'notify');
    assert.equal(body.minimumUnits, 100);
    assert.equal(body.slug, slug);
    assert.equal(body.status, 'draft');
    assert.equal(body.active, false);
    assert.equal(body.assignment, 'random');
    assert.equal(body.seed, slug);
    assert.equal(body.version, 1);
    assert.equal(typeof body.name, 'string');
    assert.equal(typeof body.description, 'string');
    assert.deepEqual(body.variants, ab);
    assert.ok(!Number.isNaN(Date.parse(body.createdAt)), body.createdAt);
    assert.equal(body.updatedAt, body.createdAt);
  });

  test('keeps the given name, description, status, assignment mode and seed', async () => {
    const fields = {
      slug: uniqueSlug('given'),
      name: 'Checkout prompt — v2 ✨',
      description: 'Does a friendlier prompt convert better?',
      status: 'running',
      assignment: 'sticky',
      seed: 'my-seed',
      variants: ab,
    };
    const res = await api.post('/experiments', fields);
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(
      { ...body, createdAt: undefined, updatedAt: undefined },
      {
        ...fields,
        active: true,
        metrics: [],
        segments: [],
        guardrailAction: 'notify',
        minimumUnits: 100,
        decision: null,
        releasedVariant: null,
        targeting: null,
        coverage: 100,
        layer: null,
        overrides: [],
        defaultVariant: null,
        version: 1,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
  });

  test('the created experiment is readable with GET /experiment/:slug', async () => {
    const created = await api.createExperiment();
    const res = await api.get(`/experiment/${created.slug}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), created);
  });

  test('a duplicate slug → 409 naming the slug', async () => {
    const created = await api.createExperiment();
    const res = await api.post('/experiments', createBody({ slug: created.slug }));
    assertError(res, 409, new RegExp(created.slug));
    assert.deepEqual((await api.get(`/experiment/${created.slug}`)).json(), created);
  });

  test('two concurrent creates of one slug → one 201 and one 409', async () => {
    const body = createBody();
    const answers = await Promise.all([api.post('/experiments', body), api.post('/experiments', body)]);
    assert.deepEqual(answers.map((res) => res.statusCode).sort(), [201, 409]);
    assertError(answers.find((res) => res.statusCode === 409)!, 409, new RegExp(body.slug));
  });

  test('slug with characters outside A-Za-z0-9._- → 400 naming slug', async () => {
    for (const slug of ['a b', 'a/b', 'é', 'a%2F', 'a:b', 'a\u0000b', 'naïve', '🚀', 'a+b']) {
      await expectCreateError({ slug }, /slug/);
    }
  });

  test('slug longer than 100 characters → 400 naming slug; exactly 100 is accepted', async () => {
    await expectCreateError({ slug: 'a'.repeat(101) }, /slug/);
    const res = await api.post('/experiments', createBody({ slug: `x${'a'.repeat(99)}` }));
    assert.equal(res.statusCode, 201, res.body);
  });

  test("slug starting with '-', '.' or '_' → 400 naming slug", async () => {
    for (const slug of ['-a', '.a', '_a', '..', '.']) await expectCreateError({ slug }, /slug/);
  });

  test('missing, empty or non-string slug → 400 naming slug', async () => {
    assertError(await api.post('/experiments', { variants: ab }), 400, /slug/);
    for (const slug of ['', 5, null]) await expectCreateError({ slug }, /slug/);
  });

  test('0 variants → 400 naming variants', async () => {
    await expectCreateError({ variants: [] }, /variants/);
    assertError(await api.post('/experiments', { slug: uniqueSlug() }), 400, /variants/);
  });

  test('101 variants → 400 naming variants; 100 are accepted', async () => {
    const many = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ key: `v${i}`, payload: {}, trafficPercent: 100 / n }));
    await expectCreateError({ variants: many(101) }, /variants/);
    const res = await api.post('/experiments', createBody({ variants: many(100) }));
    assert.equal(res.statusCode, 201, res.body);
  });

  test('duplicate variant keys → 400 naming the key', async () => {
    await expectCreateError(
      {
        variants: [
          { key: 'A', payload: {}, trafficPercent: 50 },
          { key: 'A', payload: {}, trafficPercent: 50 },
        ],
      },
      /'A'/,
    );
  });

  test('variant keys that are empty, longer than 64 or use other characters → 400 naming key', async () => {
    for (const key of ['', 'k'.repeat(65), 'a b', 'é', 5]) {
      await expectCreateError({ variants: [{ key, payload: {}, trafficPercent: 100 }] }, /key/);
    }
    const res = await api.post(
      '/experiments',
      createBody({ variants: [{ key: 'k'.repeat(64), payload: {}, trafficPercent: 100 }] }),
    );
    assert.equal(res.statusCode, 201, res.body);
  });

  test('a payload that is not a JSON object → 400 naming payload', async () => {
    for (const payload of ['prompt', [], ['a'], 5, null, true]) {
      await expectCreateError({ variants: [{ key: 'A', payload, trafficPercent: 100 }] }, /payload/);
    }
    await expectCreateError({ variants: [{ key: 'A', trafficPercent: 100 }] }, /payload/);
  });

  test('trafficPercent that is not a finite number (string "NaN", null, 1e999) → 400 naming trafficPercent', async () => {
    for (const trafficPercent of ['NaN', '50', null, true]) {
      await expectCreateError({ variants: [{ key: 'A', payload: {}, trafficPercent }] }, /trafficPercent/);
    }
    // 1e999 parses to Infinity: only raw JSON can carry it.
    const raw = `{"slug":"${uniqueSlug()}","variants":[{"key":"A","payload":{},"trafficPercent":1e999}]}`;
    assertError(await api.postRaw('/experiments', raw), 400, /trafficPercent/);
    await expectCreateError({ variants: [{ key: 'A', payload: {} }] }, /trafficPercent/);
  });

  test('negative trafficPercent → 400 naming trafficPercent', async () => {
    await expectCreateError(
      {
        variants: [
          { key: 'A', payload: {}, trafficPercent: -10 },
          { key: 'B', payload: {}, trafficPercent: 110 },
        ],
      },
      /trafficPercent/,
    );
    await expectCreateError(
      {
        variants: [
          { key: 'A', payload: {}, trafficPercent: 100.5 },
          { key: 'B', payload: {}, trafficPercent: -0.5 },
        ],
      },
      /trafficPercent/,
    );
  });

  test('trafficPercent above 100 → 400 naming trafficPercent', async () => {
    await expectCreateError(
      { variants: [{ key: 'A', payload: {}, trafficPercent: 100.0001 }] },
      /trafficPercent/,
    );
  });

  test('trafficPercent summing to other than 100 → 400 naming the sum', async () => {
    await expectCreateError(
      {
        variants: [
          { key: 'A', payload: {}, trafficPercent: 50 },
          { key: 'B', payload: {}, trafficPercent: 49 },
        ],
      },
      /sum/,
    );
    await expectCreateError({ variants: [{ key: 'A', payload: {}, trafficPercent: 0 }] }, /sum/);
    await expectCreateError(
      {
        variants: [
          { key: 'A', payload: {}, trafficPercent: 50 },
          { key: 'B', payload: {}, trafficPercent: 50.000001 },
        ],
      },
      /sum/,
    );
  });

  test('a sum within 1e-9 of 100 is accepted', async () => {
    const thirds = [1, 2, 3].map((i) => ({ key: `t${i}`, payload: {}, trafficPercent: 100 / 3 }));
    assert.equal((await api.post('/experiments', createBody({ variants: thirds }))).statusCode, 201);
    // 7 × (100 / 7) adds up to 100.00000000000001 in floating point.
    const sevenths = Array.from({ length: 7 }, (_, i) => ({
      key: `s${i}`,
      payload: {},
      trafficPercent: 100 / 7,
    }));
    assert.equal((await api.post('/experiments', createBody({ variants: sevenths }))).statusCode, 201);
    const decimals = [33.3, 33.3, 33.4].map((trafficPercent, i) => ({
      key: `d${i}`,
      payload: {},
      trafficPercent,
    }));
    assert.equal((await api.post('/experiments', createBody({ variants: decimals }))).statusCode, 201);
    const near = [
      { key: 'A', payload: {}, trafficPercent: 50 },
      { key: 'B', payload: {}, trafficPercent: 50 + 5e-10 },
    ];
    assert.equal((await api.post('/experiments', createBody({ variants: near }))).statusCode, 201);
  });

  test('an unknown status or assignment mode → 400 naming the allowed values', async () => {
    await expectCreateError({ status: 'live' }, /status.*'draft'/);
    await expectCreateError({ assignment: 'hash' }, /assignment.*'random'.*'sticky'/);
  });

  test('guardrailAction and minimumUnits: kept when given, changed by PATCH, and validated', async () => {
    const body = createBody({ guardrailAction: 'pause', minimumUnits: 20 });
    const res = await api.post('/experiments', body);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().guardrailAction, 'pause');
    assert.equal(res.json().minimumUnits, 20);
    const slug = res.json().slug as string;
    const patched = await api.patch(`/experiment/${slug}`, {
      guardrailAction: 'notify',
      minimumUnits: 500,
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const read = (await api.get(`/experiment/${slug}`)).json();
    assert.equal(read.guardrailAction, 'notify');
    assert.equal(read.minimumUnits, 500);
    const events = (await api.get(`/experiment/${slug}/events`)).json().events;
    assert.deepEqual(events.at(-1).data, {
      before: { guardrailAction: 'pause', minimumUnits: 20 },
      after: { guardrailAction: 'notify', minimumUnits: 500 },
    });
    for (const bad of [{ guardrailAction: 'rollback' }, { minimumUnits: 0 }, { minimumUnits: 2.5 }]) {
      const r = await api.post('/experiments', createBody(bad));
      assertError(r, 400, new RegExp(Object.keys(bad)[0]!));
      const p = await api.patch(`/experiment/${slug}`, bad);
      assertError(p, 400, new RegExp(Object.keys(bad)[0]!));
    }
  });

  test('a body that is not a JSON object → 400', async () => {
    assertError(await api.postRaw('/experiments', '[]'), 400);
    assertError(await api.postRaw('/experiments', '{"slug":'), 400, /JSON/);
  });
});

describe('GET /experiments and GET /experiment/:slug', { skip: SKIP_BACKEND }, () => {
  /** Every page of GET /experiments?<query>. */
  async function allExperiments(query = ''): Promise<Experiment[]> {
    const all: Experiment[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await api.get(`/experiments?limit=100&${query}${after}`);
      assert.equal(res.statusCode, 200, res.body);
      all.push(...res.json().experiments);
      cursor = res.json().nextCursor;
    } while (cursor !== null);
    return all;
  }

  test('GET /experiments lists every experiment; ?status= filters', async () => {
    const draft = await inStatus([]);
    const running = await inStatus(['running']);
    const paused = await inStatus(['running', 'paused']);
    const first = (await api.get('/experiments')).json();
    assert.deepEqual(Object.keys(first), ['experiments', 'nextCursor']);
    const slugs = (await allExperiments()).map((e) => e.slug);
    for (const e of [draft, running, paused]) assert.ok(slugs.includes(e.slug), e.slug);
    for (const status of ['draft', 'running', 'paused']) {
      const listed = await allExperiments(`status=${status}`);
      assert.ok(listed.length > 0);
      assert.ok(
        listed.every((e) => e.status === status && e.active === (status === 'running')),
        status,
      );
    }
    const pausedSlugs = (await allExperiments('status=paused')).map((e) => e.slug);
    assert.ok(pausedSlugs.includes(paused.slug) && !pausedSlugs.includes(running.slug));
  });

  test('GET /experiments is paginated like results: limit, cursor, nextCursor, no repeats or gaps', async () => {
    for (let i = 0; i < 5; i++) await api.createExperiment();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await api.get(`/experiments?limit=2${after}`);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json();
      assert.deepEqual(Object.keys(page).sort(), ['experiments', 'nextCursor']);
      assert.ok(page.experiments.length <= 2);
      seen.push(...page.experiments.map((e: Experiment) => e.slug));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    const all = (await api.get('/experiments?limit=100')).json();
    assert.equal(all.nextCursor, null);
    assert.deepEqual(
      seen,
      all.experiments.map((e: Experiment) => e.slug),
    );
    assert.equal(new Set(seen).size, seen.length);
    assert.ok(pages >= 3);
  });

  test('GET /experiments: a default page of 50; limit above 100, or a bad cursor → 400', async () => {
    assertError(await api.get('/experiments?limit=101'), 400, /limit/);
    assertError(await api.get('/experiments?cursor=nonsense'), 400, /cursor/);
    const results = (await api.get(`/experiment/${(await api.createExperiment()).slug}/results`)).json();
    assert.equal(results.nextCursor, null);
    const fromResults = Buffer.from('r:1').toString('base64url');
    assertError(await api.get(`/experiments?cursor=${fromResults}`), 400, /cursor/);
  });

  test('GET /experiments?status=<unknown> → 400 naming the allowed statuses', async () => {
    assertError(await api.get('/experiments?status=live'), 400, /status.*'running'/);
  });

  test('GET /experiment/:slug of an unknown slug → 404 naming it', async () => {
    assertError(await api.get('/experiment/never-created'), 404, /never-created/);
  });
});

describe('PATCH /experiment/:slug', { skip: SKIP_BACKEND }, () => {
  const allowed: Array<[string, string]> = [
    ['draft', 'running'],
    ['running', 'paused'],
    ['paused', 'running'],
    ['running', 'completed'],
    ['paused', 'completed'],
    ['draft', 'archived'],
    ['running', 'archived'],
    ['paused', 'archived'],
    ['completed', 'archived'],
  ];
  for (const [from, to] of allowed) {
    test(`status ${from} → ${to} is allowed: 200 with active ${to === 'running'}`, async () => {
      const experiment = await inStatus(PATH_TO[from]!);
      const res = await api.patch(`/experiment/${experiment.slug}`, { status: to });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.status, to);
      assert.equal(body.active, to === 'running');
      assert.equal(body.version, experiment.version);
      assert.deepEqual((await api.get(`/experiment/${experiment.slug}`)).json(), body);
    });
  }

  const forbidden: Array<[string, string, string[]]> = [
    ['draft', 'paused', ['running', 'archived']],
    ['draft', 'completed', ['running', 'archived']],
    ['running', 'draft', ['paused', 'completed', 'archived']],
    ['paused', 'draft', ['running', 'completed', 'archived']],
    ['completed', 'running', ['archived']],
    ['completed', 'paused', ['archived']],
    ['archived', 'running', []],
    ['archived', 'draft', []],
  ];
  for (const [from, to, allowedNext] of forbidden) {
    test(`status ${from} → ${to} is forbidden: 409 naming the allowed ones`, async () => {
      const experiment = await inStatus(PATH_TO[from]!);
      const message = assertError(await api.patch(`/experiment/${experiment.slug}`, { status: to }), 409);
      assert.match(message, new RegExp(from));
      assert.match(message, new RegExp(to));
      for (const next of allowedNext) assert.match(message, new RegExp(next), message);
      assert.equal((await api.get(`/experiment/${experiment.slug}`)).json().status, from);
    });
  }

  test('an archived experiment cannot be changed: variants, name or status → 409, nothing changes', async () => {
    const experiment = await inStatus(PATH_TO.archived!);
    for (const change of [
      { variants: [{ key: 'C', payload: {}, trafficPercent: 100 }] },
      { name: 'renamed' },
      { description: 'edited' },
      { status: 'archived' },
    ]) {
      assertError(
        await api.patch(`/experiment/${experiment.slug}`, change),
        409,
        /archived and can no longer be changed/,
      );
    }
    const after = (await api.get(`/experiment/${experiment.slug}`)).json();
    assert.deepEqual(
      { ...after },
      { ...experiment, status: 'archived', active: false, updatedAt: after.updatedAt },
    );
    assert.equal(after.version, 1);
  });

  test('PATCH naming fields that cannot be changed (active, version, …) → 400 naming them, nothing changes', async () => {
    const created = await api.createExperiment();
    const message = assertError(
      await api.patch(`/experiment/${created.slug}`, { active: false, version: 7, name: 'x' }),
      400,
      /cannot be changed: active .*version /,
    );
    assert.doesNotMatch(message, /name/);
    assertError(await api.patch(`/experiment/${created.slug}`, { seed: 'other' }), 400, /seed/);
    assert.deepEqual((await api.get(`/experiment/${created.slug}`)).json(), created);
  });

  test('name and description change without bumping version', async () => {
    const created = await api.createExperiment();
    const res = await api.patch(`/experiment/${created.slug}`, { name: 'New name', description: 'Why' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.name, 'New name');
    assert.equal(body.description, 'Why');
    assert.equal(body.version, 1);
    assert.ok(Date.parse(body.updatedAt) >= Date.parse(created.updatedAt));
  });

  test('changing variants bumps version, and the very next assign uses the new weights', async () => {
    const created = await api.createExperiment();
    draw = () => 0.99;
    try {
      assert.equal((await api.assign(created.slug)).variant, 'B');
      const res = await api.patch(`/experiment/${created.slug}`, {
        variants: [
          { key: 'A', payload: { prompt: 'a2' }, trafficPercent: 100 },
          { key: 'B', payload: { prompt: 'b' }, trafficPercent: 0 },
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().version, 2);
      const next = await api.assign(created.slug);
      assert.deepEqual(
        { variant: next.variant, payload: next.payload },
        { variant: 'A', payload: { prompt: 'a2' } },
      );
      assert.equal((await api.get(`/experiment/${created.slug}`)).json().version, 2);
    } finally {
      draw = Math.random;
    }
  });

  test('changing only a payload bumps version too', async () => {
    const created = await api.createExperiment();
    const variants = [ab[0], { ...ab[1], payload: { prompt: 'b, reworded' } }];
    const res = await api.patch(`/experiment/${created.slug}`, { variants });
    assert.equal(res.json().version, 2);
    assert.deepEqual(res.json().variants, variants);
  });

  test('sending the same variants again does not bump version', async () => {
    const created = await api.createExperiment();
    const res = await api.patch(`/experiment/${created.slug}`, { variants: created.variants });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().version, 1);
  });

  test('results and exposures record the experimentVersion they were made under', async () => {
    const created = await api.createExperiment();
    const before1 = await api.assign(created.slug, { userId: 'v1-user' });
    const log1 = await api.log(created.slug, { variantKey: 'A', userId: 'v1-user' });
    await api.patch(`/experiment/${created.slug}`, {
      variants: [
        { key: 'A', payload: {}, trafficPercent: 10 },
        { key: 'B', payload: {}, trafficPercent: 90 },
      ],
    });
    const after2 = await api.assign(created.slug, { userId: 'v2-user' });
    const log2 = await api.log(created.slug, { variantKey: 'B', userId: 'v2-user' });
    const results = await api.allResults(created.slug);
    assert.deepEqual(
      results.map((r) => [r.logId, r.experimentVersion]),
      [
        [log1.logId, 1],
        [log2.logId, 2],
      ],
    );
    await runtime.ingest.drain();
    const exposures = await runtime.exposuresOf(created.slug);
    const versions = [before1, after2].map((a) =>
      exposures.filter((e) => e.assignmentId === a.assignmentId).map((e) => e.version),
    );
    assert.deepEqual(versions, [[1], [2]]);
  });

  test('invalid variants → 400 and the experiment is unchanged', async () => {
    const created = await api.createExperiment();
    const res = await api.patch(`/experiment/${created.slug}`, {
      variants: [
        { key: 'A', payload: {}, trafficPercent: 60 },
        { key: 'B', payload: {}, trafficPercent: 60 },
      ],
    });
    assertError(res, 400, /sum/);
    assert.deepEqual((await api.get(`/experiment/${created.slug}`)).json(), created);
  });

  test('an empty change {} → 400; an unknown status → 400', async () => {
    const created = await api.createExperiment();
    assertError(await api.patch(`/experiment/${created.slug}`, {}), 400);
    assertError(await api.patch(`/experiment/${created.slug}`, { status: 'live' }), 400, /status/);
  });

  test('PATCH of an unknown slug → 404', async () => {
    assertError(await api.patch('/experiment/never-created', { name: 'x' }), 404, /never-created/);
  });
});

describe('metric definitions', { skip: SKIP_BACKEND }, () => {
  const success = { name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.05 };

  test('are kept as declared on create, role defaulting to secondary', async () => {
    const res = await api.post(
      '/experiments',
      createBody({ metrics: [success, { name: 'cost', direction: 'decrease' }] }),
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().metrics, [
      success,
      { name: 'cost', direction: 'decrease', role: 'secondary' },
    ]);
  });

  test('a PATCH replaces them without a new version (they change the reading, not the data)', async () => {
    const created = await api.createExperiment({ metrics: [success] });
    const res = await api.patch(`/experiment/${created.slug}`, {
      metrics: [{ name: 'latency_ms', direction: 'decrease', role: 'guardrail' }],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().metrics, [{ name: 'latency_ms', direction: 'decrease', role: 'guardrail' }]);
    assert.equal(res.json().version, 1);
  });

  test('bad definitions are a 400 that says what is wrong', async () => {
    await expectCreateError({ metrics: [{ name: 'x', direction: 'up' }] }, /direction/);
    await expectCreateError({ metrics: [{ name: 'x', direction: 'increase', role: 'main' }] }, /role/);
    await expectCreateError({ metrics: [{ direction: 'increase' }] }, /name/);
    await expectCreateError(
      {
        metrics: [
          { name: 'x', direction: 'increase' },
          { name: 'x', direction: 'decrease' },
        ],
      },
      /'x' is defined twice/,
    );
    await expectCreateError(
      { metrics: [{ name: 'x', direction: 'increase', minimumDetectableEffect: 0 }] },
      /minimumDetectableEffect/,
    );
  });
});

describe('DELETE /experiment/:slug', { skip: SKIP_BACKEND }, () => {
  test('a draft without results → 204; then it is gone and its slug can be reused', async () => {
    const created = await api.createExperiment({ status: 'draft' });
    const res = await api.delete(`/experiment/${created.slug}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assertError(await api.get(`/experiment/${created.slug}`), 404);
    const listed = (await api.get('/experiments')).json().experiments.map((e: Experiment) => e.slug);
    assert.ok(!listed.includes(created.slug));
    const again = await api.post('/experiments', createBody({ slug: created.slug }));
    assert.equal(again.statusCode, 201, again.body);
  });

  for (const status of ['running', 'paused', 'completed', 'archived']) {
    test(`a ${status} experiment → 409 (archive instead), and it stays`, async () => {
      const experiment = await inStatus(PATH_TO[status]!);
      assertError(await api.delete(`/experiment/${experiment.slug}`), 409, new RegExp(status));
      assert.equal((await api.get(`/experiment/${experiment.slug}`)).statusCode, 200);
    });
  }

  test('a draft with results → 409, and it stays with its results', async () => {
    const created = await api.createExperiment({ status: 'draft' });
    const { logId } = await api.log(created.slug, { variantKey: 'A' });
    assertError(await api.delete(`/experiment/${created.slug}`), 409, /results/);
    assert.deepEqual(
      (await api.allResults(created.slug)).map((r) => r.logId),
      [logId],
    );
  });

  test('a log racing the DELETE of its draft gets 404 or is kept (409), never a 500', async () => {
    for (let i = 0; i < 10; i++) {
      const created = await api.createExperiment({ status: 'draft' });
      const [deleted, logged] = await Promise.all([
        api.delete(`/experiment/${created.slug}`),
        api.post(`/experiment/${created.slug}/log`, { variantKey: 'A' }),
      ]);
      if (deleted.statusCode === 204) {
        assertError(logged, 404, new RegExp(created.slug));
      } else {
        assertError(deleted, 409, /results/);
        assert.equal(logged.statusCode, 200, logged.body);
      }
      const [orphans] = await runtime.rows<{ n: number }>(
        sql`SELECT COUNT(*) AS n FROM results WHERE experiment_id NOT IN (SELECT id FROM experiments)`,
      );
      assert.equal(Number(orphans?.n), 0);
    }
  });

  test('DELETE of an unknown slug → 404', async () => {
    assertError(await api.delete('/experiment/never-created'), 404, /never-created/);
  });
});
