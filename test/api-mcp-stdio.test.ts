// `agentsplit mcp` as a desktop agent runs it: the official SDK's StdioClientTransport spawns
// `node bin/agentsplit.mjs mcp` with AGENTSPLIT_URL / AGENTSPLIT_API_KEY, and the SDK's Client speaks
// MCP over its stdin/stdout to the whole service listening on a socket.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  API_KEY,
  makeTempDir,
  removeTempDir,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(repoRoot, 'bin', 'agentsplit.mjs');

interface Spawned {
  client: Client;
  stderr: () => string;
}

async function spawnMcp(env: Record<string, string>): Promise<Spawned> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    env,
    cwd: repoRoot,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client({ name: 'agentsplit-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  assert.equal(first?.type, 'text');
  return (first as { text: string }).text;
}

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

describe('agentsplit mcp (stdio)', () => {
  let dir: string;
  let rt: TestRuntime;
  let base: string;
  let admin: Spawned;

  before(async () => {
    dir = makeTempDir();
    rt = await startTestRuntime(dir, 'mcp-stdio');
    base = `http://127.0.0.1:${(rt.app.server.address() as AddressInfo).port}`;
    admin = await spawnMcp({ AGENTSPLIT_URL: base, AGENTSPLIT_API_KEY: API_KEY });
  });
  after(async () => {
    await admin?.client.close();
    await rt?.close();
    removeTempDir(dir);
  });

  test('initialize, ping, tools/list with annotations; logs only on stderr', async () => {
    assert.equal(admin.client.getServerVersion()?.name, 'agentsplit');
    assert.deepEqual(await admin.client.ping(), {});
    const { tools } = await admin.client.listTools();
    assert.equal(tools.length, 15);
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.equal(byName.get('get_analysis')?.annotations?.readOnlyHint, true);
    assert.equal(byName.get('preview_assignment')?.annotations?.readOnlyHint, true);
    assert.equal(byName.get('simulate_rollout')?.annotations?.readOnlyHint, true);
    for (const name of ['list_datasets', 'list_runs', 'get_run_comparison'])
      assert.equal(byName.get(name)?.annotations?.readOnlyHint, true, name);
    assert.equal(byName.get('update_experiment')?.annotations?.destructiveHint, true);
    assert.equal(byName.get('create_experiment')?.annotations?.idempotentHint, true);
    assert.match(admin.stderr(), /agentsplit mcp: serving on stdio, calling http:\/\/127\.0\.0\.1:\d+/);
  });

  test('every tool through the API over HTTP', async () => {
    const { client } = admin;
    const slug = uniqueSlug('stdio');
    const variants = [
      { key: 'A', trafficPercent: 50, payload: { prompt: 'terse' } },
      { key: 'B', trafficPercent: 50 },
    ];
    const created = await tool(client, 'create_experiment', { slug, assignment: 'sticky', variants });
    assert.equal((created.structuredContent as { status: string }).status, 'draft', text(created));
    assert.match(
      text(await tool(client, 'create_experiment', { slug, assignment: 'sticky', variants })),
      /already exists/,
    );
    const unconfirmed = await tool(client, 'update_experiment', { slug, status: 'running' });
    assert.equal(unconfirmed.isError, true);
    assert.match(text(unconfirmed), /confirm/);
    const started = await tool(client, 'update_experiment', { slug, status: 'running', confirm: slug });
    assert.equal((started.structuredContent as { status: string }).status, 'running', text(started));
    const listed = await tool(client, 'list_experiments', { status: 'running' });
    assert.ok(
      (listed.structuredContent as { experiments: { slug: string }[] }).experiments.some(
        (e) => e.slug === slug,
      ),
    );
    assert.equal(
      ((await tool(client, 'get_experiment', { slug })).structuredContent as { slug: string }).slug,
      slug,
    );
    const preview = await tool(client, 'preview_assignment', { slug, userId: 'user-3' });
    const variant = (preview.structuredContent as { variant: string }).variant;
    assert.equal((await rt.api.assign(slug, { userId: 'user-3' })).variant, variant);
    const logged = await tool(client, 'log_result', {
      slug,
      variantKey: variant,
      metrics: { success: true },
    });
    assert.notEqual(logged.isError, true, text(logged));
    const page = await tool(client, 'get_results', { slug });
    assert.equal((page.structuredContent as { results: unknown[] }).results.length, 1);
    const analysis = await tool(client, 'get_analysis', { slug });
    const verdict = (analysis.structuredContent as { verdict: { summary: string } }).verdict.summary;
    assert.equal(
      text(analysis).split('\n')[0],
      `Verdict (${(analysis.structuredContent as { verdict: { status: string } }).verdict.status}): ${verdict}`,
    );
  });

  test('a read key cannot create: a tool error naming the scope', async () => {
    const res = await rt.api.post('/keys', { name: 'stdio-reader', scopes: ['read'] });
    assert.equal(res.statusCode, 201, res.body);
    const reader = await spawnMcp({
      AGENTSPLIT_URL: base,
      AGENTSPLIT_API_KEY: (res.json() as { key: string }).key,
    });
    try {
      const created = await tool(reader.client, 'create_experiment', {
        slug: uniqueSlug('stdio'),
        variants: [{ key: 'A', trafficPercent: 100 }],
      });
      assert.equal(created.isError, true);
      assert.match(text(created), /403: this key lacks the 'admin' scope \(it has: 'read'\)/);
    } finally {
      await reader.client.close();
    }
  });

  test('a wrong key or an unreachable server: tool errors, the process keeps serving', async () => {
    const wrong = await spawnMcp({ AGENTSPLIT_URL: base, AGENTSPLIT_API_KEY: 'not-a-key-0123456789abcdef' });
    try {
      const result = await tool(wrong.client, 'list_experiments', {});
      assert.equal(result.isError, true);
      assert.equal(text(result), 'agentsplit API answered 401: Unauthorized');
    } finally {
      await wrong.client.close();
    }
    const away = await spawnMcp({ AGENTSPLIT_URL: 'http://127.0.0.1:9', AGENTSPLIT_API_KEY: API_KEY });
    try {
      const result = await tool(away.client, 'get_experiment', { slug: 'x' });
      assert.equal(result.isError, true);
      assert.match(text(result), /cannot reach http:\/\/127\.0\.0\.1:9/);
      assert.deepEqual(await away.client.ping(), {});
    } finally {
      await away.client.close();
    }
  });
});
