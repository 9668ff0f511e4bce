// Answers with an entity tag (route.ts `Tagged`): 304 to a matching If-None-Match, gzip when offered
// and accepted, and bytes made ahead written as they are (shared by every request, never copied).
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Prepared, Tagged } from './route.js';

const JSON_TYPE = 'application/json; charset=utf-8';

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

function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  const list = current === undefined ? '' : String(current);
  if (list.split(',').some((f) => f.trim().toLowerCase() === field.toLowerCase() || f.trim() === '*')) return;
  reply.header('vary', list === '' ? field : `${list}, ${field}`);
}

function sendBytes(reply: FastifyReply, status: number, bytes: Prepared): FastifyReply {
  reply.code(status).type(JSON_TYPE).header('content-length', String(bytes.length));
  if (bytes.chunks.length === 1) return reply.send(bytes.chunks[0]);
  return reply.send(Readable.from(bytes.chunks, { objectMode: false }));
}

export async function sendTagged(reply: FastifyReply, status: number, value: Tagged): Promise<FastifyReply> {
  const headers = reply.request.headers;
  const zipped = value.gzip === undefined ? undefined : gzipTag(value.etag);
  const gzip = zipped !== undefined && acceptsGzip(headers['accept-encoding']);
  if (zipped !== undefined) addVary(reply, 'Accept-Encoding');
  reply.header('etag', gzip ? zipped : value.etag).header('cache-control', 'no-cache');
  const ifNoneMatch = headers['if-none-match'];
  if (matches(ifNoneMatch, value.etag) || (zipped !== undefined && matches(ifNoneMatch, zipped))) {
    return reply.code(304).send();
  }
  if (gzip) {
    let bytes: Prepared | undefined;
    try {
      bytes = await value.gzip!();
    } catch {
      // Compression failed (memory): the plain JSON is as good an answer.
      reply.header('etag', value.etag);
    }
    if (bytes !== undefined) return sendBytes(reply.header('content-encoding', 'gzip'), status, bytes);
  }
  if (typeof value.body === 'string') return reply.code(status).type(JSON_TYPE).send(value.body);
  return sendBytes(reply, status, value.body());
}
