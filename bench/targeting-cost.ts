// What a 5-clause targeting condition (issue 35) and a running rollout (issue 38) add to assign: server CPU
// per request (all threads, from /proc), rounds alternating the plain sticky experiment and a twin (a
// targeted one whose condition every bench user passes, or one under a rollout at 50%), on the same
// server, so both record one exposure per assign. CPU per request is what a busy machine cannot blur the
// way it blurs throughput.
import autocannon from 'autocannon';
import type { Server } from './servers.js';

export const TARGETED = {
  plan: { $in: ['pro', 'team'] },
  locale: { $regex: '^en-' },
  channel: { $ne: 'email' },
  session: { $exists: true },
  userId: { $nin: ['blocked-1', 'blocked-2'] },
};

export interface TargetingCost {
  rounds: number;
  requests: number;
  /** Median server CPU per assign, µs: the plain experiment, and its twin (targeted, or under a rollout). */
  plainUs: number;
  targetedUs: number;
  /** targeted / plain, the median of each round's pair. */
  ratio: number;
  ratios: number[];
}

async function cpuPerRequest(server: Server, path: string, body: string, key: string, amount: number) {
  const before = server.cpuMs();
  const r = await autocannon({
    url: server.url + path,
    method: 'POST',
    connections: 16,
    amount,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body,
    idReplacement: true,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return ((server.cpuMs() - before) * 1000) / amount;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function create(server: Server, key: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
}

/** `plainSlug` is a running sticky experiment; a targeted twin of it is created here. */
export async function targetingCost(
  server: Server,
  key: string,
  plainSlug: string,
  variants: unknown[],
  body: string,
  rounds = 6,
  amount = 20_000,
): Promise<TargetingCost> {
  const slug = 'bench-targeted';
  await create(server, key, '/experiments', {
    slug,
    status: 'running',
    assignment: 'sticky',
    variants,
    targeting: TARGETED,
  });
  return twinCost(server, key, plainSlug, slug, body, rounds, amount);
}

/** The same for a twin under a running rollout of its second variant at 50% (issue 38). */
export async function rolloutCost(
  server: Server,
  key: string,
  plainSlug: string,
  variants: Array<{ key: string }>,
  body: string,
  rounds = 6,
  amount = 20_000,
): Promise<TargetingCost> {
  const slug = 'bench-rollout';
  await create(server, key, '/experiments', { slug, status: 'running', assignment: 'sticky', variants });
  await create(server, key, `/experiment/${slug}/rollout`, {
    variant: variants[1]!.key,
    steps: [{ percent: 50, minMinutes: 100_000 }, { percent: 100 }],
  });
  return twinCost(server, key, plainSlug, slug, body, rounds, amount);
}

async function twinCost(
  server: Server,
  key: string,
  plainSlug: string,
  twinSlug: string,
  body: string,
  rounds: number,
  amount: number,
): Promise<TargetingCost> {
  const plain: number[] = [];
  const targeted: number[] = [];
  const ratios: number[] = [];
  await cpuPerRequest(server, `/experiment/${plainSlug}/assign`, body, key, amount / 4); // warm
  await cpuPerRequest(server, `/experiment/${twinSlug}/assign`, body, key, amount / 4);
  for (let i = 0; i < rounds; i++) {
    // Alternate which goes first, so a drift in the machine's load falls on both alike.
    const order = i % 2 === 0 ? ['plain', 'twin'] : ['twin', 'plain'];
    const got: Record<string, number> = {};
    for (const which of order) {
      const slug = which === 'plain' ? plainSlug : twinSlug;
      got[which] = await cpuPerRequest(server, `/experiment/${slug}/assign`, body, key, amount);
    }
    plain.push(got.plain!);
    targeted.push(got.twin!);
    ratios.push(got.twin! / got.plain!);
  }
  return {
    rounds,
    requests: amount,
    plainUs: median(plain),
    targetedUs: median(targeted),
    ratio: median(ratios),
    ratios,
  };
}
