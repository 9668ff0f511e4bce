// A CI gate on an offline run's comparison (issue 40): `agentsplit runs compare <run> --fail-if "<rule>"`.
// A rule names a metric and how much worse than the control a variant may be:
//   "correct worse than -2%"        the difference relative to the control's mean, in the metric's better
//                                   direction, is below -2% (0.80 → 0.78 is -2.5%: fails)
//   "correct worse than -2 points"  the difference in percentage points (pass/fail metrics) is below -2
//   "latency_ms worse than -50"     the difference in the metric's own units, in its better direction, is
//                                   below -50 (a latency 60 ms higher is -60: fails)
//   "correct significantly worse"   the variant is significantly worse (Holm across metrics)
// "Worse" needs the metric's declared direction. The point estimate decides the threshold rules (what a
// reviewer reads in the table); add "significantly worse" to also stop noise-free regressions only.
// Every variant other than the control is checked; the gate fails when any rule fails for any of them.

export interface GateRule {
  /** As written, for the report. */
  text: string;
  metric: string;
  /** 'significant': significantly worse; else the threshold's unit. */
  kind: 'relative' | 'points' | 'absolute' | 'significant';
  /** The lowest allowed improvement (negative: how much worse is tolerated); 0 for 'significant'. */
  threshold: number;
}

/** What a rule reads of one variant's comparison on one metric (the run comparison's answer). */
export interface GateComparison {
  variant: string;
  control: { mean: number };
  difference: { estimate: number };
  significant: boolean;
  better: boolean | null;
}

export interface GateMetric {
  name: string;
  kind: 'mean' | 'proportion';
  direction: 'increase' | 'decrease' | null;
  comparisons: GateComparison[];
}

export interface GateCheck {
  rule: string;
  variant: string;
  /** The improvement in the rule's unit (relative: a fraction), null for 'significant'. */
  value: number | null;
  failed: boolean;
  /** One line: 'correct worse than -2%: B -2.5% against A: FAILED'. */
  line: string;
}

const RULE =
  /^\s*(\S+)\s+(?:(significantly)\s+worse|worse\s+than\s+([+-]?\d+(?:\.\d+)?)\s*(%|points?|pts?)?)\s*$/i;

/** Parses one rule; a readable error for anything else. */
export function parseGateRule(text: string): GateRule {
  const m = RULE.exec(text);
  if (m === null) {
    throw new Error(
      `cannot read the rule '${text}': write '<metric> worse than -2%', '<metric> worse than -2 points', ` +
        "'<metric> worse than -50' (the metric's units) or '<metric> significantly worse'",
    );
  }
  const metric = m[1]!;
  if (m[2] !== undefined) return { text: text.trim(), metric, kind: 'significant', threshold: 0 };
  const value = Number(m[3]);
  const unit = (m[4] ?? '').toLowerCase();
  if (unit === '%') return { text: text.trim(), metric, kind: 'relative', threshold: value / 100 };
  if (unit !== '') return { text: text.trim(), metric, kind: 'points', threshold: value / 100 };
  return { text: text.trim(), metric, kind: 'absolute', threshold: value };
}

/** Every rule against every variant of the comparison; throws when a rule cannot be judged (no such metric, no direction). */
export function checkGate(rules: GateRule[], metrics: GateMetric[], control: string): GateCheck[] {
  const checks: GateCheck[] = [];
  for (const rule of rules) {
    const metric = metrics.find((m) => m.name === rule.metric);
    if (metric === undefined) {
      const names = metrics.map((m) => m.name).join(', ') || 'none';
      throw new Error(
        `the run has no values of '${rule.metric}' to judge '${rule.text}' (its metrics: ${names})`,
      );
    }
    if (metric.direction === null && rule.kind !== 'significant') {
      throw new Error(
        `'${rule.metric}' has no declared direction, so 'worse' means nothing: declare it on the experiment ` +
          "(direction 'increase' or 'decrease')",
      );
    }
    if (rule.kind === 'points' && metric.kind !== 'proportion') {
      throw new Error(
        `'${rule.text}': points are for pass/fail metrics; '${rule.metric}' is a mean (use % or its units)`,
      );
    }
    for (const c of metric.comparisons) checks.push(checkOne(rule, metric, c, control));
  }
  return checks;
}

function checkOne(rule: GateRule, metric: GateMetric, c: GateComparison, control: string): GateCheck {
  const sign = metric.direction === 'decrease' ? -1 : 1;
  const head = `${rule.text}: ${c.variant} against ${control}`;
  if (rule.kind === 'significant') {
    const failed = c.significant && c.better === false;
    const said = failed
      ? 'significantly worse'
      : c.significant
        ? 'significantly better'
        : 'not significantly different';
    return {
      rule: rule.text,
      variant: c.variant,
      value: null,
      failed,
      line: `${head} ${said}: ${failed ? 'FAILED' : 'passed'}`,
    };
  }
  let value: number;
  let shown: string;
  if (rule.kind === 'relative') {
    value = c.control.mean === 0 ? Number.NaN : (sign * c.difference.estimate) / Math.abs(c.control.mean);
    shown = Number.isNaN(value) ? 'n/a (the control mean is 0)' : `${signedFigure(value * 100)}%`;
  } else if (rule.kind === 'points') {
    value = sign * c.difference.estimate;
    shown = `${signedFigure(value * 100)} points`;
  } else {
    value = sign * c.difference.estimate;
    shown = signedFigure(value);
  }
  // A relative change against a zero mean cannot be judged: it fails, the line says why.
  const failed = Number.isNaN(value) || value < rule.threshold;
  return {
    rule: rule.text,
    variant: c.variant,
    value: Number.isNaN(value) ? null : value,
    failed,
    line: `${head} ${shown}: ${failed ? 'FAILED' : 'passed'}`,
  };
}

function signedFigure(x: number): string {
  const s = Number(x.toPrecision(3)).toString();
  return x > 0 ? `+${s}` : s;
}
