// How messages name items of lists that may be long (metric names, variant keys): a few of them, then
// how many more, so a message stays a line whatever the data holds.

/** Names listed in error messages before the rest are counted. */
export const NAMES_IN_A_MESSAGE = 10;

/** `'a', 'b', 'c' and 7 more` (quoted) or `a, b, c and 7 more`: the first `max` items, then a count. */
export function someOf(items: readonly string[], max = NAMES_IN_A_MESSAGE, quote = true): string {
  const shown = items.slice(0, max).map((item) => (quote ? `'${item}'` : item));
  const rest = items.length - shown.length;
  return rest > 0 ? `${shown.join(', ')} and ${rest} more` : shown.join(', ');
}

/** An id as a message quotes it: at most 80 characters, so 1000 rejections stay a small answer. */
export function shownId(id: string): string {
  return id.length <= 80 ? id : `${id.slice(0, 77)}...`;
}
