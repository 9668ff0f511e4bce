// JSON value types and the structural limits the service enforces on client JSON.

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export const MAX_JSON_DEPTH = 64;

/**
 * What makes parsed client JSON unacceptable, or null: nesting deeper than `limit` levels, or a number
 * too large for a double (JSON.parse turns 1e400 into Infinity, which would be stored as null and so
 * not come back as sent). Iterative: no stack overflow however deep.
 */
export function findJsonProblem(value: unknown, root = 'value', limit = MAX_JSON_DEPTH): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : nonFinite(root);
  if (value === null || typeof value !== 'object') return null;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return `${root} nests JSON deeper than ${limit} levels`;
    const children = Array.isArray(node) ? node : Object.values(node as object);
    for (const child of children) {
      if (typeof child === 'number') {
        if (!Number.isFinite(child)) return nonFinite(root + pathOfNonFinite(value));
      } else if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return null;
}

function nonFinite(path: string): string {
  return `${path} is a number too large to represent (beyond ±1.8e308)`;
}

/** The slow path, only once a problem is known: where the first non-finite number is, as a/b/0. */
function pathOfNonFinite(value: unknown): string {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'number' && !Number.isFinite(node)) return path;
    if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) stack.push([v, `${path}/${k}`]);
    }
  }
  return '';
}

/** True when `value` nests objects/arrays deeper than `limit` levels. */
export function exceedsDepth(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  return findJsonProblem(value, 'value', limit)?.includes('nests JSON') ?? false;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
