// An experiment declaring the three derived definitions (ADR 0035) with traffic for them, for the tests of
// how the dashboard, the CLI and the MCP tools show them: a sticky experiment of 300 users (150 per
// variant), a few calls each, whose latency follows its input_tokens (so the adjustment removes most of
// the variance), whose cost has a heavy tail (capped at its p90) and whose successes make a ratio.
import type { Call } from './call.js';
import { seededRandom } from './random.js';

export const DERIVED_METRICS = [
  { name: 'cost_per_success', direction: 'decrease', numerator: 'cost_usd', denominator: 'success' },
  { name: 'cost_usd', direction: 'decrease', cap: { percentile: 90 } },
  { name: 'latency_ms', direction: 'decrease', role: 'primary', covariate: 'input_tokens' },
] as const;

/** The experiment as POST /experiments takes it: sticky, A/B, the three definitions. */
export function derivedExperiment(slug: string) {
  return {
    slug,
    name: 'Derived metrics',
    status: 'running',
    assignment: 'sticky',
    variants: [
      { key: 'A', payload: { model: 'small' }, trafficPercent: 50 },
      { key: 'B', payload: { model: 'large' }, trafficPercent: 50 },
    ],
    metrics: DERIVED_METRICS,
  };
}

/** Creates `slug` and logs its traffic. */
export async function seedDerived(call: Call, slug: string): Promise<void> {
  await call('POST', '/experiments', derivedExperiment(slug));
  await logDerived(call, slug);
}

/** Logs 300 users' calls (2-4 each) to `slug`. */
export async function logDerived(call: Call, slug: string): Promise<void> {
  const random = seededRandom(33);
  const results = [];
  for (let u = 0; u < 300; u++) {
    const variantKey = u % 2 === 0 ? 'A' : 'B';
    const tokens = 100 + Math.floor(random() * 200);
    for (let c = 0; c < 2 + (u % 3); c++) {
      const heavy = random() < 0.1;
      results.push({
        variantKey,
        userId: `user-${u}`,
        metrics: {
          input_tokens: tokens,
          latency_ms: 500 + 2 * tokens + (variantKey === 'B' ? -15 : 0) + 40 * (random() - 0.5),
          cost_usd: (heavy ? 0.02 : 0.004) * (0.5 + random()),
          success: random() < (variantKey === 'B' ? 0.8 : 0.7),
        },
      });
    }
  }
  for (let i = 0; i < results.length; i += 1000) {
    await call('POST', `/experiment/${slug}/logs`, { results: results.slice(i, i + 1000) });
  }
}
