// The OpenTelemetry examples as a user runs them (README, "Traces (OpenTelemetry)"): examples/otel/agent.mjs
// and examples/otel/agent.py, each a child process against one real server started with
// TRACE_PRICES=examples/otel/prices.json. Each run must be one result of the experiment, of the variant it was
// assigned, whose feedback holds the tokens and tool calls it sent and their cost at the table's prices, and
// whose trace is the one it printed. The Python one needs python3 with opentelemetry-sdk and
// opentelemetry-exporter-otlp-proto-http: without them it is skipped, with the reason (the machine's package
// mirror lacks three of the exporter's own dependencies: .ci/run tries and says so).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeTempDir, removeTempDir } from './helpers/app.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KEY = 'otel-examples-root-key-0123456789abcdef';
const SLUG = 'otel-support-agent';
/** The variants' payloads name the model the examples' stand-in model call reports. */
const MODELS = { A: 'gpt-4o', B: 'gpt-4o-mini' };

interface Price {
  input: number;
  output: number;
}
const PRICES = (
  JSON.parse(readFileSync(join(repoRoot, 'examples', 'otel', 'prices.json'), 'utf8')) as {
    models: Record<string, Price>;
  }
).models;

/** Why the Python example cannot run here, or false. */
function pythonSkip(): string | false {
  const r = spawnSync(
    'python3',
    ['-c', 'import opentelemetry.sdk, opentelemetry.exporter.otlp.proto.http.trace_exporter'],
    { encoding: 'utf8' },
  );
  if (r.status === 0) return false;
  const why = (r.stderr || r.error?.message || '').trim().split('\n').at(-1);
  return `python3 has no OpenTelemetry SDK (pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http): ${why}`;
}

interface Ran {
  code: number | null;
  output: string;
}

/** Runs a command to its end without blocking the event loop (the server child keeps draining its pipes). */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  return new Promise((res) => {
    const child = spawn(cmd, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, output });
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      res({ code: -1, output: `${output}\n${err.message}` });
    });
  });
}

/** What an example printed: its assignment, variant, trace and what its spans said. */
interface Printed {
  assignmentId: string;
  variant: string;
  traceId: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
}

function printed(output: string): Printed {
  const a = /^assignment (\S+) \(variant (\S+)\)$/m.exec(output);
  const t = /^trace ([0-9a-f]{32})$/m.exec(output);
  const s = /^sent (\S+): input_tokens (\d+), output_tokens (\d+), tool_calls (\d+)$/m.exec(output);
  assert.ok(a && t && s, `the example did not print its assignment, trace and usage:\n${output}`);
  return {
    assignmentId: a[1]!,
    variant: a[2]!,
    traceId: t[1]!,
    model: s[1]!,
    inputTokens: Number(s[2]),
    outputTokens: Number(s[3]),
    toolCalls: Number(s[4]),
  };
}

interface TracedResult {
  variantKey: string;
  userId: string | null;
  assignmentId: string | null;
  feedback: Record<string, number | boolean>;
  trace?: {
    traceId: string;
    spanCount: number;
    models: string[];
    spans: Array<{ operation: string | null; model: string | null }>;
  };
}

describe('the OpenTelemetry examples (examples/otel)', () => {
  let dir: string;
  let server: ServerProcess;

  async function call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `${method} ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text);
  }

  before(async () => {
    dir = makeTempDir();
    server = await startServer({
      DATA_DIR: dir,
      API_KEY: KEY,
      DATABASE_URL: `sqlite:${join(dir, 'otel.db')}`,
      TRACE_PRICES: 'examples/otel/prices.json',
    });
    await call('POST', '/experiments', {
      slug: SLUG,
      status: 'running',
      assignment: 'sticky',
      variants: Object.entries(MODELS).map(([key, model]) => ({
        key,
        trafficPercent: 50,
        payload: { model },
      })),
    });
  });

  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    if (dir) removeTempDir(dir);
  });

  /** Runs one example for `user` and checks the result its run became. */
  async function runExample(
    t: { diagnostic: (message: string) => void },
    cmd: string,
    args: string[],
    user: string,
  ): Promise<void> {
    const r = await run(
      cmd,
      [...args, SLUG],
      { ...process.env, AGENTSPLIT_URL: server.baseUrl, AGENTSPLIT_API_KEY: KEY, AGENTSPLIT_USER: user },
      60_000,
    );
    assert.equal(r.code, 0, `the example failed:\n${r.output}`);
    const sent = printed(r.output);
    t.diagnostic(`${user}: variant ${sent.variant}, ${sent.model}, trace ${sent.traceId}`);
    assert.equal(
      sent.model,
      MODELS[sent.variant as keyof typeof MODELS],
      'the variant payload picks the model',
    );

    const page = (await call('GET', `/experiment/${SLUG}/results?limit=1000`)) as { results: TracedResult[] };
    const mine = page.results.filter((x) => x.assignmentId === sent.assignmentId);
    assert.equal(mine.length, 1, `one result for the run (got ${mine.length})`);
    const result = mine[0]!;
    assert.equal(result.variantKey, sent.variant);
    assert.equal(result.userId, user);

    const f = result.feedback;
    assert.equal(f.input_tokens, sent.inputTokens);
    assert.equal(f.output_tokens, sent.outputTokens);
    assert.equal(f.tool_calls, sent.toolCalls);
    assert.equal(f.tool_errors, 0);
    assert.equal(f.error, 0);
    assert.ok(typeof f.latency_ms === 'number' && f.latency_ms > 0, `latency_ms ${f.latency_ms}`);
    const price = PRICES[sent.model]!;
    const cost = (sent.inputTokens * price.input + sent.outputTokens * price.output) / 1e6;
    assert.ok(
      typeof f.cost_usd === 'number' && Math.abs(f.cost_usd - cost) < 1e-12,
      `cost_usd ${f.cost_usd}, expected ${cost}`,
    );

    assert.ok(result.trace, 'the result carries its trace');
    assert.equal(result.trace.traceId, sent.traceId);
    assert.equal(result.trace.spanCount, 3);
    assert.deepEqual(result.trace.models, [sent.model]);
    assert.deepEqual(result.trace.spans.map((s) => s.operation).sort(), [
      'chat',
      'execute_tool',
      'invoke_agent',
    ]);
  }

  test('examples/otel/agent.mjs: its run is one result with the tokens, tool calls and cost it sent', async (t) => {
    await runExample(t, process.execPath, ['examples/otel/agent.mjs'], 'user-node');
  });

  test('examples/otel/agent.py: its run is one result with the tokens, tool calls and cost it sent', {
    skip: pythonSkip(),
  }, async (t) => {
    await runExample(t, 'python3', ['examples/otel/agent.py'], 'user-python');
  });
});
