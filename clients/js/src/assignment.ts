// What every way of assigning shares: which user ids the server takes, and the default (fail-open)
// assignment answered when no variant can be had.
import type { Assignment, AssignOptions } from './types.js';

export const MAX_USER_ID = 512;
/** What the server takes as a user id, said when one is refused. */
export const USER_ID_RULE = `the server takes 1-${MAX_USER_ID} code points, no U+0000, no lone surrogate`;
/** A NUL or a UTF-16 surrogate (lone or in a pair): the slow check looks closer. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what it looks for
const SUSPECT_CHAR = /[\u0000\uD800-\uDFFF]/;

/**
 * Why the server would refuse `userId` (400 on POST /experiment/:slug/assign), or '': it must be a
 * string of 1-512 code points without U+0000 or a lone surrogate.
 */
export function userIdProblem(userId: unknown): string {
  if (typeof userId !== 'string') return 'is not a string';
  if (userId.length === 0) return 'is empty';
  if (userId.length <= MAX_USER_ID && !SUSPECT_CHAR.test(userId)) return ''; // the usual case, at once
  if (userId.includes('\u0000')) return 'contains U+0000';
  let codePoints = 0;
  for (let i = 0; i < userId.length; i++, codePoints++) {
    const c = userId.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = userId.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return 'contains a lone surrogate';
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return 'contains a lone surrogate';
  }
  return codePoints > MAX_USER_ID ? `is longer than ${MAX_USER_ID} code points` : '';
}

export function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The caller's default: no variant, no id, not in the experiment. */
export function defaultAssignment<P>(
  slug: string,
  userId: string,
  options: AssignOptions<P> | undefined,
): Assignment<P> {
  return {
    experiment: slug,
    userId,
    variant: '',
    payload: (options?.default ?? {}) as P,
    assignmentId: '',
    source: 'default',
    inExperiment: false,
    reason: null,
  };
}
