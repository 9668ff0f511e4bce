// `agentsplit mcp`: the MCP server on stdin/stdout for desktop agents (ADR 0030). Its tools call the API
// at --url / AGENTSPLIT_URL with --key / AGENTSPLIT_API_KEY, as the HTTP server's /mcp does in-process.
// stdout carries nothing but JSON-RPC; anything for people goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command } from 'commander';
import { createMcpServer } from '../../mcp/server.js';
import type { Call } from '../../mcp/tools.js';
import type { Api } from './api.js';
import { session } from './session.js';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description(
      'serve MCP (Model Context Protocol) on stdin/stdout for a desktop agent; its tools call the API at ' +
        "--url with --key (AGENTSPLIT_URL, AGENTSPLIT_API_KEY), with that key's scopes",
    )
    .action(async (_options: unknown, command: Command) => {
      const { api } = session(command);
      const server = createMcpServer(apiCall(api));
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        transport.onclose = resolve;
        process.stdin.once('end', resolve);
      });
      await server.connect(transport);
      process.stderr.write(`agentsplit mcp: serving on stdio, calling ${api.base}\n`);
      await closed;
      await server.close();
    });
}

/** The tools' `call`: the API over HTTP; an unreachable server is the tool's error, not the process's. */
function apiCall(api: Api): Call {
  return async (method, path, body) => {
    const { status, text } = await api.any(method, path, body);
    if (text === '') return { status, body: null };
    try {
      return { status, body: JSON.parse(text) };
    } catch {
      return { status, body: text };
    }
  };
}
