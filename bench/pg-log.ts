// PostgreSQL's log path (issue 37): throughput of `log` and `logs (100 per request)` at 16 and 64
// connections, the statements each batch sends (agentsplit_database_statements_total over the batches of
// agentsplit_group_commit_batch_size; a build without that counter shows n/a), the transactions each batch
// commits (pg_stat_database xact_commit + xact_rollback of the target's own database, so it is measured the
// same way for every build) and PostgreSQL's own CPU per result (every postgres process's utime + stime
// from /proc, and the exited backends' through the postmaster's cutime + cstime), for each PostgreSQL
// target of the run. pg_stat_statements would count statements inside PostgreSQL, but it needs
// shared_preload_libraries (a server restart), so the bench does not rely on it.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import type { Server } from './servers.js';
import { settle } from './servers.js';

export interface PgLogRow {
  target: string;
  scenario: string;
  connections: number;
  rps: number[];
  /** NaN where the build has no agentsplit_database_statements_total. */
  statementsPerBatch: number[];
  transactionsPerBatch: number[];
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
  const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? Number.NaN);
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

/** Transactions committed or rolled back in `database`, as PostgreSQL's statistics have them. */
async function transactions(admin: pg.Client, database: string): Promise<number> {
  const r = await admin.query<{ n: string }>(
    'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  return Number(r.rows[0]?.n ?? Number.NaN);
}

/**
 * `targets`: each PostgreSQL server with the name of its own database; `adminUrl` reads
 * pg_stat_database from another database, so the reading does not count itself. `drive` runs one load
 * of `scenario` at `connections` and answers its req/s.
 */
export async function pgLog(
  targets: Array<{ server: Server; database: string }>,
  key: string,
  adminUrl: string,
  scenarios: string[],
  connections: number[],
  reps: number,
  drive: (server: Server, scenario: string, connections: number) => Promise<number>,
): Promise<PgLogRow[]> {
  const rows: PgLogRow[] = [];
  const servers = targets.map((t) => t.server);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // A backend sends its statistics at most once a second: each run waits that out after its load, so the
  // next reading of the same database is current; this wait covers what ran before the section.
  await new Promise((r) => setTimeout(r, 1100));
  try {
    for (let rep = 0; rep < reps; rep++) {
      for (const scenario of scenarios) {
        for (const c of connections) {
          for (const { server, database } of rep % 2 === 0 ? targets : [...targets].reverse()) {
            await settle(servers);
            const before = await counters(server, key);
            const xacts = await transactions(admin, database);
            const cpu = postgresCpuMs();
            const rps = await drive(server, scenario, c);
            await settle(servers);
            const pgCpu = postgresCpuMs() - cpu;
            await new Promise((r) => setTimeout(r, 1100));
            const after = await counters(server, key);
            const batches = after.batches - before.batches;
            const results = after.results - before.results;
            const row = rowOf(rows, server.name, scenario, c);
            row.rps.push(rps);
            row.statementsPerBatch.push(
              batches > 0 ? (after.statements - before.statements) / batches : Number.NaN,
            );
            row.transactionsPerBatch.push(
              batches > 0 ? ((await transactions(admin, database)) - xacts) / batches : Number.NaN,
            );
            row.resultsPerBatch.push(batches > 0 ? results / batches : Number.NaN);
            row.pgCpuUsPerResult.push(results > 0 ? (pgCpu * 1000) / results : Number.NaN);
          }
        }
      }
    }
  } finally {
    await admin.end();
  }
  return rows;
}

function rowOf(rows: PgLogRow[], target: string, scenario: string, connections: number): PgLogRow {
  let row = rows.find((r) => r.target === target && r.scenario === scenario && r.connections === connections);
  if (!row) {
    row = {
      target,
      scenario,
      connections,
      rps: [],
      statementsPerBatch: [],
      transactionsPerBatch: [],
      resultsPerBatch: [],
      pgCpuUsPerResult: [],
    };
    rows.push(row);
  }
  return row;
}

const shown = (x: number, digits: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(digits));

export function pgLogLines(rows: PgLogRow[], now: string, before?: string): string[] {
  const lines = [
    '',
    `PostgreSQL \`log\` and \`logs\` (issue 37): median of ${rows[0]?.rps.length ?? 0} runs; statements per batch from agentsplit_database_statements_total (BEGIN and COMMIT included; n/a: the build has no such counter), transactions per batch from pg_stat_database of the target's database, PostgreSQL CPU per result from /proc (all postgres processes, so other users of the server count too):`,
    '',
    `| target | scenario | conns | req/s | ${before ? '× before | ' : ''}results per batch | statements per batch | transactions per batch | PostgreSQL CPU per result (µs) |`,
    `|---|---|---:|---:|${before ? '---:|' : ''}---:|---:|---:|---:|`,
  ];
  for (const r of rows) {
    const b = before
      ? rows.find((x) => x.target === before && x.scenario === r.scenario && x.connections === r.connections)
      : undefined;
    const ratio = b && r.target === now ? `${(median(r.rps) / median(b.rps)).toFixed(2)}×` : '';
    lines.push(
      `| ${r.target} | ${r.scenario} | ${r.connections} | ${median(r.rps).toFixed(0)} | ${before ? `${ratio} | ` : ''}` +
        `${shown(median(r.resultsPerBatch), 1)} | ${shown(median(r.statementsPerBatch), 1)} | ` +
        `${shown(median(r.transactionsPerBatch), 1)} | ${shown(median(r.pgCpuUsPerResult), 1)} |`,
    );
  }
  return lines;
}
