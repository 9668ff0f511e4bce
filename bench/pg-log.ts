// PostgreSQL's log path (issue 37): throughput at 16 and 64 connections, the statements each batch sends
// (agentsplit_database_statements_total over the batches of agentsplit_group_commit_batch_size) and
// PostgreSQL's own CPU per result (every postgres process's utime + stime from /proc, and the exited
// backends' through the postmaster's cutime + cstime), for each PostgreSQL target of the run.
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from './servers.js';
import { settle } from './servers.js';

export interface PgLogRow {
  target: string;
  connections: number;
  rps: number[];
  statementsPerBatch: number[];
  resultsPerBatch: number[];
  pgCpuUsPerResult: number[];
}

/** CPU (ms) of every process named postgres, with the children they reaped. */
function postgresCpuMs(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    if (name !== 'postgres') continue;
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return ticks * 10;
}

async function counters(
  server: Server,
  key: string,
): Promise<{ statements: number; batches: number; results: number }> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { 'x-api-key': key } })).text();
  const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  return {
    statements: value(/^agentsplit_database_statements_total (\S+)/m),
    batches: value(/^agentsplit_group_commit_batch_size_count\{kind="results"\} (\S+)/m),
    results: value(/^agentsplit_group_commit_batch_size_sum\{kind="results"\} (\S+)/m),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** `drive` runs one load of the log scenario at `connections` and answers its req/s. */
export async function pgLog(
  targets: Server[],
  key: string,
  connections: number[],
  reps: number,
  drive: (server: Server, connections: number) => Promise<number>,
): Promise<PgLogRow[]> {
  const rows: PgLogRow[] = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const c of connections) {
      for (const server of rep % 2 === 0 ? targets : [...targets].reverse()) {
        await settle(targets);
        const before = await counters(server, key);
        const cpu = postgresCpuMs();
        const rps = await drive(server, c);
        await settle(targets);
        const after = await counters(server, key);
        const batches = after.batches - before.batches;
        const results = after.results - before.results;
        let row = rows.find((r) => r.target === server.name && r.connections === c);
        if (!row) {
          row = {
            target: server.name,
            connections: c,
            rps: [],
            statementsPerBatch: [],
            resultsPerBatch: [],
            pgCpuUsPerResult: [],
          };
          rows.push(row);
        }
        row.rps.push(rps);
        row.statementsPerBatch.push(
          batches > 0 ? (after.statements - before.statements) / batches : Number.NaN,
        );
        row.resultsPerBatch.push(batches > 0 ? results / batches : Number.NaN);
        row.pgCpuUsPerResult.push(results > 0 ? ((postgresCpuMs() - cpu) * 1000) / results : Number.NaN);
      }
    }
  }
  return rows;
}

export function pgLogLines(rows: PgLogRow[], now: string, before?: string): string[] {
  const lines = [
    '',
    `PostgreSQL \`log\` (issue 37): median of ${rows[0]?.rps.length ?? 0} runs; statements per batch from agentsplit_database_statements_total (BEGIN and COMMIT included), PostgreSQL CPU per result from /proc:`,
    '',
    `| target | conns | req/s | ${before ? '× before | ' : ''}results per batch | statements per batch | PostgreSQL CPU per result (µs) |`,
    `|---|---:|---:|${before ? '---:|' : ''}---:|---:|---:|`,
  ];
  for (const r of rows) {
    const b = before ? rows.find((x) => x.target === before && x.connections === r.connections) : undefined;
    const ratio = b && r.target === now ? `${(median(r.rps) / median(b.rps)).toFixed(2)}×` : '';
    lines.push(
      `| ${r.target} | ${r.connections} | ${median(r.rps).toFixed(0)} | ${before ? `${ratio} | ` : ''}` +
        `${median(r.resultsPerBatch).toFixed(1)} | ${median(r.statementsPerBatch).toFixed(1)} | ${median(r.pgCpuUsPerResult).toFixed(1)} |`,
    );
  }
  return lines;
}
