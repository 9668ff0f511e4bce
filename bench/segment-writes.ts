// What a log's write costs with segments (issue 33 item 3) and with ratios, caps and covariates (items 9-11),
// measured on the store itself: batches of 32 results (a group commit's usual size) appended to a SQLite
// file, as the ingest path appends them, to
//   - `plain`: a random experiment without segments (the bench's log scenario: 4 numbers and a boolean),
//   - `segmented`: a sticky experiment declaring two segment keys, every result with a user (5,000 users
//     who come back) and both values in its context: per-call, per-user and sketch rows per value,
//   - `sticky`: the same users in a sticky experiment that declares nothing (per-user sums only),
//   - `declared`: as `sticky`, declaring a ratio (cost_usd / resolved), a cap on cost_usd and a covariate
//     (latency_ms on tokens): pair sums per variant and hour, and the capped users' bins.
// Prints CPU per result (all the process' threads: planning on the main thread, SQLite's writer thread)
// and wall time per batch, scenarios interleaved. The store API is the same before and after the change,
// so the same file runs on an older checkout: `node --import tsx bench/segment-writes.ts [rounds] [kind]`
// (kind: plain or segmented alone; both by default).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declaredSums } from '../src/core/declared.js';
import { createExperiment } from '../src/core/experiment.js';
import type { NewResult } from '../src/core/writes.js';
import { openStore } from '../src/store/index.js';
import { seededRandom } from '../test/helpers/random.js';

const BATCH = 32;
const BATCHES = 400;
const WARMUP = 100;
const USERS = 5000;
const ROUNDS = Number(process.argv[2] ?? 5);

const dir = mkdtempSync(join(tmpdir(), 'agentsplit-segment-writes-'));
const store = await openStore({ kind: 'sqlite', path: join(dir, 'bench.db') });
const now = new Date().toISOString();
const variants = [
  { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
];
const plain = await store.insertExperiment(
  createExperiment({ slug: 'plain', status: 'running', variants }, now),
);
const segmented = await store.insertExperiment(
  createExperiment(
    { slug: 'segmented', status: 'running', assignment: 'sticky', segments: ['plan', 'region'], variants },
    now,
  ),
);
const sticky = await store.insertExperiment(
  createExperiment({ slug: 'sticky', status: 'running', assignment: 'sticky', variants }, now),
);
const definitions = [
  {
    name: 'cost_per_resolved',
    direction: 'decrease' as const,
    numerator: 'cost_usd',
    denominator: 'resolved',
  },
  { name: 'cost_usd', direction: 'decrease' as const, cap: { percentile: 99 } },
  { name: 'latency_ms', direction: 'decrease' as const, covariate: 'tokens' },
];
const declaring = await store.insertExperiment(
  createExperiment(
    { slug: 'declared', status: 'running', assignment: 'sticky', metrics: definitions, variants },
    now,
  ),
);
const declared = declaredSums(declaring.experiment.metrics);
const random = seededRandom(33);
const PLANS = ['free', 'pro', 'team'];
const REGIONS = ['eu', 'us', 'apac', 'latam'];
let seq = 0;

type Kind = 'plain' | 'segmented' | 'sticky' | 'declared';
const IDS: Record<Kind, number> = {
  plain: plain.id,
  segmented: segmented.id,
  sticky: sticky.id,
  declared: declaring.id,
};

function batch(kind: Kind): NewResult[] {
  return Array.from({ length: BATCH }, () => {
    const user = Math.floor(random() * USERS);
    const context = { plan: PLANS[user % 3]!, region: REGIONS[user % 4]!, session: `s-${seq}` };
    const b = user % 2 === 1;
    return {
      logId: `bench-${++seq}`,
      experimentId: IDS[kind],
      version: 1,
      variantKey: b ? 'B' : 'A',
      knownVariant: true,
      userId: `user-${user}`,
      assignmentId: null,
      input: '{"question":"Where is my order #12345?","lang":"en"}',
      output: '{"answer":"It shipped this morning.","tool":"orders"}',
      metrics: JSON.stringify({
        latency_ms: Math.round(600 + 400 * random()),
        tokens: 100 + Math.floor(random() * 100),
        cost_usd: 0.001 + random() / 500,
        rating: 1 + Math.floor(random() * 5),
        resolved: random() < 0.6,
      }),
      context: JSON.stringify(context),
      timestamp: null,
      createdAt: new Date().toISOString(),
      ...(kind === 'segmented'
        ? {
            unit: true,
            segments: { values: { plan: context.plan, region: context.region }, lookup: [], wait: false },
          }
        : {}),
      ...(kind === 'sticky' ? { unit: true } : {}),
      ...(kind === 'declared' ? { unit: true, declared } : {}),
    };
  });
}

async function run(kind: Kind, batches: number) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < batches; i++) await store.appendBatch({ results: batch(kind), exposures: [] });
  const used = process.cpuUsage(cpu);
  return {
    cpuUsPerResult: (used.user + used.system) / (batches * BATCH),
    msPerBatch: (performance.now() - started) / batches,
  };
}

const KINDS = (['plain', 'segmented', 'sticky', 'declared'] as const).filter(
  (k) => (process.argv[3] ?? k) === k,
);
for (const kind of KINDS) await run(kind, WARMUP);
const samples = Object.fromEntries(
  KINDS.map((k) => [k, [] as Array<{ cpuUsPerResult: number; msPerBatch: number }>]),
);
for (let r = 0; r < ROUNDS; r++) {
  for (const kind of r % 2 === 0 ? KINDS : [...KINDS].reverse())
    samples[kind]!.push(await run(kind, BATCHES));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [kind, runs] of Object.entries(samples)) {
  const cpu = runs.map((s) => s.cpuUsPerResult);
  const wall = runs.map((s) => s.msPerBatch);
  console.log(
    JSON.stringify({
      kind,
      cpuUsPerResult: {
        median: +median(cpu).toFixed(1),
        min: +Math.min(...cpu).toFixed(1),
        max: +Math.max(...cpu).toFixed(1),
      },
      msPerBatch: {
        median: +median(wall).toFixed(2),
        min: +Math.min(...wall).toFixed(2),
        max: +Math.max(...wall).toFixed(2),
      },
    }),
  );
}
await store.close();
rmSync(dir, { recursive: true, force: true });
