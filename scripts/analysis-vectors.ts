// Writes test/fixtures/analysis-vectors.json: rollups in, the expected analysis out (verdict sentence included),
// for the pure analyzeRollups. Run it (node --import tsx scripts/analysis-vectors.ts) only when a change to the
// analysis is intended, and review the diff: the vectors exist so that no change goes unnoticed.
// The rollups are made from seeded raw data through the same write-time code the store runs.
import { writeFileSync } from 'node:fs';
import { type RolledResult, rollUpResults } from '../src/core/rollups.js';
import { applyUnitDeltas, unitDeltasOfResults } from '../src/core/units.js';
import { type AnalysisInput, analyzeRollups } from '../src/stats/index.js';
import { sketchBin } from '../src/stats/sketch.js';
import { seededRandom } from '../test/helpers/random.js';

interface Case {
  name: string;
  sticky: boolean;
  users: number;
  /** Per variant index: the metrics of one call of user u (r: the case's random source). */
  values: (v: number, u: number, r: () => number) => Record<string, number | boolean>;
  metrics: AnalysisInput['experiment']['metrics'];
  options: Partial<AnalysisInput['options']>;
  /** Users of B kept (a broken split below 1). */
  keepB?: number;
}

function build(c: Case, seed: number): AnalysisInput {
  const r = seededRandom(seed);
  const keys = ['A', 'B'];
  const results: RolledResult[] = [];
  const calls = [0, 0];
  const users = [0, 0];
  for (let u = 0; u < c.users; u++) {
    const v = r() < 0.5 ? 0 : 1;
    if (v === 1 && r() > (c.keepB ?? 1)) continue;
    users[v]! += 1;
    const n = c.sticky ? 1 + Math.floor(r() * 4) : 1;
    for (let k = 0; k < n; k++) {
      calls[v]! += 1;
      results.push({
        experimentId: 1,
        version: 1,
        variantKey: keys[v]!,
        metrics: c.values(v, u, r),
        unitUserId: c.sticky ? `u${u}` : null,
      });
    }
  }
  const metrics = rollUpResults(results).map(({ experimentId: _e, ...row }) => row);
  const units = applyUnitDeltas(unitDeltasOfResults(results), new Map()).rollups.map(
    ({ experimentId: _e, ...row }) => row,
  );
  const bins = new Map<
    string,
    { version: number; variantKey: string; metric: string; side: 1 | -1 | 0; key: number; count: number }
  >();
  for (const res of results) {
    for (const [metric, value] of Object.entries(res.metrics ?? {})) {
      if (typeof value !== 'number') continue;
      const { side, key } = sketchBin(value);
      const id = `${res.variantKey}/${metric}/${side}/${key}`;
      const bin = bins.get(id) ?? { version: 1, variantKey: res.variantKey, metric, side, key, count: 0 };
      bin.count += 1;
      bins.set(id, bin);
    }
  }
  const perVariant = (counts: number[]) => keys.map((k, i) => ({ version: 1, variantKey: k, n: counts[i]! }));
  const variants = keys.map((key) => ({ key, trafficPercent: 50 }));
  return {
    experiment: { slug: c.name, assignment: c.sticky ? 'sticky' : 'random', variants, metrics: c.metrics },
    versions: [{ version: 1, variants }],
    rollups: {
      exposures: perVariant(calls),
      exposureUsers: c.sticky ? perVariant(users) : [],
      results: perVariant(calls),
      metrics,
      units,
      sketches: [...bins.values()],
    },
    options: { control: 'A', method: 'frequentist', alpha: 0.05, sided: 'two', version: null, ...c.options },
  };
}

const gauss = (r: () => number) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
const agent = (lift: number) => (v: number, _u: number, r: () => number) => ({
  success: r() < (v === 1 ? 0.5 + lift : 0.5),
  cost_usd: Math.round((v === 1 ? 0.0014 : 0.002) * (1 + 0.2 * gauss(r)) * 1e6) / 1e6,
  latency_ms: Math.round(Math.exp(6.5 + 0.4 * gauss(r)) * (v === 1 ? 0.9 : 1)),
  rating: Math.min(5, Math.max(1, Math.round(4 + gauss(r) - (v === 1 ? 0.1 : 0)))),
  error: false,
});
const DECLARED: AnalysisInput['experiment']['metrics'] = [
  { name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.1 },
  { name: 'cost_usd', direction: 'decrease', role: 'guardrail' },
  { name: 'rating', direction: 'increase', role: 'guardrail', threshold: 0.05 },
  { name: 'latency_ms', direction: 'decrease', role: 'secondary' },
];

const cases: Case[] = [
  { name: 'sticky-winner', sticky: true, users: 1200, values: agent(0.08), metrics: DECLARED, options: {} },
  {
    name: 'sticky-winner-bayesian',
    sticky: true,
    users: 1200,
    values: agent(0.08),
    metrics: DECLARED,
    options: { method: 'bayesian' },
  },
  {
    name: 'sticky-no-winner-sequential',
    sticky: true,
    users: 600,
    values: agent(0.01),
    metrics: DECLARED,
    options: { method: 'sequential', nStar: 2000 },
  },
  {
    name: 'random-p95-primary-holm',
    sticky: false,
    users: 3000,
    values: agent(0),
    metrics: [{ name: 'latency_ms', direction: 'decrease', role: 'primary', statistic: 'p95' }],
    options: { correction: 'holm' },
  },
  {
    name: 'sticky-lost-users',
    sticky: true,
    users: 1000,
    keepB: 0.7,
    values: agent(0.08),
    metrics: DECLARED,
    options: {},
  },
  {
    name: 'random-rare-events-better',
    sticky: false,
    users: 1000,
    values: (v, u) => ({ converted: v === 1 && u % 150 === 7 }),
    metrics: [{ name: 'converted', direction: 'increase', role: 'primary' }],
    options: { method: 'bayesian', sided: 'better' },
  },
];

const vectors = cases.map((c, i) => {
  const input = build(c, 2300 + i);
  return { name: c.name, input, expected: analyzeRollups(input) };
});
writeFileSync(
  new URL('../test/fixtures/analysis-vectors.json', import.meta.url),
  `${JSON.stringify({ description: 'analyzeRollups: rollups in, the analysis out (scripts/analysis-vectors.ts)', vectors }, null, 1)}\n`,
);
for (const v of vectors) process.stdout.write(`${v.name}: ${v.expected.verdict.summary}\n`);
