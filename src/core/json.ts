// JSON value types and the structural limits the service enforces on client JSON.

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export const MAX_JSON_DEPTH = 64;

/**
 * What makes parsed client JSON unacceptable, or null:
 * - nesting deeper than `limit` levels;
 * - a number too large for a double (JSON.parse turns 1e400 into Infinity, which would be stored as null
 *   and so not come back as sent);
 * - a string (value or key) with a NUL character or a lone UTF-16 surrogate: PostgreSQL cannot store
 *   either, and SQLite would hand back something else, so both backends refuse them alike.
 * Iterative: no stack overflow however deep. The location is searched for only once a problem is known.
 */
export function findJsonProblem(value: unknown, root = 'value', limit = MAX_JSON_DEPTH): string | null {
  const scalar = scalarProblem(value);
  if (scalar) return `${root} ${scalar}`;
  if (value === null || typeof value !== 'object') return null;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return `${root} nests JSON deeper than ${limit} levels`;
    const isArray = Array.isArray(node);
    for (const key in node) {
      const child = (node as Record<string, unknown>)[key];
      if ((!isArray && keyProblem(key)) || scalarProblem(child)) return locate(value, root);
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return null;
}

function stringProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'contains a NUL character (\\u0000), which cannot be stored';
  if (!s.isWellFormed()) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return null;
}

function keyProblem(key: string): string | null {
  const p = stringProblem(key);
  return p && `has a key that ${p}`;
}

function scalarProblem(x: unknown): string | null {
  if (typeof x === 'number')
    return Number.isFinite(x) ? null : 'is a number too large to represent (beyond ±1.8e308)';
  return typeof x === 'string' ? stringProblem(x) : null;
}

/** The slow path: the first problem's location, as root/a/0, with its description. */
function locate(value: object, root: string): string {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    const scalar = scalarProblem(node);
    if (scalar) return `${path} ${scalar}`;
    if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        const key = Array.isArray(node) ? null : keyProblem(k);
        if (key) return `${path} ${key}`;
        stack.push([v, `${path}/${k}`]);
      }
    }
  }
  return `${root} is not acceptable JSON`;
}

/** True when `value` nests objects/arrays deeper than `limit` levels. */
export function exceedsDepth(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  return findJsonProblem(value, 'value', limit)?.includes('nests JSON') ?? false;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
