// The anytime-valid one-arm SRM check: its log Bayes factor against scipy (betaln), and its promise: under
// the null, reading it after every new unit, the chance it ever drops below alpha stays at most alpha.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seededRandom } from '../../test/helpers/random.js';
import { logBayesFactor, shortfallPValue } from './srm-sequential.js';

test('log Bayes factor matches scipy (betaln, k = 100)', () => {
  // python: betaln(a+x, b+n-x) - betaln(a, b) - x*log(p) - (n-x)*log(1-p), a = p*100, b = (1-p)*100
  const cases: Array<[number, number, number, number]> = [
    [0, 300, 0.05, 8.341362027625356],
    [10, 310, 0.25, 36.54241356382718],
    [250, 1000, 0.25, -1.2022302833147194],
    [150, 1000, 0.25, 25.698897527125126],
    [3, 100, 0.1, 1.3819591161695328],
  ];
  for (const [x, n, p, expected] of cases) {
    assert.ok(
      Math.abs(logBayesFactor(x, n, p) - expected) < 1e-9,
      `${x}/${n} at ${p}: ${logBayesFactor(x, n, p)}`,
    );
  }
});

test('only a shortfall is tested: an arm at or above its share answers 1', () => {
  assert.equal(shortfallPValue(250, 1000, 0.25), 1);
  assert.equal(shortfallPValue(600, 1000, 0.25), 1);
  assert.ok(shortfallPValue(150, 1000, 0.25) < 1e-10);
  assert.ok(shortfallPValue(0, 300, 0.05) < 0.001, 'no traffic to a 5% arm is seen by 300 units');
});

test('under the null, read after every unit up to 5,000, it falls below 0.001 in at most 0.1% of runs', () => {
  const uniform = seededRandom(11);
  const runs = 2000;
  let crossed = 0;
  for (let r = 0; r < runs; r++) {
    const p = [0.05, 0.25, 0.5][r % 3]!;
    let x = 0;
    for (let n = 1; n <= 5000; n++) {
      if (uniform() < p) x++;
      if (shortfallPValue(x, n, p) < 0.001) {
        crossed++;
        break;
      }
    }
  }
  assert.ok(crossed / runs <= 0.002, `${crossed} of ${runs} crossed`);
});
