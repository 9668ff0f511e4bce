// The dashboard (issue 16): the static pages in dashboard/ at /ui/, the browser libraries they import at
// /ui/vendor/<file> (named one by one from node_modules, never the folder), and `GET /` (and /ui) → /ui/. None of
// it needs a key or holds one: the page asks for a key and calls the JSON API with it (auth.ts lets
// these paths through). Every answer here carries the dashboard's Content-Security-Policy.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { DASHBOARD_PREFIX, dashboardCsp } from './security-headers.js';

/** The pages: dashboard/ at the repository root (the same from src/http and dist/http). */
export const DASHBOARD_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dashboard');

/** What the page's import map points at: served name → package and the file inside it. */
export const VENDOR_FILES: Readonly<Record<string, { pkg: string; file: string }>> = {
  'preact.module.js': { pkg: 'preact', file: 'dist/preact.mjs' },
  'hooks.module.js': { pkg: 'preact', file: 'hooks/dist/hooks.mjs' },
  // Plain htm (no imports): `htm.bind(h)`.
  'htm.module.js': { pkg: 'htm', file: 'dist/htm.module.js' },
  // htm's Preact build: exports `html`, imports the bare names 'preact' and 'htm' (the import map's).
  'htm-preact.module.js': { pkg: 'htm', file: 'preact/index.module.js' },
  'uPlot.esm.js': { pkg: 'uplot', file: 'dist/uPlot.esm.js' },
  'uPlot.min.css': { pkg: 'uplot', file: 'dist/uPlot.min.css' },
};

const require = createRequire(import.meta.url);

/**
 * A package's folder in node_modules, found from its entry point: `<pkg>/package.json` cannot be resolved
 * for every package (htm's `exports` does not list it).
 */
function packageDir(pkg: string): string {
  const entry = require.resolve(pkg);
  const marker = `${sep}node_modules${sep}${pkg}${sep}`;
  const at = entry.lastIndexOf(marker);
  if (at === -1) throw new Error(`cannot find the folder of package ${pkg} (resolved ${entry})`);
  return entry.slice(0, at + marker.length);
}

/** The CSP hash source of every inline import map in the page (the only inline script it may have). */
export function importMapHashes(html: string): string[] {
  const maps = html.matchAll(/<script\b[^>]*\btype\s*=\s*["']?importmap["']?[^>]*>([\s\S]*?)<\/script>/gi);
  return [...maps].map((m) => `'sha256-${createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`);
}

/**
 * The CSP for the page as it is on disk: recomputed when index.html changes (editing the import map
 * while the server runs), else one stat per request.
 */
function cspSource(indexFile: string): () => string {
  let seen = Number.NaN;
  let csp = dashboardCsp([]);
  return () => {
    let mtime = 0;
    try {
      mtime = statSync(indexFile).mtimeMs;
    } catch {
      // No page yet: scripts from this origin only.
    }
    if (mtime !== seen) {
      seen = mtime;
      csp = dashboardCsp(mtime === 0 ? [] : importMapHashes(readFileSync(indexFile, 'utf8')));
    }
    return csp;
  };
}

export async function registerDashboard(app: FastifyInstance, dir = DASHBOARD_DIR): Promise<void> {
  const csp = cspSource(join(dir, 'index.html'));
  const vendor = Object.entries(VENDOR_FILES).map(([name, { pkg, file }]) => {
    const root = packageDir(pkg);
    statSync(join(root, file)); // fails at start, not at the first page load, if a package changed its layout
    return { name, root, file };
  });

  for (const url of ['/', DASHBOARD_PREFIX.slice(0, -1)]) {
    app.get(url, { schema: { hide: true } }, (_request, reply) => reply.redirect(DASHBOARD_PREFIX, 302));
  }

  // Its own context: the CSP hook and `reply.sendFile` stay on these routes.
  await app.register(async (ui) => {
    ui.addHook('onRequest', (_request, reply, done) => {
      reply.header('content-security-policy', csp());
      reply.header('referrer-policy', 'no-referrer');
      done();
    });
    // Files revalidate (ETag, max-age=0): an upgrade is seen at once; they hold no data.
    await ui.register(fastifyStatic, {
      root: dir,
      prefix: DASHBOARD_PREFIX,
      schemaHide: true,
      dotfiles: 'deny',
    });
    for (const { name, root, file } of vendor) {
      ui.get(`${DASHBOARD_PREFIX}vendor/${name}`, { schema: { hide: true } }, (_request, reply) =>
        reply.sendFile(file, root),
      );
    }
  });
}
