// Management and reading (createExperiment, getExperiment, updateExperiment, analysis): unlike the hot
// path these throw, an AgentSplitError carrying the status and the server's message, because a script
// that creates an experiment or reads a verdict must know when it did not happen.
import { describeError, httpRequest } from './http.js';
import type {
  Analysis,
  AnalysisParams,
  LayerInfo,
  Preview,
  SavedGroup,
  SavedGroupSummary,
  SaveGroupFields,
} from './manage-types.js';
import type { JsonObject } from './types.js';

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

export interface ManageTarget {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  unusable: string;
  closed: boolean;
}

/**
 * One management call: the answer's JSON when its status is `expected` (or one of them), else an
 * AgentSplitError. A 204 answers undefined.
 */
export async function manage<T>(
  target: ManageTarget,
  method: string,
  path: string,
  expected: number | readonly number[],
  body?: unknown,
): Promise<T> {
  const ok = (status: number) =>
    typeof expected === 'number' ? status === expected : expected.includes(status);
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
  if (ok(answer.status) && answer.status === 204) return undefined as T;
  if (ok(answer.status) && typeof answer.body === 'object' && answer.body !== null) {
    return answer.body as T;
  }
  const error = (answer.body as { error?: unknown } | undefined)?.error;
  throw new AgentSplitError(
    answer.status,
    typeof error === 'string'
      ? error
      : ok(answer.status)
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

// Saved groups, layers and preview (ADR 0038).

const groupPath = (key: string) => `/groups/${encodeURIComponent(key)}`;

/** PUT /groups/:key (admin): creates or replaces the group; the group as saved. */
export function saveGroup(t: ManageTarget, key: string, fields: SaveGroupFields): Promise<SavedGroup> {
  return manage(t, 'PUT', groupPath(key), [200, 201], fields);
}

/** GET /groups (read): every saved group, without its values. */
export async function listGroups(t: ManageTarget): Promise<SavedGroupSummary[]> {
  return (await manage<{ groups: SavedGroupSummary[] }>(t, 'GET', '/groups', 200)).groups;
}

/** GET /groups/:key (read). */
export function getGroup(t: ManageTarget, key: string): Promise<SavedGroup> {
  return manage(t, 'GET', groupPath(key), 200);
}

/** DELETE /groups/:key (admin); a 409 (AgentSplitError) while a non-archived experiment uses it. */
export async function deleteGroup(t: ManageTarget, key: string): Promise<void> {
  await manage(t, 'DELETE', groupPath(key), [200, 204]);
}

/** GET /layers/:key (read): the experiments using the layer and the free ranges. */
export function getLayer(t: ManageTarget, key: string): Promise<LayerInfo> {
  return manage(t, 'GET', `/layers/${encodeURIComponent(key)}`, 200);
}

/** POST /experiment/:slug/preview: what assign would answer, with the deciding clause; records nothing. */
export function preview(
  t: ManageTarget,
  slug: string,
  userId: string,
  context?: JsonObject | null,
): Promise<Preview> {
  return manage(t, 'POST', experimentPath(slug, '/preview'), 200, {
    userId,
    ...(context == null ? {} : { context }),
  });
}
