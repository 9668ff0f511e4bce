// Server CPU per request of each hot path (issue 37): all of a server's threads, from /proc, divided by
// the requests of a fixed-size run, after the server has settled (the writer's commit and the exposures'
// background write of the run are counted in it). Rounds alternate the targets, so a drift in the
// machine's load falls on all alike; a busy machine blurs throughput far more than CPU per request.
import autocannon from 'autocannon';
import { type Server, settle } from './servers.js';

export interface CostPath {
  name: string;
  path: string;
  body: string;
  connections: number;
}

export interface PathCost {
  target: string;
  path: string;
  /** Median µs of server CPU per request over the rounds, and each round's. */
  us: number;
  rounds: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function cpuPerRequest(server: Server, p: CostPath, key: string, amount: number): Promise<number> {
  await settle([server]);
  const before = server.cpuMs();
  const r = await autocannon({
    url: server.url + p.path,
    method: 'POST',
    connections: p.connections,
    amount,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: p.body,
    idReplacement: true,
  });
  if (r.non2xx > 0 || r.errors > 0) {
    throw new Error(`${server.name} ${p.path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  }
  // What the run left behind (a commit, the exposures' write) belongs to it.
  await settle([server]);
  return ((server.cpuMs() - before) * 1000) / amount;
}

/**
 * For each target (the bare baseline answers every path at its `/`), each path's CPU per request: the
 * median of `rounds` alternating rounds of `amount` requests.
 */
export async function pathCosts(
  targets: Array<{ server: Server; bare?: boolean }>,
  paths: CostPath[],
  key: string,
  rounds: number,
  amount: number,
): Promise<PathCost[]> {
  const samples = new Map<string, number[]>();
  for (const { server, bare } of targets) {
    for (const p of paths) await cpuPerRequest(server, bare ? { ...p, path: '/' } : p, key, amount / 4);
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const p of paths) {
      for (const { server, bare } of order) {
        const us = await cpuPerRequest(server, bare ? { ...p, path: '/' } : p, key, amount);
        const k = `${server.name}\u0000${p.name}`;
        samples.set(k, [...(samples.get(k) ?? []), us]);
      }
    }
  }
  return [...samples].map(([k, us]) => {
    const [target, path] = k.split('\u0000') as [string, string];
    return { target, path, us: median(us), rounds: us };
  });
}

/** The report's table: per path, the bare baseline, each agentsplit target, and now/before when both ran. */
export function pathCostLines(costs: PathCost[], bare: string, now: string, before?: string): string[] {
  const us = (target: string, path: string) => costs.find((c) => c.target === target && c.path === path);
  const shown = (c: PathCost | undefined) =>
    c === undefined ? '' : `${c.us.toFixed(1)} [${c.rounds.map((r) => r.toFixed(1)).join(', ')}]`;
  const lines = [
    '',
    `server CPU per request, all threads (/proc), median of alternating rounds [each round] (µs; issue 37)${before ? `; before: ${before}` : ''}:`,
    '',
    `| path | bare node:http | ${before ? 'before | ' : ''}now |${before ? ' now/before |' : ''}`,
    `|---|---:|${before ? '---:|' : ''}---:|${before ? '---:|' : ''}`,
  ];
  for (const path of [...new Set(costs.map((c) => c.path))]) {
    const n = us(now, path);
    const b = before ? us(before, path) : undefined;
    lines.push(
      `| ${path} | ${shown(us(bare, path))} | ${before ? `${shown(b)} | ` : ''}${shown(n)} |` +
        `${before ? ` ${n && b ? `${(n.us / b.us).toFixed(2)}×` : ''} |` : ''}`,
    );
  }
  return lines;
}
