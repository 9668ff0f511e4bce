// Who enters an experiment in one line (ADR 0038): "Who enters: plan in [pro, team] · 20% coverage ·
// layer prompts [0, 0.5) · 2 overrides", or "Everyone enters". A condition too rich for words shows as
// compact JSON; either way at most ~120 characters, the whole condition in the tooltip.
import { html } from '../html.js';

const LIMIT = 120;
const WORDS = {
  $eq: '=',
  $ne: '≠',
  $gt: '>',
  $gte: '≥',
  $lt: '<',
  $lte: '≤',
  $veq: '=',
  $vne: '≠',
  $vgt: '>',
  $vgte: '≥',
  $vlt: '<',
  $vlte: '≤',
  $regex: 'matches',
  $in: 'in',
  $nin: 'not in',
};

const scalar = (v) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const shown = (v) =>
  Array.isArray(v) ? `[${v.join(', ')}]` : typeof v === 'string' && v === '' ? '""' : String(v);

/** One attribute's clause in words ('plan in [pro, team]'), or null when it needs JSON. */
function clause(attribute, rule) {
  if (attribute.startsWith('$')) return null;
  if (scalar(rule)) return `${attribute} = ${shown(rule)}`;
  if (typeof rule !== 'object' || Array.isArray(rule)) return null;
  const parts = [];
  for (const [op, value] of Object.entries(rule)) {
    const list = Array.isArray(value) && value.every(scalar);
    if (op === '$exists' && typeof value === 'boolean')
      parts.push(`${attribute} ${value ? 'is set' : 'is not set'}`);
    else if ((op === '$in' || op === '$nin') && list) parts.push(`${attribute} ${WORDS[op]} ${shown(value)}`);
    else if (WORDS[op] && scalar(value) && op !== '$in' && op !== '$nin')
      parts.push(`${attribute} ${WORDS[op]} ${op.startsWith('$v') ? 'v' : ''}${shown(value)}`);
    else return null;
  }
  return parts.length ? parts.join(' and ') : null;
}

/** A condition in words when every clause has them, else compact JSON; cut at LIMIT characters. */
export function conditionText(condition) {
  const clauses = Object.entries(condition).map(([k, v]) => clause(k, v));
  const text = clauses.length && clauses.every(Boolean) ? clauses.join(' and ') : JSON.stringify(condition);
  return text.length > LIMIT ? `${text.slice(0, LIMIT - 1)}…` : text;
}

/** The line's parts; empty when everyone enters. */
export function whoParts(e) {
  const parts = [];
  if (e.targeting) parts.push(conditionText(e.targeting));
  if (e.coverage !== undefined && e.coverage !== 100) parts.push(`${e.coverage}% coverage`);
  if (e.layer) parts.push(`layer ${e.layer.key} [${e.layer.range[0]}, ${e.layer.range[1]})`);
  const n = e.overrides?.length ?? 0;
  if (n) parts.push(`${n} override${n === 1 ? '' : 's'}`);
  if (parts.length && e.defaultVariant) parts.push(`others get ${e.defaultVariant}`);
  if (parts.length && !e.targeting) parts.unshift('everyone');
  return parts;
}

export function WhoEnters({ experiment }) {
  const parts = whoParts(experiment);
  const title = experiment.targeting ? JSON.stringify(experiment.targeting) : undefined;
  return html`<p class="muted small who-line" title=${title} data-testid="who-enters-line">
    ${parts.length ? `Who enters: ${parts.join(' · ')}` : 'Everyone enters'}
  </p>`;
}
