// Answers with an entity tag (route.ts `Tagged`): 304 to a matching If-None-Match, gzip when offered
// and accepted, and bytes made ahead written as they are (shared by every request, never copied).
import type { IncomingHttpHeaders } from 'node:http';
import type { Tagged } from './route.js';
import type { Answer } from './writer.js';

/** The tag of the gzip form: `-gzip` inside the quotes (`"abc"` → `"abc-gzip"`). */
export function gzipTag(etag: string): string {
  return etag.endsWith('"') ? `${etag.slice(0, -1)}-gzip"` : `${etag}-gzip`;
}

/** If-None-Match (a list of tags, weak or strong, or `*`) names `etag` (weak comparison, RFC 9110). */
export function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/** Whether Accept-Encoding allows gzip (`gzip`, `x-gzip` or `*` with a q above 0; RFC 9110 12.5.3). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const item of header.split(',')) {
    const [coding = '', ...params] = item.split(';');
    const name = coding.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]{1,5})\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip ?? 0, q);
    else if (name === '*') any = q;
  }
  return (gzip ?? any ?? 0) > 0;
}

/** The answer for `value` to a request with these headers (304 when If-None-Match names its tag). */
export function taggedAnswer(
  headers: IncomingHttpHeaders,
  status: number,
  value: Tagged,
): Answer | Promise<Answer> {
  const zipped = value.gzip === undefined ? undefined : gzipTag(value.etag);
  const gzip = zipped !== undefined && acceptsGzip(headers['accept-encoding']);
  const own: Record<string, string> = { etag: gzip ? zipped : value.etag, 'cache-control': 'no-cache' };
  if (zipped !== undefined) own.vary = 'Accept-Encoding';
  const ifNoneMatch = headers['if-none-match'];
  if (matches(ifNoneMatch, value.etag) || (zipped !== undefined && matches(ifNoneMatch, zipped))) {
    return { status: 304, headers: own };
  }
  const plain = (): Answer => ({
    status,
    headers: own,
    body: typeof value.body === 'string' ? value.body : value.body().chunks,
  });
  if (!gzip) return plain();
  return value.gzip!().then(
    (bytes) => ({ status, headers: { ...own, 'content-encoding': 'gzip' }, body: bytes.chunks }),
    // Compression failed (memory): the plain JSON is as good an answer.
    () => {
      own.etag = value.etag;
      return plain();
    },
  );
}
