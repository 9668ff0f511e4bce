// The store contract for ratios, covariates and caps (migration 019, ADR 0035), on every backend (SQLite
// file, PostgreSQL when reachable, the in-memory store): the pair sums and users' bins that live writes keep
// equal those computed here from the raw values (per user in sticky experiments, with a partner metric that
// arrives in a later batch and feedback that replaces a value; per call in random ones), the hourly moves add
// up to the all-time rows, and a rebuild from raw rows writes the same.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { declaredSums, pairId } from '../src/core/declared.js';
import { createExperiment, type Experiment } from '../src/core/experiment.js';
import { addContribution, noSums, type PairRollup, type PairSums } from '../src/core/pairs.js';
import type { UnitBin } from '../src/core/unit-bins.js';
import type { NewFeedback, NewResult } from '../src/core/writes.js';
import { sketchBin } from '../src/stats/sketch.js';
import { openStore } from '../src/store/index.js';
import { MemoryStore } from '../src/store/memory-store.js';
import type { Store } from '../src/store/store.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { seededRandom } from './helpers/random.js';

const dir = mkdtempSync(join(tmpdir(), 'agentsplit-pairs-'));
const databases: TestDatabase[] = [];
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const d of databases) await d.drop();
});

const backends: Array<{ name: string; open: () => Promise<Store>; skip?: boolean }> = [
  { name: 'SQLite file', open: () => openStore({ kind: 'sqlite', path: join(dir, `${Math.random()}.db`) }) },
  {
    name: 'PostgreSQL',
    skip: !(await postgresReachable()),
    open: async () => {
      const db = await createTestDatabase('pairs');
      databases.push(db);
      return openStore({ kind: 'postgres', url: db.url });
    },
  },
  { name: 'in-memory store', open: async () => new MemoryStore() },
];

const HOURS = ['2026-03-02T09:15:00.000Z', '2026-03-02T10:45:30.000Z'];
const METRICS = [
  {
    name: 'cost_per_success',
    direction: 'decrease' as const,
    role: 'secondary' as const,
    numerator: 'cost',
    denominator: 'ok',
  },
  { name: 'latency', direction: 'decrease' as const, role: 'primary' as const, covariate: 'tokens' },
  { name: 'cost', direction: 'decrease' as const, role: 'guardrail' as const, cap: { percentile: 90 } },
];
const RATIO = { role: 'ratio' as const, first: 'cost', second: 'ok' };
const COVARIATE = { role: 'covariate' as const, first: 'latency', second: 'tokens' };

function declaring(slug: string, assignment: 'sticky' | 'random'): Experiment {
  return createExperiment(
    {
      slug,
      assignment,
      metrics: METRICS,
      segments: ['plan'],
      variants: [
        { key: 'A', payload: {}, trafficPercent: 50 },
        { key: 'B', payload: {}, trafficPercent: 50 },
      ],
    },
    HOURS[0]!,
  );
}

/** A unit's values of one metric: count and sum (true = 1). */
type Tally = { n: number; sum: number };
const tally = (v: unknown): Tally =>
  typeof v === 'number'
    ? { n: 1, sum: v }
    : typeof v === 'boolean'
      ? { n: 1, sum: v ? 1 : 0 }
      : { n: 0, sum: 0 };
const add = (a: Tally, b: Tally): Tally => ({ n: a.n + b.n, sum: a.sum + b.sum });

/** Expected pair sums per variant of `units`: each unit's tallies per metric. */
function expectedPairs(units: Map<string, { variant: string; tallies: Map<string, Tally> }>) {
  const out = new Map<string, PairSums>();
  for (const u of units.values()) {
    for (const pair of [RATIO, COVARIATE]) {
      const key = `${u.variant} ${pairId(pair)}`;
      const sums = out.get(key) ?? noSums();
      const none = { n: 0, sum: 0 };
      addContribution(sums, pair, u.tallies.get(pair.first) ?? none, u.tallies.get(pair.second) ?? none, 1);
      out.set(key, sums);
    }
  }
  return out;
}

