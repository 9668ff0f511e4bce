// Version strings made comparable as plain strings: a port of GrowthBook's paddedVersionString (util.ts, MIT).

/** "v1.2.3-rc.1+build" → "    1-    2-    3-rc-    1"; a release gets "~" so it sorts after its pre-releases. */
export function paddedVersionString(input: unknown): string {
  let s: unknown = typeof input === 'number' ? `${input}` : input;
  if (!s || typeof s !== 'string') s = '0';
  const parts = (s as string).replace(/(^v|\+.*$)/g, '').split(/[-.]/);
  if (parts.length === 3) parts.push('~');
  return parts.map((v) => (/^[0-9]+$/.test(v) ? v.padStart(5, ' ') : v)).join('-');
}
