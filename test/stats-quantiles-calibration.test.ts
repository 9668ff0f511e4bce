// Calibration of quantileArm by simulation (seeded): in A/A pairs of arms drawn from one distribution, the 95%
// interval of the difference of a quantile (absolute, SE = √(SE_T² + SE_C²), normal quantile 1.96) must cover
// 0 in about 95% of pairs. Arms are binned by core/sketch.ts as the store bins them.
//
// Thresholds: coverage >= 93% over 500 pairs (95% less 2.1 binomial standard deviations, √(.95·.05/500) = 0.97%).
// Clustered: false-positive rate <= 5% + 2 binomial standard deviations (1.95% at 500 pairs) with units from
// effectiveUnits; with units = calls it must exceed that bound, which is why n_eff exists.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveUnits, quantileArm } from '../src/stats/quantiles.js';
import { type SketchBin, sketchBin } from '../src/stats/sketch.js';
import { seededRandom } from './helpers/random.js';

const Z = 1.959963984540054;
const PAIRS = 500;
const SLACK = 2 * Math.sqrt((0.05 * 0.95) / PAIRS);

const random = seededRandom(2_025_1126);
/** Standard normal (Box–Muller). */
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

class Bins {
  private rows = new Map<string, SketchBin>();
  /** The arm's min and max, as the rollups keep them. */
  extremes = { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
  add(value: number): void {
    this.extremes.min = Math.min(this.extremes.min, value);
    this.extremes.max = Math.max(this.extremes.max, value);
    const { side, key } = sketchBin(value);
    const id = `${side}:${key}`;
    const row = this.rows.get(id) ?? { side, key, count: 0 };
    row.count++;
    this.rows.set(id, row);
  }
  get list(): SketchBin[] {
    return [...this.rows.values()];
  }
}

/** True when the 95% interval of the difference excludes 0 (a false positive in an A/A pair). */
function rejects(
  control: Bins,
  treatment: Bins,
  q: number,
  units: [number, number],
  clamped = false,
): boolean {
  const c = quantileArm(control.list, q, units[0], clamped ? control.extremes : undefined);
  const t = quantileArm(treatment.list, q, units[1], clamped ? treatment.extremes : undefined);
  assert.ok(c.stdError !== null && t.stdError !== null, `${c.warnings} ${t.warnings}`);
  const se = Math.sqrt(c.stdError ** 2 + t.stdError ** 2);
  return Math.abs(t.estimate! - c.estimate!) > Z * se;
}

describe('quantileArm intervals are calibrated (A/A simulation)', () => {
  it('independent calls: the difference of p50 and of p95 covers 0 in >= 93% of 500 pairs, n from 300 to 100,000', () => {
    const sizes = [300, 1_000, 5_000, 100_000];
    const misses = { 0.5: 0, 0.95: 0 };
    for (let pair = 0; pair < PAIRS; pair++) {
      // Most pairs small (fast), some large: there the rank interval sits inside one ~2% bin.
      const n = sizes[pair % 25 === 0 ? 3 : pair % 3]!;
      const arms = [new Bins(), new Bins()] as const;
      for (const arm of arms) for (let i = 0; i < n; i++) arm.add(Math.exp(6.7 + 0.8 * normal()));
      for (const q of [0.5, 0.95] as const) if (rejects(arms[0], arms[1], q, [n, n])) misses[q]++;
    }
    const coverage = { p50: 1 - misses[0.5] / PAIRS, p95: 1 - misses[0.95] / PAIRS };
    console.log(`A/A coverage over ${PAIRS} pairs: ${JSON.stringify(coverage)}`);
    assert.ok(coverage.p50 >= 0.93 && coverage.p95 >= 0.93, JSON.stringify(coverage));
  });

  it('clustered calls (1–10 per user, strongly correlated): n_eff keeps the false-positive rate <= 5% + slack; n = calls does not', () => {
    const users = 300;
    const falsePositives = { effective: 0, calls: 0 };
    for (let pair = 0; pair < PAIRS; pair++) {
      const arms = [new Bins(), new Bins()] as const;
      const sums = arms.map((arm) => {
        let [sumY, sumY2] = [0, 0];
        for (let u = 0; u < users; u++) {
          const calls = 1 + Math.floor(random() * 10);
          const user = normal(); // the user's own level: most of a value's spread
          for (let i = 0; i < calls; i++) arm.add(Math.exp(6.7 + 0.8 * user + 0.15 * normal()));
          sumY += calls;
          sumY2 += calls * calls;
        }
        return { sumY, sumY2 };
      });
      const effective = sums.map((s) => effectiveUnits(s.sumY, s.sumY2)!) as [number, number];
      const calls = sums.map((s) => s.sumY) as [number, number];
      if (rejects(arms[0], arms[1], 0.5, effective)) falsePositives.effective++;
      if (rejects(arms[0], arms[1], 0.5, calls)) falsePositives.calls++;
    }
    const rate = { effective: falsePositives.effective / PAIRS, calls: falsePositives.calls / PAIRS };
    console.log(
      `clustered A/A false-positive rate of the median over ${PAIRS} pairs: ${JSON.stringify(rate)}`,
    );
    assert.ok(rate.effective <= 0.05 + SLACK, JSON.stringify(rate));
    assert.ok(rate.calls > 0.05 + SLACK, JSON.stringify(rate));
  });

  it('read within each arm’s min and max (where clamping bites: p99 of small arms), p95 and p99 still cover 0 in >= 93%', () => {
    const sizes = [400, 600, 1_000, 3_000];
    const misses = { 0.95: 0, 0.99: 0 };
    for (let pair = 0; pair < PAIRS; pair++) {
      const n = sizes[pair % 4]!;
      const arms = [new Bins(), new Bins()] as const;
      for (const arm of arms) for (let i = 0; i < n; i++) arm.add(Math.exp(6.7 + 0.8 * normal()));
      for (const q of [0.95, 0.99] as const) if (rejects(arms[0], arms[1], q, [n, n], true)) misses[q]++;
    }
    const coverage = { p95: 1 - misses[0.95] / PAIRS, p99: 1 - misses[0.99] / PAIRS };
    console.log(`A/A coverage within min/max over ${PAIRS} pairs: ${JSON.stringify(coverage)}`);
    assert.ok(coverage.p95 >= 0.93 && coverage.p99 >= 0.93, JSON.stringify(coverage));
  });
});
