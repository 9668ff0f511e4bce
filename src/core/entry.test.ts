// Who enters (ADR 0038), properties over 100,000 ids: coverage only ever adds units, layers never share
// one, overrides are never entered, and the entered units split as the weights ask (chi-square).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chiSquareSf } from '../stats/distributions.js';
import { compileExperiment } from './assignment.js';
import { compileEntry, type Decision, decide } from './entry.js';
import { createExperiment, type NewExperiment } from './experiment.js';

const IDS = Array.from({ length: 100_000 }, (_, i) => `unit-${i}`);
const NONE = new Map();
const noDraw = () => {
  throw new Error('sticky experiments never draw');
};

function decider(input: Omit<NewExperiment, 'slug'> & { slug?: string }) {
  const e = createExperiment({ slug: 'prop', assignment: 'sticky', ...input }, 'now', () => true);
  const compiled = compileExperiment(e);
  const entry = compileEntry(
    e,
    e.variants.map((v) => v.key),
    e.variants.map((v) => v.trafficPercent / 100),
  );
  return (id: string, context: Record<string, never> | null = null): Decision =>
    decide(compiled, entry, id, context, NONE, noDraw);
}

const variants = [
  { key: 'A', payload: {}, trafficPercent: 20 },
  { key: 'B', payload: {}, trafficPercent: 30 },
  { key: 'C', payload: {}, trafficPercent: 50 },
];

describe('who enters, over 100,000 ids', () => {
  test('raising coverage never moves a unit out or to another variant', () => {
    const levels = [0, 5, 20, 50, 80, 100].map((coverage) => decider({ variants, coverage }));
    const entered = levels.map(() => 0);
    for (const id of IDS) {
      let before: Decision | undefined;
      levels.forEach((d, i) => {
        const now = d(id);
        if (now.entered) entered[i]!++;
        if (before?.entered) {
          assert.equal(now.entered, true, `${id} left at level ${i}`);
          assert.equal(now.index, before.index, `${id} moved at level ${i}`);
        }
        before = now;
      });
    }
    assert.deepEqual(entered[0], 0);
    assert.equal(entered.at(-1), IDS.length);
    // Each level takes its share within 1 percentage point.
    for (const [i, c] of [0, 5, 20, 50, 80, 100].entries()) {
      assert.ok(Math.abs(entered[i]! / IDS.length - c / 100) < 0.01, `${c}%`);
    }
  });

  test('two experiments of one layer with disjoint ranges never share a unit; together they take the layer', () => {
    const left = decider({ variants, layer: { key: 'prompts', range: [0, 0.3] }, slug: 'left' });
    const right = decider({ variants, layer: { key: 'prompts', range: [0.3, 1] }, slug: 'right' });
    const other = decider({ variants, layer: { key: 'other', range: [0, 0.3] }, slug: 'other' });
    let both = 0;
    let inLeft = 0;
    let leftAndOther = 0;
    for (const id of IDS) {
      const l = left(id).entered;
      const r = right(id).entered;
      if (l && r) both++;
      assert.ok(l || r, `${id} is in neither half of the layer`);
      if (l) inLeft++;
      if (l && other(id).entered) leftAndOther++;
    }
    assert.equal(both, 0);
    assert.ok(Math.abs(inLeft / IDS.length - 0.3) < 0.01);
    // Another layer is placed independently: about 0.3 × 0.3 of units are in both.
    assert.ok(Math.abs(leftAndOther / IDS.length - 0.09) < 0.01, `${leftAndOther}`);
  });

  test('overridden units are never entered, whatever the other rules say', () => {
    const qa = IDS.filter((_, i) => i % 97 === 0);
    const d = decider({ variants, overrides: [{ variant: 'C', userIds: qa }], coverage: 100 });
    for (const id of qa) assert.deepEqual(d(id), { index: 2, entered: false, reason: 'override' });
    const byCondition = decider({
      variants,
      overrides: [{ variant: 'B', condition: { userId: { $regex: '7$' } } }],
    });
    let overridden = 0;
    for (const id of IDS) {
      const x = byCondition(id);
      if (id.endsWith('7')) {
        assert.deepEqual(x, { index: 1, entered: false, reason: 'override' });
        overridden++;
      } else assert.equal(x.entered, true);
    }
    assert.equal(overridden, IDS.length / 10);
  });

  test('entered units split as the weights ask (chi-square), at 40% coverage behind a targeting rule', () => {
    const d = decider({ variants, coverage: 40, targeting: { tier: { $gte: 2 } } });
    const counts = [0, 0, 0];
    let targeted = 0;
    IDS.forEach((id, i) => {
      const tier = i % 4; // a quarter each of tiers 0-3: half are targeted
      const x = d(id, { tier } as never);
      if (tier >= 2) targeted++;
      if (x.entered) counts[x.index]!++;
      else assert.equal(x.reason, tier >= 2 ? 'coverage' : 'targeting');
    });
    const n = counts.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(n / targeted - 0.4) < 0.01, `${n} of ${targeted} entered`);
    const expected = [0.2, 0.3, 0.5].map((w) => w * n);
    const chi2 = counts.reduce((s, c, i) => s + (c - expected[i]!) ** 2 / expected[i]!, 0);
    const p = chiSquareSf(chi2, 2);
    assert.ok(p > 0.001, `chi-square ${chi2.toFixed(2)}, p ${p}`);
  });
});
