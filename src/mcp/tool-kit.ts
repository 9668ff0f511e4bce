// What every MCP tool is made of (ADR 0030): one call to the API as the caller, its answer as the tool's
// result, a refusal as a tool error carrying the API's message.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

/** What the API answered: its status and its body (parsed JSON; text when not JSON; null when empty). */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** One request to the agentsplit API as the MCP caller (their key, their scopes). */
export type Call = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => Promise<ApiAnswer>;

/** A refusal by the API, shown to the agent as the API said it. */
export class ToolError extends Error {}

export function ok(value: unknown, text?: string): CallToolResult {
  const result: CallToolResult = {
    content: [{ type: 'text', text: text ?? JSON.stringify(value, null, 2) }],
  };
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    result.structuredContent = value as Record<string, unknown>;
  return result;
}

export function failed(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** The answer's body when 2xx; else a ToolError with the API's `error` and its status. */
export async function send(call: Call, method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) {
  const answer = await call(method, path, body);
  if (answer.status >= 200 && answer.status < 300) return answer.body;
  throw new ToolError(apiError(answer));
}

export function apiError(answer: ApiAnswer): string {
  const error = (answer.body as { error?: unknown } | null)?.error;
  const text = typeof error === 'string' ? error : JSON.stringify(answer.body);
  return `agentsplit API answered ${answer.status}: ${text}`;
}

/** Runs a tool body: API refusals and anything else thrown become tool errors with their message. */
export async function run(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    return failed(err instanceof Error ? err.message : String(err));
  }
}

export const slugPart = (slug: string) => encodeURIComponent(slug);

export const Slug = z.string().min(1).describe("The experiment's slug, e.g. 'checkout-prompt'");
