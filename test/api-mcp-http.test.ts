// MCP over Streamable HTTP at /mcp, spoken by the official SDK's client (Client +
// StreamableHTTPClientTransport) against the whole service listening on a socket: initialize, ping,
// tools/list with annotations, every tool called, scopes as tool errors, confirm, DNS-rebinding refusals,
// both ways of presenting a key, the exact 401, and two instances answering one client (stateless).
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startRuntime } from '../src/runtime.js';
import {
  API_KEY,
  assertError,
  assertUnauthorized,
  BACKEND,
  makeTempDir,
  removeTempDir,
  send,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';
import { createTestDatabase } from './helpers/postgres.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function portOf(rt: TestRuntime): number {
  return (rt.app.server.address() as AddressInfo).port;
}

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'agentsplit-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  assert.equal(first?.type, 'text');
  return (first as { text: string }).text;
}

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = await tool(client, name, args);
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
  return result;
}

async function newKey(rt: TestRuntime, scopes: string[]): Promise<string> {
  const res = await rt.api.post('/keys', { name: `mcp-${scopes.join('-')}`, scopes });
  assert.equal(res.statusCode, 201, res.body);
  return (res.json() as { key: string }).key;
}

describe('MCP over Streamable HTTP', () => {
  let dir: string;
  let rt: TestRuntime;
  let other: TestRuntime | undefined;
  let url: string;
  let admin: Client;

  before(async () => {
    dir = makeTempDir();
    rt = await startTestRuntime(dir, 'mcp-http');
    url = `http://127.0.0.1:${portOf(rt)}/mcp`;
    admin = await connect(url, { 'x-api-key': API_KEY });
  });
  after(async () => {
    await admin?.close();
    await other?.close();
    await rt?.close();
    removeTempDir(dir);
  });

  test("a tool call counts once toward the key's rate limit, however many API calls it makes", async () => {
    const res = await rt.api.post('/keys', { name: 'mcp-limited', scopes: ['admin'], rateLimitPerSecond: 1 });
    assert.equal(res.statusCode, 201, res.body);
    const key = (res.json() as { key: string }).key;
    const slug = uniqueSlug('mcp-limit');
    await rt.api.createExperiment({ slug, status: 'draft' });
    const call = async (id: number, name: string, args: Record<string, unknown>) => {
      // Each in its own one-second window: the call before it used its window's one request.
      await new Promise((r) => setTimeout(r, 1100));
      const answer = await send(portOf(rt), {
        method: 'POST',
        url: '/mcp',
        headers: { ...MCP_HEADERS, 'x-api-key': key },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      });
      assert.equal(answer.statusCode, 200, answer.body);
      return answer.json().result as CallToolResult;
    };
    // update_experiment is three passes of the pipeline (the /mcp request, a GET and a PATCH).
    const updated = await call(1, 'update_experiment', { slug, status: 'running', confirm: slug });
    assert.notEqual(updated.isError, true, JSON.stringify(updated.content));
    assert.equal((await rt.api.get(`/experiment/${slug}`)).json().status, 'running');
    const read = await call(2, 'get_experiment', { slug });
    assert.notEqual(read.isError, true, JSON.stringify(read.content));
  });

  test('initialize and ping; the server names itself and says how to use it', async () => {
    const info = admin.getServerVersion();
    assert.equal(info?.name, 'agentsplit');
    assert.match(admin.getInstructions() ?? '', /confirm/);
    assert.deepEqual(await admin.ping(), {});
  });

  test('tools/list: the fifteen tools with descriptions, JSON input schemas and annotations', async () => {
    const { tools } = await admin.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.deepEqual([...byName.keys()].sort(), [
      'change_rollout',
      'create_experiment',
      'get_analysis',
      'get_experiment',
      'get_results',
      'get_rollout',
      'get_run_comparison',
      'list_datasets',
      'list_experiments',
      'list_runs',
      'log_result',
      'preview_assignment',
      'simulate_rollout',
      'start_rollout',
      'update_experiment',
    ]);
    for (const t of tools) {
      assert.ok((t.description ?? '').length > 40, `${t.name} has a description an agent can act on`);
      assert.equal(t.inputSchema.type, 'object');
    }
    for (const name of [
      'list_experiments',
      'get_experiment',
      'get_analysis',
      'get_results',
      'preview_assignment',
      'list_datasets',
      'list_runs',
      'get_run_comparison',
    ])
      assert.equal(byName.get(name)?.annotations?.readOnlyHint, true, name);
    for (const name of ['create_experiment', 'log_result']) {
      assert.equal(byName.get(name)?.annotations?.readOnlyHint, false, name);
      assert.equal(byName.get(name)?.annotations?.destructiveHint, false, name);
    }
    assert.equal(byName.get('update_experiment')?.annotations?.destructiveHint, true);
    assert.deepEqual(byName.get('get_experiment')?.inputSchema.required, ['slug']);
    assert.ok(!byName.has('delete_experiment'));
  });

  test('every tool: create (a draft, idempotent), start with confirm, preview, log, results, analysis', async () => {
    const slug = uniqueSlug('mcp');
    const variants = [
      { key: 'A', trafficPercent: 50, payload: { prompt: 'terse' } },
      { key: 'B', trafficPercent: 50, payload: { prompt: 'verbose' } },
    ];
    const metrics = [{ name: 'success', direction: 'increase', role: 'primary' }];
    const created = await ok(admin, 'create_experiment', { slug, assignment: 'sticky', variants, metrics });
    assert.equal((created.structuredContent as { status: string }).status, 'draft');
    const again = await ok(admin, 'create_experiment', { slug, assignment: 'sticky', variants, metrics });
    assert.match(text(again), /already exists with this definition/);
    const differs = await tool(admin, 'create_experiment', {
      slug,
      variants: [{ key: 'A', trafficPercent: 100 }],
    });
    assert.equal(differs.isError, true);
    assert.match(text(differs), /already exists with a different definition \(variants\)/);

    const refused = await tool(admin, 'update_experiment', { slug, status: 'running' });
    assert.equal(refused.isError, true);
    assert.match(text(refused), new RegExp(`confirm: '${slug}'`));
    assert.equal((await rt.api.get(`/experiment/${slug}`)).json().status, 'draft');
    const wrong = await tool(admin, 'update_experiment', { slug, status: 'running', confirm: 'nope' });
    assert.equal(wrong.isError, true);
    const started = await ok(admin, 'update_experiment', { slug, status: 'running', confirm: slug });
    assert.equal((started.structuredContent as { status: string }).status, 'running');
    const traffic = await tool(admin, 'update_experiment', {
      slug,
      variants: [variants[0], { ...variants[1], trafficPercent: 50 }, { key: 'C', trafficPercent: 0 }],
    });
    assert.match(text(traffic), /traffic split/);
    const metricsOnly = await ok(admin, 'update_experiment', {
      slug,
      metrics: [...metrics, { name: 'latency_ms', direction: 'decrease' }],
    });
    assert.equal((metricsOnly.structuredContent as { metrics: unknown[] }).metrics.length, 2);

    const listed = await ok(admin, 'list_experiments', { status: 'running', limit: 100 });
    const slugs = (listed.structuredContent as { experiments: { slug: string }[] }).experiments.map(
      (e) => e.slug,
    );
    assert.ok(slugs.includes(slug));
    const shown = await ok(admin, 'get_experiment', { slug });
    assert.equal((shown.structuredContent as { slug: string }).slug, slug);

    // The preview is the variant assign then gives, and writes no exposure.
    const preview = await ok(admin, 'preview_assignment', { slug, userId: 'user-7' });
    const previewed = (preview.structuredContent as { variant: string }).variant;
    assert.match(text(preview), /sticky/);
    await rt.ingest.drain();
    assert.deepEqual(await rt.exposuresOf(slug), []);
    assert.equal((await rt.api.assign(slug, { userId: 'user-7' })).variant, previewed);
    await rt.ingest.drain();
    assert.equal((await rt.exposuresOf(slug)).length, 1, 'only the assign wrote an exposure');

    for (let i = 0; i < 6; i++) {
      const variantKey = i % 2 === 0 ? 'A' : 'B';
      await ok(admin, 'log_result', { slug, variantKey, userId: `u${i}`, metrics: { success: i % 3 === 0 } });
    }
    const page = await ok(admin, 'get_results', { slug, limit: 4 });
    const { results, nextCursor } = page.structuredContent as {
      results: { userId: string }[];
      nextCursor: string | null;
    };
    assert.deepEqual(
      results.map((r) => r.userId),
      ['u5', 'u4', 'u3', 'u2'],
    );
    assert.ok(nextCursor !== null);
    const rest = await ok(admin, 'get_results', { slug, limit: 4, cursor: nextCursor });
    const older = (rest.structuredContent as { results: { userId: string }[] }).results;
    assert.deepEqual(
      older.map((r) => r.userId),
      ['u1', 'u0'],
    );

    const analysis = await ok(admin, 'get_analysis', { slug });
    const verdict = (analysis.structuredContent as { verdict: { summary: string } }).verdict.summary;
    assert.ok(text(analysis).startsWith(`Verdict (`), text(analysis));
    assert.ok(text(analysis).split('\n')[0]!.endsWith(verdict));
    assert.match(text(analysis), /success \(primary, proportion, increase is better\)/);
    assert.match(text(analysis), /\n {2}B: n 3, mean/);
  });

  test('offline runs (issue 40): list_datasets, list_runs, get_run_comparison with the verdict first', async () => {
    const slug = uniqueSlug('mcp-runs');
    await rt.api.createExperiment({
      slug,
      metrics: [{ name: 'correct', direction: 'increase', role: 'primary' }],
    });
    const items = Array.from({ length: 40 }, (_, i) => ({ id: `q${i}`, input: { q: i } }));
    const dataset = `mcp-${slug}`;
    assert.equal((await rt.api.post('/datasets', { name: dataset, items })).statusCode, 201);
    const opened = await rt.api.post(`/experiment/${slug}/runs`, { dataset });
    assert.equal(opened.statusCode, 201, opened.body);
    const runId = opened.json().id as string;
    const results = items.flatMap((item, i) =>
      ['A', 'B'].map((variantKey) => ({
        variantKey,
        runId,
        itemId: item.id,
        trial: 1,
        output: { answer: `${variantKey}${i}` },
        metrics: { correct: variantKey === 'B' ? i < 36 : i < 20 },
      })),
    );
    await rt.api.logMany(slug, results);

    const reader = await connect(url, { 'x-api-key': await newKey(rt, ['read']) });
    try {
      const datasets = await ok(reader, 'list_datasets', { limit: 100 });
      const listed = (datasets.structuredContent as { datasets: Array<{ name: string; items: number }> })
        .datasets;
      assert.deepEqual(
        listed.filter((d) => d.name === dataset).map((d) => d.items),
        [40],
      );
      const runs = await ok(reader, 'list_runs', { slug });
      assert.deepEqual(
        (runs.structuredContent as { runs: Array<{ id: string }> }).runs.map((r) => r.id),
        [runId],
      );
      const compared = await ok(reader, 'get_run_comparison', { run: runId, control: 'A' });
      const api = (await rt.api.get(`/runs/${runId}/comparison?control=A`)).json();
      assert.deepEqual(compared.structuredContent, api);
      const lines = text(compared).split('\n');
      assert.equal(lines[0], api.verdict.summary);
      assert.match(lines[0]!, /^B beats A on `correct`: \+40\.0 points/);
      assert.match(
        text(compared),
        /^correct B: \+40 points \[.*\], p .* \(Holm\), 16 wins \/ 24 ties \/ 0 losses over 40 items: ✓ better$/m,
      );
      const unknown = await tool(reader, 'get_run_comparison', { run: 'no-such-run' });
      assert.equal(unknown.isError, true);
      assert.match(text(unknown), /agentsplit API answered 404/);
    } finally {
      await reader.close();
    }
  });

  test('random experiments: the preview gives the weights, not a variant', async () => {
    const { slug } = await rt.api.createExperiment();
    const preview = await ok(admin, 'preview_assignment', { slug, userId: 'user-1' });
    const answer = preview.structuredContent as { variant: unknown; weights: Record<string, number> };
    assert.equal(answer.variant, null);
    assert.deepEqual(answer.weights, { A: 50, B: 50 });
    assert.match(text(preview), /fresh weighted draw/);
  });

  test('preview with a context says whether the user enters and which clause decided (issue 35)', async () => {
    const { slug } = await rt.api.createExperiment({
      slug: uniqueSlug('mcp-who'),
      assignment: 'sticky',
      targeting: { plan: { $in: ['pro', 'team'] } },
    });
    const out = await ok(admin, 'preview_assignment', { slug, userId: 'u-1', context: { plan: 'free' } });
    const kept = out.structuredContent as { inExperiment: boolean; reason: string; variant: string };
    assert.deepEqual([kept.inExperiment, kept.reason, kept.variant], [false, 'targeting', 'A']);
    assert.match(
      text(out),
      /is not in .* \(targeting\).*`plan` is "free", rule wants \{"\$in":\["pro","team"\]\}/s,
    );
    const inside = await ok(admin, 'preview_assignment', { slug, userId: 'u-1', context: { plan: 'pro' } });
    assert.equal((inside.structuredContent as { inExperiment: boolean }).inExperiment, true);
    await rt.ingest.drain();
    assert.deepEqual(await rt.exposuresOf(slug), [], 'a preview records nothing');
  });

  test('get_analysis says what was exposed in the unit randomized: users with their calls, or calls', async () => {
    const counted: Record<string, { users: Record<string, number>; calls: Record<string, number> }> = {};
    for (const assignment of ['sticky', 'random'] as const) {
      const { slug } = await rt.api.createExperiment({ slug: uniqueSlug(`mcp-${assignment}`), assignment });
      const users: Record<string, number> = { A: 0, B: 0 };
      const calls: Record<string, number> = { A: 0, B: 0 };
      // 30 users calling 1 to 3 times each.
      for (let u = 0; u < 30; u++) {
        const seen = new Set<string>();
        for (let c = 0; c <= u % 3; c++) {
          const { variant } = await rt.api.assign(slug, { userId: `user-${u}` });
          if (!seen.has(variant)) users[variant]! += 1;
          seen.add(variant);
          calls[variant]! += 1;
        }
      }
      await rt.ingest.drain();
      counted[assignment] = { users, calls };
      const result = await ok(admin, 'get_analysis', { slug });
      const answer = result.structuredContent as {
        exposures: Record<string, number>;
        exposed: { unit: string; counts: Record<string, number> };
      };
      assert.deepEqual(answer.exposures, calls);
      const line = text(result)
        .split('\n')
        .find((l) => l.startsWith(`${slug}: `));
      if (assignment === 'sticky') {
        assert.equal(users.A! + users.B!, 30, 'the sticky hash keeps a user in one variant');
        assert.deepEqual(answer.exposed, { unit: 'user', counts: users });
        assert.ok(
          line?.endsWith(
            `; exposed A ${users.A} users (${calls.A} calls), B ${users.B} users (${calls.B} calls)`,
          ),
          line,
        );
      } else {
        assert.deepEqual(answer.exposed, { unit: 'call', counts: calls });
        assert.ok(line?.endsWith(`; exposed A ${calls.A} calls, B ${calls.B} calls`), line);
      }
    }
    const { users, calls } = counted.sticky!;
    assert.ok(users.A! < calls.A! && users.B! < calls.B!, 'repeat users: fewer users than calls');
  });

  test("the API's refusals are tool errors with its message: scopes, unknown experiments, validation", async () => {
    const reader = await connect(url, { authorization: `Bearer ${await newKey(rt, ['read'])}` });
    try {
      const created = await tool(reader, 'create_experiment', {
        slug: uniqueSlug('mcp'),
        variants: [{ key: 'A', trafficPercent: 100 }],
      });
      assert.equal(created.isError, true);
      assert.match(text(created), /403: this key lacks the 'admin' scope \(it has: 'read'\)/);
      const logged = await tool(reader, 'log_result', { slug: 'x', variantKey: 'A' });
      assert.match(text(logged), /lacks the 'log' scope/);
      // What it may do, it does.
      const listed = await ok(reader, 'list_experiments', {});
      assert.ok(Array.isArray((listed.structuredContent as { experiments: unknown[] }).experiments));
    } finally {
      await reader.close();
    }
    const missing = await tool(admin, 'get_experiment', { slug: 'no-such-experiment' });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /404: no experiment with slug 'no-such-experiment'/);
    const invalid = await tool(admin, 'create_experiment', {
      slug: uniqueSlug('mcp'),
      variants: [{ key: 'A', trafficPercent: 60 }],
    });
    assert.equal(invalid.isError, true);
    assert.match(text(invalid), /^agentsplit API answered 400: /);
    const badArgs = await tool(admin, 'get_experiment', {});
    assert.equal(badArgs.isError, true);
  });

  test('keys: x-api-key and Bearer both work; none or a wrong one is exactly the 401', async () => {
    const port = portOf(rt);
    const body = JSON.stringify(INIT);
    const keys: Record<string, string>[] = [{ 'x-api-key': API_KEY }, { authorization: `Bearer ${API_KEY}` }];
    for (const key of keys) {
      const res = await send(port, {
        method: 'POST',
        url: '/mcp',
        headers: { ...MCP_HEADERS, ...key },
        payload: body,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().result.serverInfo.name, 'agentsplit');
      assert.equal(res.headers['mcp-session-id'], undefined, 'stateless: no session');
    }
    assertUnauthorized(
      await send(port, { method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: body }),
    );
    const wrong = { ...MCP_HEADERS, authorization: 'Bearer not-a-key-at-all-0123456789' };
    assertUnauthorized(await send(port, { method: 'POST', url: '/mcp', headers: wrong, payload: body }));
  });

  test('a foreign Host or Origin is refused with 403 (DNS rebinding); local ones are not', async () => {
    const port = portOf(rt);
    const headers = { ...MCP_HEADERS, 'x-api-key': API_KEY };
    const payload = JSON.stringify(INIT);
    const post = (extra: Record<string, string>) =>
      send(port, { method: 'POST', url: '/mcp', headers: { ...headers, ...extra }, payload });
    assertError(
      await post({ host: 'attacker.example:8080' }),
      403,
      /Host 'attacker.example:8080' is not allowed/,
    );
    assertError(
      await post({ origin: 'https://attacker.example' }),
      403,
      /Origin 'https:\/\/attacker.example'/,
    );
    assert.equal(
      (await post({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).statusCode,
      200,
    );
    // Through the SDK's client too: the refusal surfaces as an error, nothing is served.
    await assert.rejects(
      connect(url, { 'x-api-key': API_KEY, origin: 'https://attacker.example' }),
      /Origin 'https:\/\/attacker.example' is not allowed/,
    );
  });

  test('configured hosts and origins (MCP_ALLOWED_HOSTS / MCP_ALLOWED_ORIGINS) replace the local ones', async () => {
    other = await startTestRuntime(dir, 'mcp-http-hosts', {
      mcp: { allowedHosts: ['agents.example.com'], allowedOrigins: ['https://console.example.com'] },
    });
    const port = portOf(other);
    const post = (extra: Record<string, string>) =>
      send(port, {
        method: 'POST',
        url: '/mcp',
        headers: { ...MCP_HEADERS, 'x-api-key': API_KEY, ...extra },
        payload: JSON.stringify(INIT),
      });
    assertError(await post({}), 403, /Host '127.0.0.1:\d+' is not allowed/);
    assert.equal((await post({ host: 'agents.example.com' })).statusCode, 200);
    assert.equal(
      (await post({ host: 'agents.example.com', origin: 'https://console.example.com' })).statusCode,
      200,
    );
    assertError(await post({ host: 'agents.example.com', origin: 'https://agents.example.com' }), 403);
    await other.close();
    other = undefined;
  });

  test("malformed MCP requests: the transport's JSON-RPC errors or the API's 400, never a 5xx", async () => {
    const port = portOf(rt);
    const headers = { ...MCP_HEADERS, 'x-api-key': API_KEY };
    const post = (payload: string, extra: Record<string, string> = {}) =>
      send(port, { method: 'POST', url: '/mcp', headers: { ...headers, ...extra }, payload });
    const notRpc = await post('{"jsonrpc":"2.0"}');
    assert.equal(notRpc.statusCode, 400);
    assert.equal(notRpc.json().error.code, -32700);
    const sse = await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { accept: 'application/json' });
    assert.equal(sse.statusCode, 406);
    assert.match(sse.json().error.message, /Not Acceptable/);
    assertError(await post('"ping"'), 400, /^body must be object,array$/);
    const unknown = await post(
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_experiment"}}',
    );
    assert.equal(unknown.statusCode, 200);
    assert.equal(unknown.json().result.isError, true);
    const note = await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    assert.equal(note.statusCode, 202);
    assert.equal(note.body, '');
  });

  test('start_rollout, get_rollout and change_rollout: confirm required for changes; a read key only reads', async () => {
    const slug = uniqueSlug('mcp-rollout');
    await rt.api.createExperiment({ slug, assignment: 'sticky' });
    // The dry run needs a guardrail: this experiment has none, so it says so; it starts nothing.
    const dry = await tool(admin, 'simulate_rollout', { slug, variant: 'B', unitsPerHour: 100 });
    assert.equal(dry.isError, true);
    assert.match(text(dry), /has no guardrail metrics/);
    const guarded = uniqueSlug('mcp-dry');
    await rt.api.createExperiment({
      slug: guarded,
      assignment: 'sticky',
      metrics: [{ name: 'cost_usd', direction: 'decrease', role: 'guardrail' }],
    });
    const results = [];
    for (let i = 0; i < 200; i++) {
      const a = await rt.api.assign(guarded, { userId: `u-${i}` });
      results.push({
        variantKey: a.variant,
        assignmentId: a.assignmentId,
        metrics: { cost_usd: 1 + (i % 7) / 10 },
      });
    }
    await rt.api.logMany(guarded, results);
    await rt.ingest.drain();
    const tried = await ok(admin, 'simulate_rollout', {
      slug: guarded,
      variant: 'B',
      unitsPerHour: 600,
      runs: 100,
    });
    assert.match(
      text(tried),
      /^Dry run of B over 100 ramps: a false rollback in \d+(\.\d)?%, 100% after 180 min; with the effects, rolled back in /,
    );
    assert.equal((await rt.api.get(`/experiment/${guarded}/rollout`)).statusCode, 404, 'nothing started');
    const unconfirmed = await tool(admin, 'start_rollout', { slug, variant: 'B' });
    assert.equal(unconfirmed.isError, true);
    assert.match(text(unconfirmed), new RegExp(`call again with confirm: '${slug}'`));
    assert.equal((await rt.api.get(`/experiment/${slug}/rollout`)).statusCode, 404, 'nothing started');
    const started = await ok(admin, 'start_rollout', { slug, variant: 'B', confirm: slug });
    assert.match(text(started), /^Rollout of B: running, 5% served B, the rest A\./);
    const reader = await connect(url, { 'x-api-key': await newKey(rt, ['read']) });
    try {
      const read = await ok(reader, 'get_rollout', { slug });
      assert.equal((read.structuredContent as { state: string }).state, 'running');
      const refused = await tool(reader, 'change_rollout', { slug, action: 'pause', confirm: slug });
      assert.equal(refused.isError, true);
      assert.match(text(refused), /403/);
    } finally {
      await reader.close();
    }
    const paused = await ok(admin, 'change_rollout', {
      slug,
      action: 'pause',
      reason: 'tickets up',
      confirm: slug,
    });
    assert.match(text(paused), /^Rollout of B: paused, 5% served B, the rest A \(tickets up\)\./);
    const wrong = await tool(admin, 'change_rollout', { slug, action: 'pause', confirm: slug });
    assert.equal(wrong.isError, true);
    assert.match(text(wrong), /409: cannot pause a rollout that is paused/);
  });

  test('GET and DELETE /mcp: 405 with a JSON-RPC error (a stateless server has no stream or session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await send(portOf(rt), { method, url: '/mcp', headers: { 'x-api-key': API_KEY } });
      assert.equal(res.statusCode, 405, res.body);
      assert.equal(res.headers.allow, 'POST');
      assert.equal(res.json().error.message, 'Method not allowed.');
    }
  });

  test('stateless: two instances answer one client, request by request', async () => {
    const second = await startTestRuntime(dir, 'mcp-http-second');
    try {
      // Both instances on one database would share experiments; separate ones still show that any
      // instance answers any request: the client initialized on the first calls tools on the second.
      const ports = [portOf(rt), portOf(second)];
      let turn = 0;
      const alternating: typeof fetch = (input, init) => {
        const target = new URL(String(input instanceof Request ? input.url : input));
        target.port = String(ports[turn++ % 2]);
        return fetch(target, init);
      };
      const client = new Client({ name: 'two-instances', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { 'x-api-key': API_KEY } },
          fetch: alternating,
        }),
      );
      try {
        const { slug } = await second.api.createExperiment();
        let served = 0;
        for (let i = 0; i < 4; i++) {
          const result = await tool(client, 'get_experiment', { slug });
          if (result.isError !== true) served++;
          else assert.match(text(result), /404/);
        }
        assert.ok(turn >= 6, `requests went to both instances (${turn})`);
        assert.equal(served, 2, 'every other request reached the instance that has the experiment');
        assert.deepEqual(await client.ping(), {});
      } finally {
        await client.close();
      }
    } finally {
      await second.close();
    }
  });
});

