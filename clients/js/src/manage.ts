// Management and reading (createExperiment, getExperiment, updateExperiment, analysis): unlike the hot
// path these throw, an AgentSplitError carrying the status and the server's message, because a script
// that creates an experiment or reads a verdict must know when it did not happen.
import { describeError, httpRequest } from './http.js';
import type { Analysis, AnalysisParams } from './manage-types.js';

export class AgentSplitError extends Error {
  constructor(
    /** The HTTP status; 0 when no answer came (network error, timeout, a closed client). */
    readonly status: number,
    /** The server's `error` (or what went wrong on the way). */
    readonly error: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path} ${status === 0 ? 'failed' : `answered ${status}`}: ${error}`);
    this.name = 'AgentSplitError';
  }
}

/** One management call: the answer's JSON when it has the `expected` status, else an AgentSplitError. */
export async function manage<T>(
  target: { baseUrl: string; apiKey: string; timeoutMs: number; unusable: string; closed: boolean },
  method: string,
  path: string,
  expected: number,
  body?: unknown,
): Promise<T> {
  if (target.closed) throw new AgentSplitError(0, 'the client is closed', method, path);
  if (target.unusable !== '') throw new AgentSplitError(0, target.unusable, method, path);
  let answer: Awaited<ReturnType<typeof httpRequest>>;
  try {
    answer = await httpRequest(target.baseUrl + path, {
      method,
      apiKey: target.apiKey,
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: target.timeoutMs,
    });
  } catch (err) {
    throw new AgentSplitError(0, describeError(err), method, path);
  }
  if (answer.status === expected && typeof answer.body === 'object' && answer.body !== null) {
    return answer.body as T;
  }
  const error = (answer.body as { error?: unknown } | undefined)?.error;
  throw new AgentSplitError(
    answer.status,
    typeof error === 'string'
      ? error
      : answer.status === expected
        ? 'the answer is not JSON'
        : `HTTP ${answer.status}`,
    method,
    path,
  );
}

export function experimentPath(slug: string, rest = ''): string {
  return `/experiment/${encodeURIComponent(slug)}${rest}`;
}

/** The analysis query string (`?…`, or '' without options); metrics as an array become comma-separated. */
export function analysisQuery(params: AnalysisParams | undefined): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value === undefined || value === null) continue;
    q.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/** The analysis with its verdict first (what a reader looks at, and what a printed answer shows first). */
export function verdictFirst(analysis: Analysis): Analysis {
  const { verdict, ...rest } = analysis;
  return { verdict, ...rest };
}
