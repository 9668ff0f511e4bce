// A metric row's derived definition (ADR 0035) in the experiment form, the rules without the markup (the
// tests import them in Node): one choice among a ratio of two logged metrics, a cap (a value, or a
// percentile of the units) and a covariate to adjust on. One choice, because the server takes at most one
// of them per definition (src/core/metric-definitions.ts).

export const DERIVED_CHOICES = [
  ['', 'as logged'],
  ['ratio', 'ratio of two metrics'],
  ['cap-value', 'capped (value)'],
  ['cap-percentile', 'capped (percentile)'],
  ['covariate', 'covariate-adjusted'],
];

/** The row's fields for a stored definition (or a new one). */
export function derivedState(m = {}) {
  const cap = m.cap ?? {};
  const derived =
    m.numerator !== undefined || m.denominator !== undefined
      ? 'ratio'
      : cap.percentile !== undefined
        ? 'cap-percentile'
        : cap.value !== undefined
          ? 'cap-value'
          : m.covariate !== undefined
            ? 'covariate'
            : '';
  return {
    derived,
    numerator: m.numerator ?? '',
    denominator: m.denominator ?? '',
    cap: String(cap.value ?? cap.percentile ?? ''),
    covariate: m.covariate ?? '',
  };
}

/** A metric name for a ratio's part or a covariate: 1-200 characters, another metric than this one. */
function otherMetric(value, name, errors, at) {
  const v = value.trim();
  if (!v) errors[at] = 'The name results log that metric under';
  else if (v.length > 200) errors[at] = 'At most 200 characters';
  else if (v === name) errors[at] = `Another metric than '${name}' itself`;
  return v;
}

/**
 * Adds the row's derived fields to `out` (after its statistic, the order the server stores them in, so an
 * untouched edit form sends nothing) and the errors that keep them from being sent.
 */
export function addDerived(m, i, out, errors) {
  const d = m.derived ?? '';
  if (!d) return;
  if ((out.statistic ?? 'mean') !== 'mean') {
    errors[`metrics.${i}.statistic`] = 'A ratio, cap or covariate compares the mean';
  }
  if (d === 'ratio') {
    if (m.kind === 'proportion') errors[`metrics.${i}.kind`] = 'A ratio is a mean, not a proportion';
    out.numerator = otherMetric(m.numerator, out.name, errors, `metrics.${i}.numerator`);
    out.denominator = otherMetric(m.denominator, out.name, errors, `metrics.${i}.denominator`);
  } else if (d === 'covariate') {
    out.covariate = otherMetric(m.covariate, out.name, errors, `metrics.${i}.covariate`);
  } else {
    if (m.kind === 'proportion') errors[`metrics.${i}.kind`] = 'A cap needs numeric values, not a proportion';
    const text = m.cap.trim();
    const x = text === '' ? Number.NaN : Number(text);
    if (d === 'cap-value') {
      if (!Number.isFinite(x)) errors[`metrics.${i}.cap`] = 'A number: values above it count as it';
      out.cap = { value: x };
    } else {
      if (!(x > 0 && x < 100)) errors[`metrics.${i}.cap`] = 'A percentile above 0 and below 100 (99)';
      out.cap = { percentile: x };
    }
  }
}