describe('MCP on two instances of one PostgreSQL database', {
  skip: BACKEND !== 'postgres' && 'PostgreSQL only',
}, () => {
  test("one client's consecutive requests, alternating between the instances, act on the same data", async () => {
    const database = await createTestDatabase('mcp');
    const runtimes: Awaited<ReturnType<typeof startRuntime>>[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const rt = await startRuntime({ apiKey: API_KEY, database: { kind: 'postgres', url: database.url } });
        runtimes.push(rt);
        await rt.app.listen({ port: 0, host: '127.0.0.1' });
      }
      const ports = runtimes.map((rt) => (rt.app.server.address() as AddressInfo).port);
      const seen: number[] = [];
      const alternating: typeof fetch = (input, init) => {
        const target = new URL(String(input instanceof Request ? input.url : input));
        target.port = String(ports[seen.length % 2]);
        seen.push(Number(target.port));
        return fetch(target, init);
      };
      const client = new Client({ name: 'two-instances', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${ports[0]}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${API_KEY}` } },
          fetch: alternating,
        }),
      );
      try {
        const slug = uniqueSlug('mcp-two');
        const variants = [
          { key: 'A', trafficPercent: 50 },
          { key: 'B', trafficPercent: 50 },
        ];
        await ok(client, 'create_experiment', { slug, variants });
        const started = await ok(client, 'update_experiment', { slug, status: 'running', confirm: slug });
        assert.equal((started.structuredContent as { status: string }).status, 'running');
        await ok(client, 'log_result', { slug, variantKey: 'A', metrics: { success: true } });
        await ok(client, 'log_result', { slug, variantKey: 'B', metrics: { success: false } });
        const page = await ok(client, 'get_results', { slug });
        assert.equal((page.structuredContent as { results: unknown[] }).results.length, 2);
        assert.deepEqual(new Set(seen), new Set(ports), 'both instances answered');
      } finally {
        await client.close();
      }
    } finally {
      for (const rt of runtimes) await rt.close();
      await database.drop();
    }
  });
});
