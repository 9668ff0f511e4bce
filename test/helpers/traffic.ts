// Simulated agent traffic for the calibration tests (issue 23): users who call several times, each user's
// values correlated (a user effect plus noise). It is sent the cheapest way a real client can: assigned
// in-process with the JS client's own draw and ids (local evaluation, ADR 0019), then one exposure and one
// result per call, posted in batches of up to 1000 (POST /exposures, POST /logs).
import assert from 'node:assert/strict';
import { assignmentIdWith } from '../../clients/js/src/ids.js';
import { chooseIndex, compileDefinition, type Definition } from '../../clients/js/src/local.js';
import type { Api } from './app.js';

export type { Definition };

/** A standard normal draw (Box–Muller). */
export function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

export interface User {
  id: string;
  calls: number;
  /** The user's own level, shared by all their calls: what makes their values correlated. */
  effect: number;
}

/** `count` users: most call 1–4 times, one in 20 is a heavy user calling 10–30 times. */
export function drawUsers(random: () => number, count: number, prefix: string): User[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-u${i}`,
    calls: random() < 0.05 ? 10 + Math.floor(random() * 21) : 1 + Math.floor(random() * 4),
    effect: normal(random),
  }));
}

/** One call's metrics, for the user in the variant with this index. */
export type Values = (variant: number, user: User) => Record<string, number | boolean>;

/** What was sent, per variant index: distinct users (random experiments: by their first call) and calls. */
export interface Sent {
  users: number[];
  calls: number[];
}

const BATCH = 1000;

/** The running experiments' definitions, as a locally evaluating client polls them. */
export async function definitions(api: Api): Promise<Map<string, Definition>> {
  const res = await api.get('/experiments/definitions');
  assert.equal(res.statusCode, 200, res.body);
  const { experiments } = res.json() as { experiments: Definition[] };
  return new Map(experiments.map((d) => [d.slug, d]));
}

export interface TrafficOptions {
  /** Drops the users it refuses (neither exposed nor logged), to make a broken split. */
  keep?: (variant: number, user: User) => boolean;
  /** The per-call draw of random experiments (seeded, for repeatable runs). */
  random?: () => number;
}

/** One experiment's traffic, ready to send. */
export interface Traffic {
  slug: string;
  exposures: unknown[];
  results: unknown[];
  sent: Sent;
}

/**
 * Every call of every user: drawn in-process, with its metrics under the user's id. Synchronous, so the
 * seeded draws happen in the same order however the sending interleaves.
 */
export function planTraffic(
  definition: Definition,
  users: User[],
  values: Values,
  { keep = () => true, random = Math.random }: TrafficOptions = {},
): Traffic {
  const compiled = compileDefinition(definition);
  const sent: Sent = { users: compiled.keys.map(() => 0), calls: compiled.keys.map(() => 0) };
  const exposures: unknown[] = [];
  const results: unknown[] = [];
  for (const user of users) {
    const variant = chooseIndex(compiled, user.id, random);
    if (!keep(variant, user)) continue;
    sent.users[variant]! += 1;
    for (let c = 0; c < user.calls; c++) {
      // Random experiments draw per call, so only sticky ones keep the user's variant for every call.
      const v = compiled.sticky || c === 0 ? variant : chooseIndex(compiled, user.id, random);
      const assignmentId = assignmentIdWith(compiled.keyState, compiled.middles[v]!, user.id);
      sent.calls[v]! += 1;
      exposures.push({ experiment: definition.slug, assignmentId });
      results.push({ variantKey: compiled.keys[v], userId: user.id, assignmentId, metrics: values(v, user) });
    }
  }
  return { slug: definition.slug, exposures, results, sent };
}

/** Posts the exposures, then the results, in batches of up to 1000. */
export async function postTraffic(api: Api, { slug, exposures, results, sent }: Traffic): Promise<Sent> {
  for (let i = 0; i < exposures.length; i += BATCH) {
    const res = await api.post('/exposures', { exposures: exposures.slice(i, i + BATCH) });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().rejected, [], 'every exposure placed');
  }
  for (let i = 0; i < results.length; i += BATCH) await api.logMany(slug, results.slice(i, i + BATCH));
  return sent;
}

/**
 * The smallest k with P(X > k) < `risk` for X ~ Binomial(n, p): a count above k happens by chance less than
 * `risk` of the time when the true rate is p.
 */
export function binomialUpper(n: number, p: number, risk: number): number {
  let term = (1 - p) ** n; // P(X = 0)
  let cdf = term;
  let k = 0;
  while (1 - cdf >= risk && k < n) {
    term *= ((n - k) / (k + 1)) * (p / (1 - p));
    k += 1;
    cdf += term;
  }
  return k;
}
