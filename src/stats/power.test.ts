// Tests sample-size planning against hand-computed numbers and its refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unitsForPower } from './power.js';

describe('unitsForPower', () => {
  it('a 10% lift on a 50% success rate, two-sided at 5%, 80% power: 1,570 per variant', () => {
    // z_0.975 + z_0.8 = 1.959964 + 0.841621 = 2.801585, squared 7.848879; 2 p(1 - p) = 0.5; delta = 0.05:
    // 7.848879 · 0.5 / 0.0025 = 1569.78 -> 1570 (the rule of thumb 16 p(1 - p) / delta^2 gives 1600).
    assert.equal(unitsForPower({ variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05 }), 1570);
  });

  it('one-sided needs fewer: z_0.95 = 1.644854', () => {
    // (1.644854 + 0.841621)^2 = 6.182557; · 0.5 / 0.0025 = 1236.51 -> 1237.
    const o = { variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05 } as const;
    assert.equal(unitsForPower({ ...o, sided: 'greater' }), 1237);
    assert.equal(unitsForPower({ ...o, sided: 'less' }), 1237);
  });

  it('absolute effects, other power, and the sign of the control mean does not matter', () => {
    // Absolute delta 2 on variance 100, 90% power: (1.959964 + 1.281552)^2 = 10.507423; · 200 / 4 = 525.37 -> 526.
    assert.equal(
      unitsForPower({ variance: 100, controlMean: 7, mde: 2, alpha: 0.05, power: 0.9, effect: 'absolute' }),
      526,
    );
    const o = { variance: 4, mde: 0.05, alpha: 0.05 };
    assert.equal(unitsForPower({ ...o, controlMean: -20 }), unitsForPower({ ...o, controlMean: 20 }));
  });

  it('quarter the effect, sixteen times the units', () => {
    const o = { variance: 9, controlMean: 3, alpha: 0.1 };
    const small = unitsForPower({ ...o, mde: 0.01 })!;
    const large = unitsForPower({ ...o, mde: 0.04 })!;
    assert.ok(Math.abs(small / large - 16) < 16 / large, `${small} / ${large}`);
  });

  it('is null when it cannot be computed', () => {
    const o = { variance: 1, controlMean: 1, mde: 0.05, alpha: 0.05 };
    for (const bad of [
      { variance: null },
      { variance: 0 },
      { variance: Number.NaN },
      { controlMean: 0 },
      { controlMean: null },
      { mde: 0 },
      { mde: -0.1 },
      { alpha: 1 },
      { power: 0 },
      { sided: 'better' as never },
    ]) {
      assert.equal(unitsForPower({ ...o, ...bad }), null, JSON.stringify(bad));
    }
    // An absolute effect does not need the control mean.
    assert.equal(unitsForPower({ ...o, controlMean: 0, effect: 'absolute' }), 6280);
  });
});
