// The form's own checks, and where an API error belongs: the API names fields in two styles,
// "variants[1].key must be …" (the service) and "body/variants/1/trafficPercent must be number" (the schema).
import { addDerived } from './derived-rules.js';

/** The weights as numbers and whether they sum to 100 (the API's tolerance, 1e-9). */
export function weightSum(rows) {
  const total = rows.reduce((a, r) => a + (Number(r.weight) || 0), 0);
  return { total: Math.round(total * 1e6) / 1e6, ok: Math.abs(total - 100) <= 1e-9 };
}

/** What the form would send for variants, or the errors that keep it from being sent. */
export function variantsFrom(rows) {
  const errors = {};
  const seen = new Set();
  const variants = rows.map((r, i) => {
    const key = r.key.trim();
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(key))
      errors[`variants.${i}.key`] = '1-64 characters of A-Z a-z 0-9 . _ -';
    else if (seen.has(key)) errors[`variants.${i}.key`] = `'${key}' is used by another variant`;
    seen.add(key);
    let payload = null;
    try {
      payload = JSON.parse(r.payload);
    } catch {
      // reported below
    }
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      errors[`variants.${i}.payload`] = 'The payload must be a JSON object: { … }';
    }
    const weight = r.weight.trim() === '' ? Number.NaN : Number(r.weight);
    if (!(weight >= 0 && weight <= 100)) errors[`variants.${i}.trafficPercent`] = 'A number from 0 to 100';
    return { key, payload, trafficPercent: weight };
  });
  // Shown by the sum line under the weights, which says what is left or too much.
  if (!weightSum(rows).ok) errors.weights = 'The weights must sum to 100.';
  return { variants, errors };
}

/** What a numeric metric can be compared on (src/core/metric-definitions.ts STATISTICS). */
export const STATISTICS = ['mean', 'p50', 'p90', 'p95', 'p99'];

/** Which way is better, and a metric's part in the verdict (src/core/metric-definitions.ts). */
export const DIRECTIONS = ['increase', 'decrease'];
export const ROLES = ['primary', 'secondary', 'guardrail'];

/** A metric as messages name it: 'cost_usd', or "metric 2" while it has no name yet. */
const called = (m, i) => (m.name.trim() ? `'${m.name.trim()}'` : `metric ${i + 1}`);

/** The metrics the form cannot send yet because a direction or role is still to choose. */
export function unchosen(rows) {
  return rows
    .filter((m) => !(DIRECTIONS.includes(m.direction) && ROLES.includes(m.role)))
    .map((m) => called(m, rows.indexOf(m)));
}

/** A fraction as the form shows it in percent: 0.05 -> '5' (two decimals at most); absent -> ''. */
export function percentText(fraction) {
  return fraction === undefined || fraction === null ? '' : String(Math.round(fraction * 10000) / 100);
}

/**
 * What the form would send for metrics, or the errors that keep it from being sent: the server's rules
 * (src/core/metric-definitions.ts). Percent fields are sent as fractions; a guardrail's threshold only for a
 * guardrail; the statistic when it is not the default mean (or was stored explicitly); a ratio, cap or
 * covariate when one is chosen.
 */
export function metricsFrom(rows) {
  const errors = {};
  const seen = new Set();
  const metrics = rows.map((m, i) => {
    const name = m.name.trim();
    if (!name) errors[`metrics.${i}.name`] = 'A metric needs the name results log it under';
    else if (name.length > 200) errors[`metrics.${i}.name`] = 'At most 200 characters';
    else if (seen.has(name)) errors[`metrics.${i}.name`] = `'${name}' is defined twice`;
    seen.add(name);
    // No defaults: a direction or role guessed for the user reverses a verdict (cost_usd saved as
    // "higher is better, primary"), so a new metric starts on "choose…" and is not sent until chosen.
    // Short, under the select; the line under the metrics names each metric still to choose.
    if (!DIRECTIONS.includes(m.direction)) errors[`metrics.${i}.direction`] = 'Choose higher or lower';
    if (!ROLES.includes(m.role)) errors[`metrics.${i}.role`] = 'Choose a role';
    const out = { name, direction: m.direction, role: m.role };
    if (m.kind) out.kind = m.kind;
    if (m.mde.trim() !== '') {
      const pct = Number(m.mde);
      if (!(pct > 0 && pct <= 1000))
        errors[`metrics.${i}.minimumDetectableEffect`] = 'A percentage above 0 (5 for 5%), at most 1000';
      else out.minimumDetectableEffect = pct / 100;
    }
    const threshold = (m.threshold ?? '').trim();
    if (m.role === 'guardrail' && threshold !== '') {
      const pct = Number(threshold);
      if (!(pct >= 0 && pct <= 1000))
        errors[`metrics.${i}.threshold`] = 'A percentage from 0 to 1000 (5 for at most 5% worse)';
      else out.threshold = pct / 100;
    }
    const statistic = m.statistic || 'mean';
    if (!STATISTICS.includes(statistic)) {
      errors[`metrics.${i}.statistic`] = `One of ${STATISTICS.join(', ')}`;
    } else if (statistic !== 'mean' && m.kind === 'proportion') {
      errors[`metrics.${i}.statistic`] = `A quantile (${statistic}) needs numeric values, not a proportion`;
    }
    if (statistic !== 'mean' || m.statisticSet) out.statistic = statistic;
    addDerived(m, i, out, errors);
    return out;
  });
  const missing = unchosen(rows);
  if (missing.length) {
    errors.metrics = `Not saved: choose "Better when" and "Role" for ${missing.join(', ')}. There is no default: a wrong guess would reverse the verdict.`;
  }
  return { metrics, errors };
}

/** The form field an API error message is about ('variants.1.key', 'slug', …), or null for the form. */
export function fieldOf(message) {
  const schema = /^body\/(\w+)(?:\/(\d+)(?:\/(\w+))?)?/.exec(message);
  if (schema) return [schema[1], schema[2], schema[3]].filter((x) => x !== undefined).join('.');
  const service = /^(variants|metrics)\[(\d+)\](?:\.(\w+))?/.exec(message);
  if (service) return [service[1], service[2], service[3]].filter((x) => x !== undefined).join('.');
  if (/^variants'? /.test(message)) return 'variants';
  if (/^(slug\b|an experiment with slug)/.test(message)) return 'slug';
  if (/^(name|description|seed|assignment|guardrailAction|minimumUnits)\b/.test(message))
    return message.split(/\b/)[0];
  return null;
}
