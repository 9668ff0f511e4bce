// `agentsplit` with ratio metrics, caps and covariates (issue 33 items 9-11), run as users run it against a
// real server: `experiments create --file` passes the definitions on and lists them; `analyze` shows the
// ratio's label, the cap and what it capped per variant, the adjustment's variance reduction and each
// variant's unadjusted reading beside the adjusted table, every number as GET /analysis answers it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { MetricAnalysis } from '../src/answers/analysis.js';
import { formatCount, formatLift, formatLiftInterval, formatP, formatValue } from '../src/answers/format.js';
import { makeTempDir, removeTempDir } from './helpers/app.js';
import { jsonCall } from './helpers/call.js';
import { derivedExperiment, logDerived } from './helpers/derived-data.js';
import { startServer } from './helpers/server.js';

const BIN = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'bin', 'agentsplit.mjs');
const KEY = 'cli-derived-root-key-0123456789';
const SLUG = 'derived-cli';

const percent = (x: number) => `${Number((x * 100).toFixed(1))}%`;

test('experiments create passes ratio, cap and covariate on; analyze shows what they did', async () => {
  const dir = makeTempDir();
  const server = await startServer({ API_KEY: KEY, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}` });
  const call = jsonCall(() => server.baseUrl, KEY);
  const cli = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, [BIN, '--url', server.baseUrl, '--key', KEY, ...args]))
      .stdout;
  try {
    const file = join(dir, 'experiment.json');
    writeFileSync(file, JSON.stringify(derivedExperiment(SLUG)));
    const created = await cli('experiments', 'create', '--file', file);
    assert.match(
      created,
      /metrics +cost_per_success ↓ secondary \(cost_usd \/ success\), cost_usd ↓ secondary \(capped at p90\), latency_ms ↓ primary \(adjusted on input_tokens\)\n/,
    );
    const stored = (await call('GET', `/experiment/${SLUG}`)).metrics;
    assert.deepEqual(stored, [
      {
        name: 'cost_per_success',
        direction: 'decrease',
        role: 'secondary',
        numerator: 'cost_usd',
        denominator: 'success',
      },
      { name: 'cost_usd', direction: 'decrease', role: 'secondary', cap: { percentile: 90 } },
      { name: 'latency_ms', direction: 'decrease', role: 'primary', covariate: 'input_tokens' },
    ]);

    await logDerived(call, SLUG);
    const analysis = await call('GET', `/experiment/${SLUG}/analysis`);
    const metric = (name: string): MetricAnalysis =>
      analysis.metrics.find((m: MetricAnalysis) => m.name === name);
    const lines = (await cli('analyze', SLUG)).split('\n');
    const has = (line: string) =>
      assert.ok(lines.includes(line), `no line ${JSON.stringify(line)} in:\n${lines.join('\n')}`);

    assert.ok(
      lines.some((l) => l.startsWith('cost_per_success (secondary; cost_usd per success, users as units;')),
    );
    const cost = metric('cost_usd');
    const cap = cost.cap!;
    has(
      `  capped at ${formatValue(cap.value, 'mean')} (p90): ${Math.round(cap.units!)} of 300 users, ${percent(cap.share!)}`,
    );
    for (const v of cost.variants) {
      has(
        `  ${v.key} capped ${formatCount(Math.round(v.capped!.units!))} users (${percent(v.capped!.share!)})`,
      );
    }

    const latency = metric('latency_ms');
    has(`  adjusted on input_tokens: variance −${Math.round(latency.adjustment!.varianceReduction! * 100)}%`);
    const [A, B] = latency.variants;
    has(`  A unadjusted: mean ${formatValue(A!.unadjusted!.mean, 'mean')}`);
    const before = B!.unadjusted!;
    has(
      `  B unadjusted: mean ${formatValue(before.mean, 'mean')}, lift ${formatLift(before.relative!.estimate)} ` +
        `${formatLiftInterval(before.relative!.ci)}, p ${formatP(before.pValue)}`,
    );
    // The table's row is the adjusted reading.
    assert.ok(
      lines.some(
        (l) =>
          /^B +150 +/.test(l) &&
          l.includes(formatLift(B!.relative!.estimate)) &&
          l.includes(formatP(B!.pValue)),
      ),
      lines.join('\n'),
    );
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    removeTempDir(dir);
  }
});
