// What was exposed, counted as it was randomized: users in sticky experiments, with their assign calls
// beside them (a user may call many times), calls in random ones; as the CLI and the MCP tools say it
// (src/answers/exposed.ts), so "400 users (800 calls)" reads alike everywhere.
import { formatCount } from '../format.js';
import { html } from '../html.js';

/**
 * The analysis's `exposed`; from a server without it, the sample-ratio check's units when it says them
 * (the same counts), else the assign calls.
 */
export function exposedOf(analysis) {
  if (analysis.exposed) return analysis.exposed;
  if (analysis.srm?.unit && analysis.srm.counts)
    return { unit: analysis.srm.unit, counts: analysis.srm.counts };
  return { unit: 'call', counts: analysis.exposures };
}

export function sum(counts) {
  return Object.values(counts ?? {}).reduce((a, b) => a + b, 0);
}

/** 'user' or 'users', 'call' or 'calls'. */
export function unitWord(n, unit) {
  return n === 1 ? unit : `${unit}s`;
}

/**
 * '400 users (800 calls)', or '800 calls' in a random experiment: each number in its own element (testid:
 * the units, with data-unit; callsTestid: the calls beside users), so a test reads them as shown.
 */
export function ExposedCount({ unit, units, calls, testid, callsTestid }) {
  return html`<span data-testid=${testid} data-unit=${unit}>${formatCount(units)}</span> ${unitWord(units, unit)}${
    unit === 'user' &&
    html` <span class="muted calls-beside">(<span data-testid=${callsTestid}>${formatCount(calls)}</span> ${unitWord(calls, 'call')})</span>`
  }`;
}
