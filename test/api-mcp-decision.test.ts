// The decision through MCP (issue 36, item 5): update_experiment completes with {variant, note}, refuses an
// unknown variant as a tool error naming the variants, and get_experiment answers the decision.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  API_KEY,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

let dir: string;
let rt: TestRuntime;
let admin: Client;

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'mcp-decision');
  const url = `http://127.0.0.1:${(rt.app.server.address() as AddressInfo).port}/mcp`;
  admin = new Client({ name: 'agentsplit-test', version: '1.0.0' });
  await admin.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'x-api-key': API_KEY } } }),
  );
});

after(async () => {
  await admin?.close();
  await rt?.close();
  removeTempDir(dir);
});

async function tool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await admin.callTool({ name, arguments: args })) as CallToolResult;
}

test('update_experiment completes with a decision; get_experiment shows it', {
  skip: SKIP_BACKEND,
}, async () => {
  const { slug } = await rt.api.createExperiment();
  const wrong = await tool('update_experiment', {
    slug,
    status: 'completed',
    decision: { variant: 'C' },
    confirm: slug,
  });
  assert.equal(wrong.isError, true);
  assert.match(JSON.stringify(wrong.content), /one of the variants \(A, B\) or 'none'/);
  const done = await tool('update_experiment', {
    slug,
    status: 'completed',
    decision: { variant: 'B', note: 'as good, cheaper' },
    confirm: slug,
  });
  assert.notEqual(done.isError, true, JSON.stringify(done.content));
  const shown = await tool('get_experiment', { slug });
  const decision = (shown.structuredContent as { decision: { variant: string; note: string } }).decision;
  assert.deepEqual([decision.variant, decision.note], ['B', 'as good, cheaper']);
  assert.deepEqual((await rt.api.get(`/experiment/${slug}`)).json().decision, decision);
});
