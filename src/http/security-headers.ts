// Headers every answer carries: the writer (writer.ts) adds them to every answer of the pipeline and
// of the node:http adapter; Fastify, which serves only the documentation and the dashboard's files,
// through the hook below.
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Every answer: `nosniff` (a browser never guesses a type other than the one sent), and `no-store` (API
 * answers hold experiment data and results: no browser or proxy cache keeps them).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** The Swagger UI's own files (scripts, styles, icons): cacheable, so they get nosniff only. */
export const DOCS_STATIC_PREFIX = '/docs/static/';

/**
 * The Content-Security-Policy of the Swagger UI at /docs: its scripts and styles from this origin only
 * (no inline or evaluated script), inline styles (the UI sets style attributes while it renders),
 * images from this origin or data: URLs (its icons), requests to this origin only (the OpenAPI document
 * and "Try it out"), no plugins, no framing by other sites, no forms or <base> pointing elsewhere.
 * No `upgrade-insecure-requests`: on a plain-HTTP deployment it would send the page's own assets to https.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
].join('; ');

/** The dashboard's pages and the libraries they import (dashboard.ts): no data, so cacheable like /docs/static/. */
export const DASHBOARD_PREFIX = '/ui/';

/**
 * The Content-Security-Policy of the dashboard at /ui/. It holds a key in sessionStorage, so the page runs
 * nothing but its own files: scripts from this origin plus the import map, the one inline script, allowed by
 * its hash (`importMaps`: 'sha256-…' sources); styles from this origin only (uPlot and Preact set styles
 * through the CSSOM, which CSP does not govern); requests to this origin only (the JSON API); images from
 * this origin or data: URLs; never framed (clickjacking a key holder), no plugins, no <base>, no forms
 * posting elsewhere.
 */
export function dashboardCsp(importMaps: readonly string[]): string {
  return [
    "default-src 'self'",
    "base-uri 'none'",
    "connect-src 'self'",
    "font-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "img-src 'self' data:",
    "object-src 'none'",
    ["script-src 'self'", ...importMaps].join(' '),
    "script-src-attr 'none'",
    "style-src 'self'",
  ].join('; ');
}

/** Fastify's side: set first, so every answer (401, 404, errors, CORS preflights) carries them. */
export function securityHeadersHook(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('x-content-type-options', 'nosniff');
  const url = request.url;
  if (!url.startsWith(DOCS_STATIC_PREFIX) && !url.startsWith(DASHBOARD_PREFIX)) {
    reply.header('cache-control', 'no-store');
  }
  done();
}
