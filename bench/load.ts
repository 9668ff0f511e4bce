// Loads N results into a fresh experiment 'analysis-1m' straight through the store (before a server
// owns the database), in the same batched transactions the service uses, rollups included. The
// experiment is sticky, so its analysis reads per-user units: USERS users, each with several results.
import { createExperiment } from '../src/core/experiment.js';
import type { NewResult } from '../src/core/writes.js';
import { type DatabaseTarget, openStore } from '../src/store/index.js';
import { seededRandom } from '../test/helpers/random.js';

/** Users the results belong to (about 10 results each at 1M). */
const USERS = 100_000;

export async function loadResults(
  target: DatabaseTarget,
  count: number,
): Promise<{ count: number; seconds: number }> {
  const store = await openStore(target);
  const started = performance.now();
  try {
    const now = new Date().toISOString();
    const { id } = await store.insertExperiment(
      createExperiment(
        {
          slug: 'analysis-1m',
          status: 'running',
          assignment: 'sticky',
          metrics: [
            { name: 'resolved', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.02 },
            { name: 'latency_ms', direction: 'decrease', role: 'guardrail', covariate: 'tokens' },
            { name: 'tokens', direction: 'decrease', role: 'secondary', cap: { percentile: 99 } },
            // Issue 33 items 9-11: the analysis figure is read with a ratio, a cap and a covariate declared.
            {
              name: 'tokens_per_resolved',
              direction: 'decrease',
              numerator: 'tokens',
              denominator: 'resolved',
            },
          ],
          variants: [
            { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
            { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
          ],
        },
        now,
      ),
    );
    const random = seededRandom(1);
    const batch = 5000;
    for (let done = 0; done < count; done += batch) {
      const results: NewResult[] = [];
      for (let i = done; i < Math.min(count, done + batch); i++) {
        const user = Math.floor(random() * USERS);
        // Sticky: a user stays in one variant.
        const b = user % 2 === 1;
        results.push({
          logId: `load-${i}`,
          experimentId: id,
          version: 1,
          variantKey: b ? 'B' : 'A',
          knownVariant: true,
          userId: `u${user}`,
          // Per-user sums come from one rebuild at the end: the same rollups, written once per user.
          unit: false,
          assignmentId: null,
          input: '{"q":"hello"}',
          output: '{"a":"hi"}',
          metrics: JSON.stringify({
            latency_ms: Math.round((b ? 790 : 812) + 120 * (random() - 0.5) * 3.4),
            tokens: Math.round(150 + 40 * random()),
            resolved: random() < (b ? 0.62 : 0.6),
          }),
          context: null,
          timestamp: null,
          createdAt: now,
        });
      }
      await store.appendBatch({ results, exposures: [] });
    }
    await store.rebuildRollups(id);
    return { count, seconds: (performance.now() - started) / 1000 };
  } finally {
    await store.close();
  }
}