function assertPairs(
  rows: PairRollup[],
  unit: 'user' | 'call',
  expected: Map<string, PairSums>,
  what: string,
) {
  const got = new Map<string, PairSums>();
  for (const r of rows.filter((r) => r.unit === unit && r.hour === undefined)) {
    const key = `${r.variantKey} ${r.pair}`;
    const sums = got.get(key) ?? noSums();
    for (const c of Object.keys(sums) as Array<keyof PairSums>) sums[c] += r[c];
    got.set(key, sums);
  }
  assert.deepEqual([...got.keys()].sort(), [...expected.keys()].sort(), `${what}: pair rows`);
  for (const [key, sums] of expected) {
    for (const c of Object.keys(sums) as Array<keyof PairSums>) {
      const [a, e] = [got.get(key)![c], sums[c]];
      assert.ok(Math.abs(a - e) <= 1e-9 * Math.max(1, Math.abs(e)), `${what}: ${key} ${c}: ${a} ≠ ${e}`);
    }
  }
}

/** The hourly rows summed per variant and pair. */
function hourlyTotals(rows: PairRollup[]): PairRollup[] {
  const out = new Map<string, PairRollup>();
  for (const r of rows) {
    const key = `${r.variantKey}\u0000${r.pair}\u0000${r.unit}`;
    const t = out.get(key);
    if (!t) out.set(key, { ...r, hour: undefined });
    else for (const c of Object.keys(noSums()) as Array<keyof PairSums>) t[c] += r[c];
  }
  return [...out.values()];
}

/** Users' bins of the capped metric `cost`, as computed from each user's final sums. */
function expectedBins(units: Map<string, { variant: string; tallies: Map<string, Tally> }>) {
  const out = new Map<string, { units: number; sumX: number; sumY: number }>();
  for (const u of units.values()) {
    const t = u.tallies.get('cost');
    if (!t || t.n === 0) continue;
    const { side, key } = sketchBin(t.sum / t.n);
    const k = `${u.variant} ${side}:${key}`;
    const b = out.get(k) ?? { units: 0, sumX: 0, sumY: 0 };
    b.units += 1;
    b.sumX += t.sum;
    b.sumY += t.n;
    out.set(k, b);
  }
  return out;
}

function assertBins(rows: UnitBin[], expected: ReturnType<typeof expectedBins>, what: string) {
  const got = new Map<string, UnitBin>(
    rows
      .filter((b) => b.metric === 'cost' && b.units !== 0)
      .map((b) => [`${b.variantKey} ${b.side}:${b.key}`, b] as const),
  );
  assert.deepEqual([...got.keys()].sort(), [...expected.keys()].sort(), `${what}: bins`);
  for (const [k, e] of expected) {
    const b = got.get(k)!;
    assert.equal(b.units, e.units, `${what}: ${k} units`);
    assert.ok(Math.abs(b.sumX - e.sumX) <= 1e-9 * Math.max(1, e.sumX), `${what}: ${k} sumX`);
    assert.ok(Math.abs(b.sumY - e.sumY) <= 1e-9, `${what}: ${k} sumY`);
  }
}

let counter = 0;

