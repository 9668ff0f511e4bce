// The CI gate's rules (issue 40): what each form reads, and how a variant is judged against it in the
// metric's better direction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkGate, type GateMetric, parseGateRule } from './run-gate.js';

const metric = (
  name: string,
  kind: 'mean' | 'proportion',
  direction: 'increase' | 'decrease' | null,
  control: number,
  estimate: number,
  significant = false,
): GateMetric => ({
  name,
  kind,
  direction,
  comparisons: [
    {
      variant: 'B',
      control: { mean: control },
      difference: { estimate },
      significant,
      better: significant ? (direction === 'decrease' ? estimate < 0 : estimate > 0) : null,
    },
  ],
});

test('rules: relative, points, units, significantly worse; anything else is refused with the forms', () => {
  assert.deepEqual(parseGateRule('correct worse than -2%'), {
    text: 'correct worse than -2%',
    metric: 'correct',
    kind: 'relative',
    threshold: -0.02,
  });
  assert.equal(parseGateRule('correct worse than -2 points').kind, 'points');
  assert.equal(parseGateRule('correct worse than -2 points').threshold, -0.02);
  assert.equal(parseGateRule('correct  worse than -2pt').kind, 'points');
  assert.deepEqual(parseGateRule('latency_ms worse than -50'), {
    text: 'latency_ms worse than -50',
    metric: 'latency_ms',
    kind: 'absolute',
    threshold: -50,
  });
  assert.equal(parseGateRule('correct significantly worse').kind, 'significant');
  assert.throws(() => parseGateRule('correct below 2%'), /write '<metric> worse than -2%'/);
  assert.throws(() => parseGateRule(''), /cannot read the rule/);
});

test('a variant is judged in the better direction: lower latency is better, a drop in correct is worse', () => {
  const correct = metric('correct', 'proportion', 'increase', 0.8, -0.02);
  const [relative] = checkGate([parseGateRule('correct worse than -2%')], [correct], 'A');
  assert.equal(relative!.failed, true); // -0.02 / 0.8 = -2.5%
  assert.equal(relative!.line, 'correct worse than -2%: B against A -2.5%: FAILED');
  assert.equal(checkGate([parseGateRule('correct worse than -3%')], [correct], 'A')[0]!.failed, false);
  assert.equal(checkGate([parseGateRule('correct worse than -2 points')], [correct], 'A')[0]!.failed, false);
  assert.equal(checkGate([parseGateRule('correct worse than -1 points')], [correct], 'A')[0]!.failed, true);
  // Latency 60 ms higher is 60 worse: fails "worse than -50", passes "worse than -100"; 60 ms lower passes.
  const slower = metric('latency_ms', 'mean', 'decrease', 1000, 60);
  assert.equal(checkGate([parseGateRule('latency_ms worse than -50')], [slower], 'A')[0]!.failed, true);
  assert.equal(checkGate([parseGateRule('latency_ms worse than -100')], [slower], 'A')[0]!.failed, false);
  assert.equal(checkGate([parseGateRule('latency_ms worse than -5%')], [slower], 'A')[0]!.failed, true);
  const faster = metric('latency_ms', 'mean', 'decrease', 1000, -60);
  assert.equal(checkGate([parseGateRule('latency_ms worse than 0')], [faster], 'A')[0]!.failed, false);
  // Significantly worse: only a significant move the wrong way.
  const rule = [parseGateRule('correct significantly worse')];
  assert.equal(
    checkGate(rule, [metric('correct', 'proportion', 'increase', 0.8, -0.1, true)], 'A')[0]!.failed,
    true,
  );
  assert.equal(
    checkGate(rule, [metric('correct', 'proportion', 'increase', 0.8, -0.1, false)], 'A')[0]!.failed,
    false,
  );
  assert.equal(
    checkGate(rule, [metric('correct', 'proportion', 'increase', 0.8, 0.1, true)], 'A')[0]!.failed,
    false,
  );
});

test('what cannot be judged is an error naming why; a zero control mean fails a relative rule', () => {
  assert.throws(
    () =>
      checkGate(
        [parseGateRule('tokens worse than -2%')],
        [metric('correct', 'proportion', 'increase', 0.8, 0)],
        'A',
      ),
    /no values of 'tokens'.*its metrics: correct/,
  );
  assert.throws(
    () => checkGate([parseGateRule('score worse than -2%')], [metric('score', 'mean', null, 3, 0)], 'A'),
    /no declared direction/,
  );
  assert.throws(
    () =>
      checkGate(
        [parseGateRule('score worse than -2 points')],
        [metric('score', 'mean', 'increase', 3, 0)],
        'A',
      ),
    /points are for pass\/fail/,
  );
  const zero = checkGate(
    [parseGateRule('errors worse than -2%')],
    [metric('errors', 'mean', 'decrease', 0, 0.1)],
    'A',
  )[0]!;
  assert.equal(zero.failed, true);
  assert.match(zero.line, /the control mean is 0/);
});
