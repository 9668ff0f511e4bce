// Searching results (issue 36, ADR 0039): a case-insensitive substring of a result's input or output
// (their JSON text) or of a comment given on it. Pure: the store turns the text into its own query.

import { ValidationError } from './errors.js';

/** Trigram indexes find nothing shorter: a shorter q is refused (400), not scanned for. */
export const MIN_SEARCH_CHARS = 3;
export const MAX_SEARCH_CHARS = 200;
/** Comments each result of a page carries, newest first. */
export const COMMENTS_PER_RESULT = 5;

/** A comment given with feedback on a result (on its logId or its assignmentId). */
export interface ResultComment {
  text: string;
  /** When it was given, ISO 8601. */
  at: string;
}

/** q as searched for; throws ValidationError when it is too short (counted in characters, not bytes). */
export function searchText(q: string): string {
  const chars = [...q].length;
  if (chars < MIN_SEARCH_CHARS) {
    throw new ValidationError(
      `q must be at least ${MIN_SEARCH_CHARS} characters (got ${chars}): shorter text is not searched`,
    );
  }
  return q;
}

/** Whether `text` holds `q`, ignoring case (the memory store's search). */
export function containsText(text: string | null | undefined, q: string): boolean {
  return typeof text === 'string' && text.toLowerCase().includes(q.toLowerCase());
}

/**
 * The newest COMMENTS_PER_RESULT comments of feedback rows (one feedback call with several metrics is
 * several rows with one feedbackId: one comment).
 */
export function newestComments(
  rows: Iterable<{ feedbackId: string; comment: string | null; at: string }>,
): ResultComment[] {
  const byId = new Map<string, ResultComment>();
  for (const r of rows) {
    if (r.comment !== null && r.comment !== '' && !byId.has(r.feedbackId)) {
      byId.set(r.feedbackId, { text: r.comment, at: r.at });
    }
  }
  return [...byId.values()]
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
    .slice(0, COMMENTS_PER_RESULT);
}
