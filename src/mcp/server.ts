// The MCP server (the official SDK's McpServer) with agentsplit's tools, for one caller: `call` reaches
// the API as them. Over HTTP a fresh one answers each request (stateless); over stdio one lives per process.
import { createRequire } from 'node:module';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerRolloutTools } from './rollout-tools.js';
import { registerRunTools } from './run-tools.js';
import { type Call, registerTools } from './tools.js';

// src/mcp/ and dist/mcp/ are both two levels below package.json.
const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const INSTRUCTIONS =
  'agentsplit runs A/B experiments on AI agents. Read with list_experiments, get_experiment, ' +
  'get_analysis (the verdict first), get_results and preview_assignment; create_experiment makes a draft; ' +
  'update_experiment changes status, variants or metrics and needs confirm: <slug> for status or traffic ' +
  'changes. A winner ships with start_rollout (a guarded ramp; simulate_rollout tries it first), read with get_rollout, moved with ' +
  'change_rollout (both need confirm: <slug>). Offline runs over datasets: list_datasets, list_runs, get_run_comparison (paired, the verdict first). Each tool needs its API scope (read, log or admin); a refusal names what the key lacks.';

export function createMcpServer(call: Call): McpServer {
  const server = new McpServer({ name: 'agentsplit', version }, { instructions: INSTRUCTIONS });
  registerTools(server, call);
  registerRolloutTools(server, call);
  registerRunTools(server, call);
  return server;
}
