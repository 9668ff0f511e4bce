// Client bench: local assign per call (sync assignLocal and async assign, and an OpenFeature evaluation
// through the published server SDK and AgentSplitProvider), remote assign round trip against a local server
// it starts itself, and the caller's cost of 10,000 log calls with background delivery. Run from the
// repository root: node --import tsx clients/js/bench.ts
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { OpenFeature } from '@openfeature/server-sdk';
import { AgentSplit, AgentSplitProvider } from './src/index.js';
import { createExperiment, ROOT_KEY, startServer } from './test/server.js';

const silent = { warn: () => {}, error: () => {} };

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function summary(samples: number[]): { median: number; p99: number; mean: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { median: quantile(s, 0.5), p99: quantile(s, 0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

const rows: Array<[string, string, string, string]> = [];
const fmt = (ns: number) =>
  ns >= 1e6
    ? `${(ns / 1e6).toFixed(2)} ms`
    : ns >= 1e3
      ? `${(ns / 1e3).toFixed(2)} µs`
      : `${ns.toFixed(0)} ns`;

const server = await startServer();
try {
  const slug = await createExperiment(server, 'bench', {
    variants: [
      { key: 'A', trafficPercent: 50, payload: { prompt: 'You are a helpful assistant.' } },
      { key: 'B', trafficPercent: 50, payload: { prompt: 'You are a concise assistant.' } },
    ],
  });
  const users = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);

  // 1. Local assign. Samples of 100 calls timed together (a clock read costs ~40 ns itself); rounds of
  // 5,000 calls with a flush between them (untimed), so the queue never overflows and every exposure is
  // delivered as in real use. Each call includes the draw, the id (UUIDv7 + check) and the exposure queued.
  const local = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, local: true, logger: silent });
  await local.refreshDefinitions();
  const PER_SAMPLE = 100;
  const ROUNDS = 10;
  const PER_ROUND = 5_000;
  for (const mode of ['sync', 'async'] as const) {
    const samples: number[] = [];
    let u = 0;
    for (let round = 0; round < ROUNDS + 2; round++) {
      for (let s = 0; s < PER_ROUND / PER_SAMPLE; s++) {
        const t0 = process.hrtime.bigint();
        if (mode === 'sync') {
          for (let k = 0; k < PER_SAMPLE; k++) local.assignLocal(slug, users[u++ % users.length]!);
        } else {
          for (let k = 0; k < PER_SAMPLE; k++) await local.assign(slug, users[u++ % users.length]!);
        }
        const dt = Number(process.hrtime.bigint() - t0) / PER_SAMPLE;
        if (round >= 2) samples.push(dt); // two rounds of warm-up
      }
      await local.flush(30_000);
    }
    const r = summary(samples);
    rows.push([
      `local ${mode === 'sync' ? 'assignLocal (sync)' : 'assign (async)'}, per call`,
      fmt(r.median),
      fmt(r.p99),
      `${samples.length * PER_SAMPLE} calls; p99 of ${PER_SAMPLE}-call means`,
    ]);
  }
  const st = local.stats();
  await local.close();
  if (st.failed > 0 || st.dropped > 0) console.error(`local: ${st.failed} failed, ${st.dropped} dropped`);

  // 1b. The same through OpenFeature: getObjectValue on the SDK's client, AgentSplitProvider underneath
  // (the SDK's hooks and context merge, the draw, the id, the exposure queued, the user remembered).
  const provider = new AgentSplitProvider({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: silent });
  await OpenFeature.setProviderAndWait('bench', provider);
  const flags = OpenFeature.getClient('bench');
  const fallback = { prompt: 'default' };
  const ofSamples: number[] = [];
  let u = 0;
  for (let round = 0; round < ROUNDS + 2; round++) {
    for (let s = 0; s < PER_ROUND / PER_SAMPLE; s++) {
      const t0 = process.hrtime.bigint();
      for (let k = 0; k < PER_SAMPLE; k++) {
        await flags.getObjectValue(slug, fallback, { targetingKey: users[u++ % users.length]! });
      }
      const dt = Number(process.hrtime.bigint() - t0) / PER_SAMPLE;
      if (round >= 2) ofSamples.push(dt);
    }
    await provider.client.flush(30_000);
  }
  const ofr = summary(ofSamples);
  rows.push([
    'OpenFeature getObjectValue (provider), per call',
    fmt(ofr.median),
    fmt(ofr.p99),
    `${ofSamples.length * PER_SAMPLE} calls; p99 of ${PER_SAMPLE}-call means`,
  ]);
  const ofStats = provider.client.stats();
  await OpenFeature.close();
  if (ofStats.failed > 0 || ofStats.dropped > 0)
    console.error(`openfeature: ${ofStats.failed} failed, ${ofStats.dropped} dropped`);

  // 2. Remote assign round trip: sequential calls, one at a time, keep-alive connection.
  const remote = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: silent });
  for (let i = 0; i < 300; i++) await remote.assign(slug, users[i]!);
  const rtt: number[] = [];
  let defaults = 0;
  for (let i = 0; i < 3000; i++) {
    const t0 = process.hrtime.bigint();
    const a = await remote.assign(slug, users[i % users.length]!);
    rtt.push(Number(process.hrtime.bigint() - t0));
    if (a.source !== 'server') defaults++;
  }
  const r = summary(rtt);
  rows.push([
    'remote assign, round trip',
    fmt(r.median),
    fmt(r.p99),
    `3000 sequential calls${defaults ? `, ${defaults} defaults` : ''}`,
  ]);

  // 3. 10,000 log calls: the caller's time (queueing only), then the time until all are delivered.
  const totals: number[] = [];
  const deliveries: number[] = [];
  for (let run = 0; run < 5; run++) {
    const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: silent });
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 10_000; i++) {
      client.log(slug, {
        variantKey: i % 2 ? 'A' : 'B',
        userId: users[i]!,
        input: { question: 'Where is my order?' },
        output: { answer: 'It ships today.' },
        metrics: { tokens: 153, latency_ms: 812, cost_usd: 0.0021 },
      });
    }
    const t1 = process.hrtime.bigint();
    await yieldLoop();
    const ok = await client.flush(60_000);
    const t2 = process.hrtime.bigint();
    const s = client.stats();
    await client.close();
    if (!ok || s.delivered !== 10_000)
      console.error(`log run ${run}: delivered ${s.delivered}, dropped ${s.dropped}`);
    totals.push(Number(t1 - t0));
    deliveries.push(Number(t2 - t0));
  }
  const lt = summary(totals);
  rows.push([
    '10,000 log calls, caller total',
    fmt(lt.median),
    fmt(Math.max(...totals)),
    'median / max of 5 runs',
  ]);
  rows.push([
    '  log, per call',
    fmt(lt.median / 10_000),
    fmt(Math.max(...totals) / 10_000),
    'median / max of 5 runs',
  ]);
  const dl = summary(deliveries);
  rows.push([
    '  until all 10,000 delivered',
    fmt(dl.median),
    fmt(Math.max(...deliveries)),
    'median / max, 100 a batch',
  ]);
  await remote.close();
} finally {
  await server.stop();
}

const header: [string, string, string, string] = ['measure', 'median', 'p99 / max', 'notes'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`node ${process.version}, ${process.platform} ${process.arch}`);
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
