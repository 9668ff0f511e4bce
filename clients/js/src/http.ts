// One HTTP request with a timeout, through the global fetch. Throws only on network errors and timeouts;
// callers turn those into fail-open answers or retries.

export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when there is none or it is not JSON. */
  body: unknown;
}

export async function httpRequest(
  url: string,
  init: {
    method: string;
    apiKey: string;
    body?: string;
    headers?: Record<string, string>;
    timeoutMs: number;
    /** Aborts the request (the client closing); its timeout applies as well. */
    signal?: AbortSignal;
  },
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { 'x-api-key': init.apiKey, ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  // One controller for both the timeout and the caller's signal (AbortSignal.any is Node 20.3+).
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
    init.timeoutMs,
  );
  timer.unref?.();
  const outer = init.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  let text: string;
  let res: Response;
  try {
    res = await fetch(url, { method: init.method, headers, body: init.body, signal: controller.signal });
    text = await res.text();
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
  let body: unknown;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { status: res.status, headers: res.headers, body };
}

/** Retry-After in ms (delta-seconds or an HTTP date), or 0 when absent or unreadable. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number {
  const v = headers?.get('retry-after');
  if (!v) return 0;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : 0;
}

/** The `error` of an `{"error": "..."}` answer, or the status. */
export function errorText(answer: HttpAnswer): string {
  const b = answer.body as { error?: unknown } | undefined;
  return typeof b?.error === 'string' ? `${answer.status} ${b.error}` : `HTTP ${answer.status}`;
}

export function describeError(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return 'timed out';
    if (err.name === 'AbortError') return 'aborted';
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code) return `${err.message} (${cause.code})`;
    return err.message;
  }
  return String(err);
}
