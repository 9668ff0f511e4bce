// /mcp: the MCP server over Streamable HTTP (ADR 0030), stateless: each POST gets a fresh McpServer and
// the SDK's web-standard transport, so any instance answers any request. Its tools call the API through
// inject() with the key this request presented, so every tool call passes the whole pipeline (key,
// scope, rate limit, validation) as that key. A foreign Host or Origin is refused (DNS rebinding).
import type { IncomingHttpHeaders } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Type } from 'typebox';
import { ForbiddenError } from '../core/errors.js';
import { createMcpServer } from '../mcp/server.js';
import type { Call } from '../mcp/tools.js';
import type { Inject } from './inject.js';
import { Relayed, type Route, route } from './route.js';
import { errorResponses } from './schemas/common.js';

export interface McpOptions {
  /** Host names (no port) /mcp answers under; `*`: any. */
  allowedHosts: string[];
  /** Origins (`scheme://host[:port]`) a browser may call /mcp from; `*`: any; empty: those of allowed hosts. */
  allowedOrigins: string[];
}

/** Who /mcp answers when the app is given nothing (tests; main.ts passes config's, which adds HOST). */
export const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** The request headers the transport reads (nothing else reaches it: no key, no cookies). */
const TRANSPORT_HEADERS = [
  'accept',
  'content-type',
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
];

const JSON_TYPE = 'application/json';

function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.indexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

/** Null when Host and Origin are acceptable, else why not (DNS rebinding: a page's origin or name). */
export function rebindingRefusal(headers: IncomingHttpHeaders, options: McpOptions): string | null {
  const hosts = options.allowedHosts;
  const host = headers.host;
  if (!hosts.includes('*') && (host === undefined || !hosts.includes(hostnameOf(host)))) {
    return `Host '${String(host).slice(0, 100)}' is not allowed for /mcp (MCP_ALLOWED_HOSTS)`;
  }
  const origin = headers.origin;
  if (origin === undefined) return null;
  const origins = options.allowedOrigins;
  if (origins.includes('*') || origins.includes(origin.toLowerCase())) return null;
  if (origins.length === 0) {
    try {
      if (hosts.includes(hostnameOf(new URL(origin).host))) return null;
    } catch {
      // Not a URL (`null` from a sandboxed page): refused below.
    }
  }
  return `Origin '${origin.slice(0, 100)}' is not allowed for /mcp (MCP_ALLOWED_ORIGINS)`;
}

/** `call` for the tools: the API in-process, as the key this request presented. */
function callAs(inject: Inject, headers: IncomingHttpHeaders): Call {
  const credential: Record<string, string | string[]> = {};
  if (headers['x-api-key'] !== undefined) credential['x-api-key'] = headers['x-api-key'];
  else if (headers.authorization !== undefined) credential.authorization = headers.authorization;
  return async (method, path, body) => {
    // Relayed: the key's rate limit counted the /mcp request; its tool's API calls do not count again.
    const res = await inject(
      {
        method,
        url: path,
        headers: body === undefined ? credential : { ...credential, 'content-type': JSON_TYPE },
        payload: body === undefined ? undefined : JSON.stringify(body),
      },
      true,
    );
    let parsed: unknown = null;
    if (res.body !== '') {
      try {
        parsed = JSON.parse(res.body);
      } catch {
        parsed = res.body;
      }
    }
    return { status: res.statusCode, body: parsed };
  };
}

/** What a stateless server answers to GET (no stream to resume) and DELETE (no session to end). */
const notAllowed = () =>
  new Relayed(
    405,
    { 'content-type': JSON_TYPE, allow: 'POST' },
    JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }),
  );

const JsonRpc = {
  description: 'A JSON-RPC message (or batch) of the Model Context Protocol',
  content: {
    [JSON_TYPE]: {
      schema: { type: 'object', additionalProperties: true },
      examples: { tools: { value: { jsonrpc: '2.0', id: 2, result: { tools: [] } } } },
    },
  },
};

const McpBody = Type.Unsafe<unknown>({
  type: ['object', 'array'],
  description: 'A JSON-RPC request, notification or response, or a batch of them',
  examples: [{ jsonrpc: '2.0', id: 2, method: 'tools/list' }],
});

/** `inject`: the app's, known once the pipeline is built (hence a function). */
export function mcpRoutes(inject: () => Inject, options: McpOptions): Route[] {
  const tags = ['mcp'];
  const refusals = { ...errorResponses, 405: JsonRpc };
  return [
    route({
      method: 'POST',
      url: '/mcp',
      scope: 'any',
      schema: {
        tags,
        summary: 'MCP (Model Context Protocol) over Streamable HTTP, stateless',
        description:
          'Any valid key; each tool then needs the scope of the API route it calls (a refusal is a tool ' +
          'error naming the scope). Answers JSON (no SSE stream); a notification alone, 202 without a body. Host and Origin must be allowed ' +
          '(MCP_ALLOWED_HOSTS, MCP_ALLOWED_ORIGINS), else 403.',
        body: McpBody,
        response: { 200: JsonRpc, ...refusals },
      },
      handle: async ({ headers, body }) => {
        const refused = rebindingRefusal(headers, options);
        if (refused !== null) throw new ForbiddenError(refused);
        const web = new Headers();
        for (const name of TRANSPORT_HEADERS) {
          const value = headers[name];
          if (typeof value === 'string') web.set(name, value);
        }
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        const server = createMcpServer(callAs(inject(), headers));
        try {
          await server.connect(transport);
          const request = new Request('http://localhost/mcp', { method: 'POST', headers: web });
          const response = await transport.handleRequest(request, { parsedBody: body });
          const text = await response.text();
          return new Relayed(response.status, Object.fromEntries(response.headers), text);
        } finally {
          await server.close();
        }
      },
    }),
    ...(['GET', 'DELETE'] as const).map((method) =>
      route({
        method,
        url: '/mcp',
        scope: 'any',
        schema: {
          tags,
          summary: `MCP: ${method} is not allowed (a stateless server has no stream or session)`,
          hide: true,
          response: { 405: JsonRpc, ...errorResponses },
        },
        status: 405,
        handle: () => notAllowed(),
      }),
    ),
  ];
}
