// A JSON call to a running server for tests that drive it over HTTP: asserts a 2xx, parses the answer.
import assert from 'node:assert/strict';

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read field by field and checked by the asserts
export type Call = <T = any>(method: string, path: string, body?: unknown) => Promise<T>;

/** `baseUrl` is read at each call (tests start their server in `before`). */
export function jsonCall(baseUrl: () => string, apiKey: string): Call {
  return async (method, path, body) => {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

/** A call's status, Retry-After and JSON body (the text when it is not JSON), whatever the status. */
export interface Answered {
  status: number;
  retryAfter: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read field by field and checked by the asserts
  body: any;
}

/** Like jsonCall, for tests that expect failures too (outages): never asserts, reports what came back. */
export function answerCall(
  baseUrl: () => string,
  apiKey: string,
): (method: string, path: string, body?: unknown) => Promise<Answered> {
  return async (method, path, body) => {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: parsed };
  };
}
