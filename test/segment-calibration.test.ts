// Issue 33 item 3: the error rate of a sticky experiment's segments. A/A experiments (no true difference)
// whose users call several times, with a strong user effect, are read per segment value as the analysis
// reads them (write-time segment rows, core/segments.ts and core/segment-units.ts, then analyzeRollups per
// value): per user, a value's difference is significant at alpha = 0.05 about 5% of the time; per call (the
// reading before this change) far more often. Pure and seeded: no server, the same draws every run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applySegmentUnitDeltas } from '../src/core/segment-units.js';
import { rollUpSegments, type SegmentedResult } from '../src/core/segments.js';
import { topSegments } from '../src/core/top-segments.js';
import { analyzeRollups } from '../src/stats/analyze.js';
import { seededRandom } from './helpers/random.js';

const EXPERIMENTS = 300;
const USERS = 200;
const ALPHA = 0.05;

const random = seededRandom(33_003);
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

/** One A/A experiment's results: each user in one plan (2 in 5 'pro'), 1–8 calls around its own level. */
function experiment(): SegmentedResult[] {
  const out: SegmentedResult[] = [];
  for (let u = 0; u < USERS; u++) {
    const variantKey = random() < 0.5 ? 'A' : 'B';
    const plan = random() < 0.4 ? 'pro' : 'free';
    const level = normal();
    const calls = 1 + Math.floor(random() * 8);
    for (let c = 0; c < calls; c++) {
      out.push({
        rolled: {
          experimentId: 1,
          version: 1,
          variantKey,
          metrics: { score: 3 + level + 0.5 * normal() },
          unitUserId: `u${u}`,
        },
        segments: { plan },
      });
    }
  }
  return out;
}

/** Per segment value: whether its difference is significant, read per user or per call. */
function significant(results: SegmentedResult[], perUser: boolean): boolean[] {
  const rolled = rollUpSegments(results);
  const units = applySegmentUnitDeltas(rolled.units, new Map()).rollups;
  return topSegments(rolled.metrics, rolled.counts, { units, sketches: [] }).map((s) => {
    const part = analyzeRollups({
      experiment: {
        slug: 'aa',
        assignment: perUser ? 'sticky' : 'random',
        variants: [
          { key: 'A', trafficPercent: 50 },
          { key: 'B', trafficPercent: 50 },
        ],
        metrics: [],
      },
      versions: [],
      rollups: { exposures: [], results: s.counts, metrics: s.metrics, units: s.units },
      options: {
        control: 'A',
        method: 'frequentist',
        alpha: ALPHA,
        sided: 'two',
        correction: 'none',
        version: null,
      },
    });
    assert.equal(part.metrics[0]!.unit, perUser ? 'user' : 'call');
    return part.metrics[0]!.variants[1]!.significant === true;
  });
}

test('A/A sticky experiments with user effects: a segment looks significant about 5% of the time per user, far more per call', (t) => {
  const readings = { user: 0, call: 0 };
  let values = 0;
  for (let e = 0; e < EXPERIMENTS; e++) {
    const results = experiment();
    const user = significant(results, true);
    const call = significant(results, false);
    values += user.length;
    readings.user += user.filter(Boolean).length;
    readings.call += call.filter(Boolean).length;
  }
  const rate = { user: readings.user / values, call: readings.call / values };
  t.diagnostic(
    `${values} segment readings: per user ${(rate.user * 100).toFixed(1)}%, per call ${(rate.call * 100).toFixed(1)}%`,
  );
  // 5% plus two binomial standard deviations of the rate over this many readings.
  const bound = ALPHA + 2 * Math.sqrt((ALPHA * (1 - ALPHA)) / values);
  assert.ok(rate.user <= bound, `per user: ${rate.user} > ${bound}`);
  assert.ok(rate.call > 3 * ALPHA, `per call: ${rate.call}`);
});
