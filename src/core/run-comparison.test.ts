// The comparison of an offline run (core/run-comparison.ts): the verdict's words, Holm across metrics,
// the items that changed most; and the decision rule's error rates by simulation: A/A runs (identical
// variants, noisy scores) called different at most alpha, and the paired test's power against Welch's
// unpaired test on the same items.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareMeans } from '../stats/index.js';
import { compareRun, type RunRow } from './run-comparison.js';

/** A seeded uniform (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** A run of `items` items: each item's difficulty shared by both variants, B shifted by `shift`. */
function simulate(
  random: () => number,
  items: number,
  shift: number,
  trials = 1,
  spread = 2,
  noise = 0.5,
): RunRow[] {
  const normal = gaussian(random);
  const rows: RunRow[] = [];
  for (let i = 0; i < items; i++) {
    const level = normal() * spread;
    for (const variantKey of ['A', 'B']) {
      for (let t = 1; t <= trials; t++) {
        const score = level + (variantKey === 'B' ? shift : 0) + normal() * noise;
        rows.push({
          variantKey,
          itemId: `q${i}`,
          trial: t,
          values: { score },
          output: { text: `${variantKey}${i}` },
        });
      }
    }
  }
  return rows;
}

test('the verdict: a pass/fail metric in points over the items, with wins and losses', () => {
  const rows: RunRow[] = [];
  for (let i = 0; i < 200; i++) {
    const a = i < 120;
    const b = i < 132 ? i >= 10 || i < 2 : i >= 190;
    rows.push({ variantKey: 'A', itemId: `q${i}`, trial: 1, values: { correct: a }, output: 'a' });
    rows.push({ variantKey: 'B', itemId: `q${i}`, trial: 1, values: { correct: b }, output: 'b' });
  }
  const r = compareRun(rows, {
    control: 'A',
    definitions: [{ name: 'correct', direction: 'increase', role: 'primary' }],
  });
  const c = r.metrics[0]!.comparisons[0]!;
  assert.equal(r.items, 200);
  assert.deepEqual([c.wins, c.losses, c.ties], [22, 8, 170]);
  assert.equal(c.mcnemar!.b, 8);
  assert.equal(c.mcnemar!.c, 22);
  assert.ok(c.significant);
  assert.match(
    r.verdict.summary,
    /^B beats A on `correct`: \+7\.0 points \[\+[\d.]+, \+[\d.]+\] over 200 items, 22 wins \/ 8 losses \(p = /,
  );
  assert.equal(r.changed.length, 10);
  assert.deepEqual(r.changed[0]!.control, { mean: 0, output: 'a' });
});

test('Holm across metrics: a metric significant alone is not after the adjustment when many are compared', () => {
  const rows = simulate(seeded(3), 40, 0.25);
  // 9 metrics that are pure noise beside the shifted one.
  const random = seeded(4);
  for (const r of rows) for (let k = 0; k < 9; k++) r.values[`noise${k}`] = random();
  const r = compareRun(rows, { control: 'A' });
  for (const m of r.metrics) {
    const c = m.comparisons[0]!;
    assert.ok(c.adjustedPValue! >= c.difference.pValue!, m.name);
  }
  assert.equal(r.metrics.length, 10);
});

test('A/A: 2,000 runs of identical variants are called different at most alpha (5%)', () => {
  const random = seeded(40);
  let called = 0;
  const runs = 2000;
  for (let k = 0; k < runs; k++) {
    const r = compareRun(simulate(random, 30, 0, 2), { control: 'A', resamples: 10 });
    if (r.metrics[0]!.comparisons[0]!.significant) called++;
  }
  // 5% of 2,000 is 100; its Monte Carlo standard error is about 10.
  assert.ok(called / runs <= 0.05 + 2 * Math.sqrt((0.05 * 0.95) / runs), `${called} of ${runs}`);
  assert.ok(called / runs >= 0.03, `${called} of ${runs}: not conservative beyond reason`);
});

test("the paired test's power against an unpaired test at equal items (500 runs of 50 items a variant)", () => {
  const random = seeded(41);
  let paired = 0;
  let unpaired = 0;
  const runs = 500;
  const arm = (rows: RunRow[], v: string) => {
    const xs = rows.filter((r) => r.variantKey === v).map((r) => r.values.score as number);
    return {
      n: xs.length,
      sum: xs.reduce((s, x) => s + x, 0),
      sumSquares: xs.reduce((s, x) => s + x * x, 0),
    };
  };
  for (let k = 0; k < runs; k++) {
    if (
      compareRun(simulate(random, 50, 0.3), { control: 'A', resamples: 10 }).metrics[0]!.comparisons[0]!
        .significant
    ) {
      paired++;
    }
    // Unpaired: each variant on its own 50 items (as an A/B test splits them), Welch's test.
    const a = arm(simulate(random, 50, 0.3), 'A');
    const b = arm(simulate(random, 50, 0.3), 'B');
    if (compareMeans(a, b, { alpha: 0.05, effect: 'absolute' }).pValue! < 0.05) unpaired++;
  }
  // Items differ (sd 2) far more than one item's runs (sd 0.5): pairing removes the items. Expected power:
  // paired, the differences' sd is 0.5·√2, se 0.1, z = 3.0 → 85%; unpaired, sd √4.25, se 0.41, z = 0.73 → 11%.
  assert.ok(paired / runs > 0.78 && paired / runs < 0.92, `paired power ${paired / runs}`);
  assert.ok(unpaired / runs > 0.05 && unpaired / runs < 0.18, `unpaired power ${unpaired / runs}`);
  assert.ok(paired / unpaired > 4, `ratio ${paired / unpaired}`);
});
