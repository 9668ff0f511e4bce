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
