// Writes test/fixtures/entry/vectors.json: who enters (ADR 0038) for sticky experiments, definitions in,
// {variant, variantIndex, inExperiment, reason} out, from the server's own evaluator (core/entry.ts). The
// server (through HTTP), the JavaScript client and the Python client all check every case. Run it
// (node --import tsx scripts/entry-vectors.ts) only when the evaluation is meant to change, and review the diff.
import { mkdirSync, writeFileSync } from 'node:fs';
import { compileExperiment } from '../src/core/assignment.js';
import { compileEntry, decide } from '../src/core/entry.js';
import { createExperiment, type NewExperiment } from '../src/core/experiment.js';
import { seededRandom } from '../test/helpers/random.js';

const GROUPS: Record<string, Array<string | number>> = {
  beta: ['u-1', 'u-7', 'u-12', 'u-30', 42],
  staff: ['qa-1', 'qa-2'],
};

const V = (key: string, trafficPercent: number) => ({
  key,
  trafficPercent,
  payload: { prompt: `variant ${key}` },
});

const EXPERIMENTS: Record<string, Omit<NewExperiment, 'slug'>> = {
  everyone: { variants: [V('A', 50), V('B', 50)] },
  targeted: {
    variants: [V('A', 50), V('B', 50)],
    targeting: { plan: { $in: ['pro', 'team'] }, country: { $ne: 'FR' } },
  },
  covered: { variants: [V('A', 30), V('B', 70)], coverage: 40 },
  layered: {
    variants: [V('A', 50), V('B', 50)],
    layer: { key: 'prompts', range: [0.2, 0.6] },
    targeting: { appVersion: { $vgte: '1.2.0' } },
  },
  grouped: {
    variants: [V('A', 34), V('B', 33), V('C', 33)],
    targeting: { $or: [{ userId: { $inGroup: 'beta' } }, { 'account.tier': { $gte: 3 } }] },
    overrides: [
      { variant: 'C', userIds: ['qa-1', 'qa-2'] },
      { variant: 'B', condition: { email: { $regexi: '@EXAMPLE\\.com$' } } },
    ],
    defaultVariant: 'B',
    coverage: 80,
  },
};

const PLANS = ['free', 'pro', 'team', undefined];
const COUNTRIES = ['US', 'FR', 'DE', undefined];
const VERSIONS = ['1.0.0', '1.2.0', '1.10.1', '2.0.0-beta', undefined];

function contextOf(r: () => number, i: number): Record<string, unknown> | null {
  if (i % 9 === 0) return null;
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const c: Record<string, unknown> = {};
  const plan = pick(PLANS);
  if (plan !== undefined) c.plan = plan;
  const country = pick(COUNTRIES);
  if (country !== undefined) c.country = country;
  const version = pick(VERSIONS);
  if (version !== undefined) c.appVersion = version;
  if (r() < 0.3) c.account = { tier: Math.floor(r() * 5) };
  if (r() < 0.15) c.email = `user${i}@Example.com`;
  return c;
}

const r = seededRandom(35);
const groups = new Map(Object.entries(GROUPS).map(([k, v]) => [k, new Set(v)]));
const experiments: Record<string, unknown> = {};
const cases: unknown[] = [];
let id = 1;
for (const [name, input] of Object.entries(EXPERIMENTS)) {
  const e = createExperiment(
    { ...input, slug: `entry-${name}`, assignment: 'sticky' },
    '2026-11-28T00:00:00.000Z',
    (k) => groups.has(k),
  );
  experiments[name] = {
    slug: e.slug,
    assignmentIdKey: id++,
    version: e.version,
    assignment: e.assignment,
    seed: e.seed,
    variants: e.variants,
    targeting: e.targeting,
    coverage: e.coverage,
    layer: e.layer,
    overrides: e.overrides,
    defaultVariant: e.defaultVariant ?? e.variants[0]!.key,
    // No rollout decides these (issue 38: a rollout's split is tested against the server apart).
    rollout: null,
  };
  const compiled = compileExperiment(e);
  const entry = compileEntry(
    e,
    e.variants.map((v) => v.key),
    e.variants.map((v) => v.trafficPercent / 100),
  );
  const users = [
    'qa-1',
    'u-1',
    'u-7',
    'u-12',
    '42',
    ...Array.from({ length: 55 }, (_, i) => `user-${name}-${i}`),
  ];
  users.forEach((userId, i) => {
    const context = contextOf(r, i);
    const d = decide(compiled, entry, userId, context as never, groups, () => {
      throw new Error('sticky experiments never draw');
    });
    cases.push({
      experiment: name,
      userId,
      context,
      expected: {
        variant: e.variants[d.index]!.key,
        variantIndex: d.index,
        inExperiment: d.entered,
        reason: d.reason,
      },
    });
  });
}

mkdirSync('test/fixtures/entry', { recursive: true });
writeFileSync(
  'test/fixtures/entry/vectors.json',
  `${JSON.stringify(
    {
      about:
        'Who enters (ADR 0038): for sticky experiments given as GET /experiments/definitions describes them, and saved groups, the variant each unit is served and whether it entered. Attributes are the context plus userId. Made by scripts/entry-vectors.ts from the server evaluator.',
      groups: GROUPS,
      experiments,
      cases,
    },
    null,
    1,
  )}\n`,
);
console.log(`${cases.length} cases over ${Object.keys(experiments).length} experiments`);
