// What a 5-clause targeting condition adds to assign (issue 35): server CPU per request (all threads, from
// /proc), rounds alternating the plain sticky experiment and a targeted one whose condition every bench
// user passes (so both record the same exposure), on the same server. CPU per request is what a busy
// machine cannot blur the way it blurs throughput.
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
  /** Median server CPU per assign, µs. */
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
  const res = await fetch(`${server.url}/experiments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({
      slug: 'bench-targeted',
      status: 'running',
      assignment: 'sticky',
      variants,
      targeting: TARGETED,
    }),
  });
  if (!res.ok) throw new Error(`creating bench-targeted: ${res.status} ${await res.text()}`);
  const plain: number[] = [];
  const targeted: number[] = [];
  const ratios: number[] = [];
  await cpuPerRequest(server, `/experiment/${plainSlug}/assign`, body, key, amount / 4); // warm
  await cpuPerRequest(server, '/experiment/bench-targeted/assign', body, key, amount / 4);
  for (let i = 0; i < rounds; i++) {
    // Alternate which goes first, so a drift in the machine's load falls on both alike.
    const order = i % 2 === 0 ? ['plain', 'targeted'] : ['targeted', 'plain'];
    const got: Record<string, number> = {};
    for (const which of order) {
      const slug = which === 'plain' ? plainSlug : 'bench-targeted';
      got[which] = await cpuPerRequest(server, `/experiment/${slug}/assign`, body, key, amount);
    }
    plain.push(got.plain!);
    targeted.push(got.targeted!);
    ratios.push(got.targeted! / got.plain!);
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
