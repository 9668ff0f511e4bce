// What the monitor sees of a running rollout in one round (issue 38): the units its variant has, and a
// regression proven on one of its guardrails by the sequential analysis against the control. Pure: the
// experiment, the rollout and the analysis in, the facts out.
import type { Experiment } from '../core/experiment.js';
import { type Rollout, type RolloutFacts, regressionBound } from '../core/rollout.js';
import type { Analysis } from '../stats/index.js';
import { percent } from '../stats/wording.js';

/**
 * A regression is proven when the guardrail's interval (the sequential test's, at 1 − 2·alpha) lies
 * wholly beyond the rollout's threshold on the worse side: a metric that should decrease whose lift's lower
 * end is above +threshold, or one that should increase whose upper end is below −threshold. Judged only
 * once both arms have the experiment's minimumUnits on that metric.
 */
export function regressionOf(e: Experiment, r: Rollout, analysis: Analysis): string | null {
  for (const g of r.guardrails) {
    const m = analysis.metrics.find((x) => x.name === g.metric);
    const direction = e.metrics.find((d) => d.name === g.metric)?.direction;
    if (m === undefined || direction === undefined) continue;
    const arm = m.variants.find((v) => v.key === r.variant);
    const control = m.variants.find((v) => v.key === r.control);
    if (arm?.guardrail === undefined || control === undefined) continue;
    if (arm.n < e.minimumUnits || control.n < e.minimumUnits) continue;
    const bound = regressionBound(direction, arm.guardrail.relative.ci, g.threshold);
    if (bound === null) continue;
    const side = direction === 'increase' ? 'lower' : 'higher';
    return (
      `${g.metric} regressed: ${r.variant} is at least ${percent(Math.abs(bound))} ${side} than ${r.control} ` +
      `(sequential interval, beyond its ${percent(g.threshold)} threshold)`
    );
  }
  return null;
}

/** The round's facts: the variant's units (users, or assign calls) and any proven regression. */
export function factsOf(e: Experiment, r: Rollout, analysis: Analysis): Omit<RolloutFacts, 'now'> {
  return { units: analysis.srm.counts[r.variant] ?? 0, regression: regressionOf(e, r, analysis) };
}