for (const backend of backends) {
  describe(`pair sums and users' bins: ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    after(async () => store?.close());

    test('sticky: per-user pair sums and bins follow every batch and feedback; hours add up; a rebuild writes the same', async () => {
      store = await backend.open();
      const experiment = declaring('pairs-sticky', 'sticky');
      const { id } = await store.insertExperiment(experiment);
      const declared = declaredSums(experiment.metrics);
      const random = seededRandom(7);
      const units = new Map<string, { variant: string; tallies: Map<string, Tally> }>();
      /** Per segment value, the users' tallies within it (a user's calls may fall in both values). */
      const inPlan = new Map<string, Map<string, { variant: string; tallies: Map<string, Tally> }>>();
      const logged: NewResult[] = [];
      for (let b = 0; b < 6; b++) {
        const at = HOURS[b < 3 ? 0 : 1]!;
        const results: NewResult[] = [];
        for (let k = 0; k < 12; k++) {
          const u = Math.floor(random() * 10);
          const variant = u % 2 ? 'B' : 'A';
          const plan = random() < 0.6 ? 'pro' : 'free';
          // Some calls log only one side of a pair: the partner's sums come from earlier or later batches.
          const metrics: Record<string, unknown> = {};
          if (random() < 0.8) metrics.cost = Math.round(random() * 1000) / 100;
          if (random() < 0.7) metrics.ok = random() < 0.6;
          if (random() < 0.8) metrics.latency = 300 + Math.round(random() * 200);
          if (random() < 0.6) metrics.tokens = 50 + Math.round(random() * 100);
          results.push({
            logId: `p-${++counter}`,
            experimentId: id,
            version: 1,
            variantKey: variant,
            knownVariant: true,
            userId: `u${u}`,
            assignmentId: null,
            input: null,
            output: null,
            metrics: JSON.stringify(metrics),
            context: null,
            timestamp: null,
            createdAt: at,
            unit: true,
            declared,
            segments: { values: { plan }, lookup: [], wait: false },
          });
          const unit = units.get(`u${u}`) ?? { variant, tallies: new Map() };
          for (const [m, v] of Object.entries(metrics))
            unit.tallies.set(m, add(unit.tallies.get(m) ?? { n: 0, sum: 0 }, tally(v)));
          units.set(`u${u}`, unit);
          const byUser = inPlan.get(plan) ?? new Map();
          const part = byUser.get(`u${u}`) ?? { variant, tallies: new Map() };
          for (const [m, v] of Object.entries(metrics))
            part.tallies.set(m, add(part.tallies.get(m) ?? { n: 0, sum: 0 }, tally(v)));
          byUser.set(`u${u}`, part);
          inPlan.set(plan, byUser);
        }
        // Feedback replacing a cost logged earlier: the user's sums (and its pairs and bin) move by the difference.
        const feedback: NewFeedback[] = [];
        if (b > 1) {
          const target = logged.find((r) => JSON.parse(r.metrics!).cost === undefined && r.userId !== null);
          if (target) {
            const value = Math.round(random() * 500) / 100;
            feedback.push({
              feedbackId: `fb-${++counter}`,
              experimentId: id,
              target: `l:${target.logId}`,
              version: 1,
              variantKey: target.variantKey,
              userId: target.userId,
              unit: true,
              values: [{ metric: 'cost', kind: 'mean', value }],
              comment: null,
              createdAt: at,
              declared,
            });
            const unit = units.get(target.userId!)!;
            unit.tallies.set('cost', add(unit.tallies.get('cost') ?? { n: 0, sum: 0 }, { n: 1, sum: value }));
            // Marked, so that the next batch rates another result.
            target.metrics = JSON.stringify({ ...JSON.parse(target.metrics!), cost: value });
          }
        }
        await store.appendBatch({ results, exposures: [], feedback });
        logged.push(...results.map((r) => ({ ...r })));
        const live = await store.readRollups(id);
        assertPairs(live.pairs, 'user', expectedPairs(units), `batch ${b}`);
        assertBins(live.unitBins, expectedBins(units), `batch ${b}`);
      }
      const live = await store.readRollups(id);
      const hourly = await store.readHourly(id);
      assert.equal(new Set(hourly.pairs.map((p) => p.hour)).size, 2, 'moves in both hours');
      assertPairs(hourlyTotals(hourly.pairs), 'user', expectedPairs(units), 'the hours summed');
      await store.rebuildRollups(id);
      const rebuilt = await store.readRollups(id);
      assertPairs(rebuilt.pairs, 'user', expectedPairs(units), 'rebuilt');
      assertBins(rebuilt.unitBins, expectedBins(units), 'rebuilt');
      assert.equal(rebuilt.pairs.length, live.pairs.length);
      assertPairs(
        hourlyTotals((await store.readHourly(id)).pairs),
        'user',
        expectedPairs(units),
        'rebuilt hours',
      );
      // Per segment value: the users' sums within it (the feedback above has no segment values).
      for (const plan of ['pro', 'free']) {
        const rows = (await store.readSegments(id, 'plan')).pairs.filter((p) => p.value === plan);
        assertPairs(rows, 'user', expectedPairs(inPlan.get(plan)!), `segment ${plan} (rebuilt)`);
      }
    });

    test('sticky: segment pair sums follow live writes as the rebuild computes them', async () => {
      const experiment = declaring('pairs-segments', 'sticky');
      const { id } = await store.insertExperiment(experiment);
      const declared = declaredSums(experiment.metrics);
      const random = seededRandom(5);
      const inPlan = new Map<string, Map<string, { variant: string; tallies: Map<string, Tally> }>>();
      for (let b = 0; b < 4; b++) {
        const results: NewResult[] = Array.from({ length: 15 }, () => {
          const u = Math.floor(random() * 8);
          const variant = u % 2 ? 'B' : 'A';
          const plan = random() < 0.5 ? 'pro' : 'free';
          const metrics: Record<string, unknown> = {};
          if (random() < 0.8) metrics.cost = Math.round(random() * 1000) / 100;
          if (random() < 0.7) metrics.ok = random() < 0.6;
          if (random() < 0.8) metrics.latency = 300 + Math.round(random() * 200);
          if (random() < 0.6) metrics.tokens = 50 + Math.round(random() * 100);
          const byUser = inPlan.get(plan) ?? new Map();
          const part = byUser.get(`u${u}`) ?? { variant, tallies: new Map() };
          for (const [m, v] of Object.entries(metrics))
            part.tallies.set(m, add(part.tallies.get(m) ?? { n: 0, sum: 0 }, tally(v)));
          byUser.set(`u${u}`, part);
          inPlan.set(plan, byUser);
          return {
            logId: `s-${++counter}`,
            experimentId: id,
            version: 1,
            variantKey: variant,
            knownVariant: true,
            userId: `u${u}`,
            assignmentId: null,
            input: null,
            output: null,
            metrics: JSON.stringify(metrics),
            context: null,
            timestamp: null,
            createdAt: HOURS[0]!,
            unit: true,
            declared,
            segments: { values: { plan }, lookup: [], wait: false },
          };
        });
        await store.appendBatch({ results, exposures: [] });
        for (const plan of inPlan.keys()) {
          const rows = (await store.readSegments(id, 'plan')).pairs.filter((p) => p.value === plan);
          assertPairs(rows, 'user', expectedPairs(inPlan.get(plan)!), `batch ${b}, segment ${plan}`);
        }
      }
      await store.rebuildRollups(id);
      for (const plan of inPlan.keys()) {
        const rows = (await store.readSegments(id, 'plan')).pairs.filter((p) => p.value === plan);
        assertPairs(rows, 'user', expectedPairs(inPlan.get(plan)!), `rebuilt, segment ${plan}`);
      }
    });

    test('random: each call is a unit of its pairs (a missing value is 0); a rebuild writes the same', async () => {
      const experiment = declaring('pairs-random', 'random');
      const { id } = await store.insertExperiment(experiment);
      const declared = declaredSums(experiment.metrics);
      const random = seededRandom(11);
      const calls = new Map<string, { variant: string; tallies: Map<string, Tally> }>();
      const callsIn = new Map<string, Map<string, { variant: string; tallies: Map<string, Tally> }>>();
      for (let b = 0; b < 3; b++) {
        const results: NewResult[] = Array.from({ length: 20 }, (_, k) => {
          const metrics: Record<string, unknown> = {};
          if (random() < 0.8) metrics.cost = Math.round(random() * 1000) / 100;
          if (random() < 0.7) metrics.ok = random() < 0.6;
          if (random() < 0.8) metrics.latency = 300 + Math.round(random() * 200);
          if (random() < 0.6) metrics.tokens = 50 + Math.round(random() * 100);
          const logId = `c-${++counter}`;
          const variant = k % 2 ? 'B' : 'A';
          const plan = random() < 0.5 ? 'pro' : 'free';
          const call = { variant, tallies: new Map(Object.entries(metrics).map(([m, v]) => [m, tally(v)])) };
          calls.set(logId, call);
          const inValue = callsIn.get(plan) ?? new Map();
          inValue.set(logId, call);
          callsIn.set(plan, inValue);
          return {
            logId,
            experimentId: id,
            version: 1,
            variantKey: variant,
            knownVariant: true,
            userId: null,
            assignmentId: null,
            input: null,
            output: null,
            metrics: JSON.stringify(metrics),
            context: null,
            timestamp: null,
            createdAt: HOURS[b % 2]!,
            declared,
            segments: { values: { plan }, lookup: [], wait: false },
          };
        });
        await store.appendBatch({ results, exposures: [] });
      }
      const live = await store.readRollups(id);
      assertPairs(live.pairs, 'call', expectedPairs(calls), 'live');
      assert.equal(live.unitBins.length, 0, 'random experiments keep no users');
      for (const plan of ['pro', 'free']) {
        const rows = (await store.readSegments(id, 'plan')).pairs.filter((p) => p.value === plan);
        assertPairs(rows, 'call', expectedPairs(callsIn.get(plan)!), `segment ${plan} (live)`);
      }
      assertPairs(hourlyTotals((await store.readHourly(id)).pairs), 'call', expectedPairs(calls), 'hours');
      await store.rebuildRollups(id);
      assertPairs((await store.readRollups(id)).pairs, 'call', expectedPairs(calls), 'rebuilt');
      for (const plan of ['pro', 'free']) {
        const rows = (await store.readSegments(id, 'plan')).pairs.filter((p) => p.value === plan);
        assertPairs(rows, 'call', expectedPairs(callsIn.get(plan)!), `segment ${plan} (rebuilt)`);
      }
    });
  });
}
