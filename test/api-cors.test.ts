// CORS (CORS_ORIGINS: off by default, preflights answered before authentication) and the security
// headers every answer carries, from both transports and from the server's own early answers; on a
// real socket, on the backend AGENTSPLIT_TEST_BACKEND names.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  API_KEY,
  assertError,
  assertUnauthorized,
  makeTempDir,
  type Response,
  removeTempDir,
  SKIP_BACKEND,
  send,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const ALLOWED = 'https://dash.example.com';
const OTHER = 'https://evil.example.net';

/** A browser's preflight for a POST with a JSON body and the key: never carries the key itself. */
function preflight(runtime: TestRuntime, url: string, origin: string): Promise<Response> {
  return send(runtime.api.port, {
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,x-api-key,idempotency-key',
    },
  });
}

/** POST assign as a browser script sends it: with the key, a JSON body, and its Origin. */
function assignFrom(runtime: TestRuntime, slug: string, origin?: string): Promise<Response> {
  const headers: Record<string, string> = origin === undefined ? {} : { origin };
  return runtime.api.call({
    method: 'POST',
    url: `/experiment/${slug}/assign`,
    body: { userId: 'u-1' },
    headers,
  });
}

function listOf(header: string | string[] | undefined): string[] {
  return String(header ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
}

function assertSecurityHeaders(res: Response, what: string): void {
  assert.equal(res.headers['x-content-type-options'], 'nosniff', `${what}: no nosniff`);
  assert.equal(res.headers['cache-control'], 'no-store', `${what}: no no-store`);
}

/** Sends raw bytes on a connection of its own; the whole answer as text once the server closes it. */
function rawExchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => socket.destroy(), 3000);
    socket.on('data', (d: Buffer) => {
      received += d.toString('utf8');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(raw);
  });
}

/** The header lines of a raw answer, lowercased names. */
function rawHeaders(received: string): Record<string, string> {
  const head = received.slice(0, received.indexOf('\r\n\r\n')).split('\r\n').slice(1);
  return Object.fromEntries(
    head.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
}

describe('CORS with CORS_ORIGINS set', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let slug: string;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'cors-on', { corsOrigins: [ALLOWED, 'http://localhost:5173'] });
    slug = (await runtime.api.createExperiment()).slug;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  test('a preflight from an allowed origin → 204 with the allow headers, before authentication (no key)', async () => {
    for (const url of [`/experiment/${slug}/assign`, '/experiments', `/experiment/${slug}/log`]) {
      const res = await preflight(runtime, url, ALLOWED);
      assert.equal(res.statusCode, 204, `${url}: ${res.body}`);
      assert.equal(res.body, '');
      assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
      const methods = listOf(res.headers['access-control-allow-methods']);
      for (const m of ['get', 'post', 'patch', 'delete'])
        assert.ok(methods.includes(m), `${m} in ${methods}`);
      const allowed = listOf(res.headers['access-control-allow-headers']);
      for (const h of ['content-type', 'x-api-key', 'idempotency-key']) {
        assert.ok(allowed.includes(h), `${h} in ${allowed}`);
      }
      assert.equal(res.headers['access-control-max-age'], '600');
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
      assertSecurityHeaders(res, 'preflight');
    }
  });

  test('a preflight from an origin not listed gets no access-control-allow-origin (handled as without CORS: 401)', async () => {
    const res = await preflight(runtime, `/experiment/${slug}/assign`, OTHER);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-headers'], undefined);
    assertUnauthorized(res);
  });

  test('an OPTIONS without Origin is not a preflight: 401 without a key, 404 with one, as without CORS', async () => {
    const noKey = await send(runtime.api.port, { method: 'OPTIONS', url: '/experiments', headers: {} });
    assertUnauthorized(noKey);
    assert.equal(noKey.headers['access-control-allow-origin'], undefined);
    const withKey = await send(runtime.api.port, {
      method: 'OPTIONS',
      url: '/experiments',
      headers: { 'x-api-key': API_KEY },
    });
    assertError(withKey, 404);
  });

  test('POST assign from an allowed origin is answered by Fastify with access-control-allow-origin and the exposed headers', async () => {
    const res = await assignFrom(runtime, slug, ALLOWED);
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(['A', 'B'].includes(res.json().variant));
    assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
    const exposed = listOf(res.headers['access-control-expose-headers']);
    for (const h of ['retry-after', 'ratelimit', 'ratelimit-policy', 'idempotent-replayed']) {
      assert.ok(exposed.includes(h), `${h} in ${exposed}`);
    }
    // Vary: Origin is written by the CORS hook, which only Fastify runs: Fastify answered.
    assert.match(String(res.headers.vary), /origin/i);
    assertSecurityHeaders(res, 'assign through Fastify');
  });

  test('POST assign without Origin still takes the fast transport (no CORS headers, no Vary)', async () => {
    const res = await assignFrom(runtime, slug);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers.vary, undefined);
    assertSecurityHeaders(res, 'fast assign');
  });

  test('POST assign from an origin not listed is served, without access-control-allow-origin', async () => {
    const res = await assignFrom(runtime, slug, OTHER);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  test('a 401 to an allowed origin carries access-control-allow-origin (the script can read why)', async () => {
    const res = await runtime.api.call({
      method: 'GET',
      url: '/experiments',
      key: null,
      headers: { origin: ALLOWED },
    });
    assertUnauthorized(res);
    assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
    assertSecurityHeaders(res, '401 with CORS');
  });
});

describe('CORS_ORIGINS=* allows any origin', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'cors-any', { corsOrigins: ['*'] });
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  test('a preflight from any origin → 204 with access-control-allow-origin: *', async () => {
    const res = await preflight(runtime, '/experiments', OTHER);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.headers['access-control-allow-origin'], '*');
  });

  test('GET /experiments from any origin → access-control-allow-origin: *', async () => {
    const res = await runtime.api.call({ method: 'GET', url: '/experiments', headers: { origin: OTHER } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['access-control-allow-origin'], '*');
  });
});

describe('CORS off by default, and the security headers on every answer', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let slug: string;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'cors-off');
    slug = (await runtime.api.createExperiment()).slug;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  test('CORS off: a preflight gets 401 as before, and no CORS headers', async () => {
    const res = await preflight(runtime, `/experiment/${slug}/assign`, ALLOWED);
    assertUnauthorized(res);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-methods'], undefined);
  });

  test('CORS off: an OPTIONS with the key → 404 as before', async () => {
    const res = await send(runtime.api.port, {
      method: 'OPTIONS',
      url: '/experiments',
      headers: { 'x-api-key': API_KEY, origin: ALLOWED },
    });
    assertError(res, 404);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  test('CORS off: POST assign with an Origin → 200 from the fast transport, no access-control-allow-origin', async () => {
    const res = await assignFrom(runtime, slug, ALLOWED);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assertSecurityHeaders(res, 'fast assign with Origin, CORS off');
  });

  test('nosniff and no-store on a fast-transport assign answer', async () => {
    const res = await assignFrom(runtime, slug);
    assert.equal(res.statusCode, 200, res.body);
    assertSecurityHeaders(res, 'fast assign');
  });

  test('nosniff and no-store on a fast-transport 400 (a body that is not JSON)', async () => {
    const res = await runtime.api.postRaw(`/experiment/${slug}/log`, '{not json');
    assertError(res, 400);
    assertSecurityHeaders(res, 'fast 400');
  });

  test('nosniff and no-store on a Fastify answer (GET /experiments)', async () => {
    const res = await runtime.api.get('/experiments');
    assert.equal(res.statusCode, 200, res.body);
    assertSecurityHeaders(res, 'GET /experiments');
  });

  test('nosniff and no-store on a 401', async () => {
    const res = await runtime.api.get('/experiments', null);
    assertUnauthorized(res);
    assertSecurityHeaders(res, '401');
    const wrongKey = await runtime.api.post(
      `/experiment/${slug}/assign`,
      { userId: 'u' },
      'not-the-key-0123456789',
    );
    assertUnauthorized(wrongKey);
    assertSecurityHeaders(wrongKey, '401 on assign');
  });

  test('nosniff and no-store on a 404', async () => {
    const res = await runtime.api.get('/no/such/route');
    assertError(res, 404);
    assertSecurityHeaders(res, '404');
    const unknown = await runtime.api.get('/experiment/no-such-experiment/results');
    assertError(unknown, 404);
    assertSecurityHeaders(unknown, '404 of an unknown experiment');
  });

  test('nosniff and no-store on a 400 (Fastify: an invalid experiment)', async () => {
    const res = await runtime.api.post('/experiments', { slug: 'Not A Slug!' });
    assertError(res, 400);
    assertSecurityHeaders(res, 'Fastify 400');
  });

  test("nosniff and no-store on the server's own early answers (no Host; not HTTP)", async () => {
    const noHost = await rawExchange(runtime.api.port, 'GET /healthz HTTP/1.1\r\n\r\n');
    assert.match(noHost, /^HTTP\/1\.1 400 /);
    assert.equal(rawHeaders(noHost)['x-content-type-options'], 'nosniff');
    assert.equal(rawHeaders(noHost)['cache-control'], 'no-store');
    const notHttp = await rawExchange(runtime.api.port, 'FOO^ / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(notHttp, /^HTTP\/1\.1 400 /);
    assert.equal(rawHeaders(notHttp)['x-content-type-options'], 'nosniff');
    assert.equal(rawHeaders(notHttp)['cache-control'], 'no-store');
  });

  test('GET /docs: the page loads (200 HTML) with a Content-Security-Policy, nosniff and no-store', async () => {
    const res = await runtime.api.get('/docs', null);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /<div id="swagger-ui">/);
    const csp = String(res.headers['content-security-policy'] ?? '');
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only, none inline');
    assert.match(csp, /object-src 'none'/);
    assert.match(csp, /frame-ancestors 'self'/);
    assertSecurityHeaders(res, '/docs');
    // The page's own scripts and styles are served from this origin, under the policy's 'self'.
    for (const asset of ['swagger-ui-bundle.js', 'swagger-initializer.js', 'swagger-ui.css']) {
      const file = await runtime.api.get(`/docs/static/${asset}`, null);
      assert.equal(file.statusCode, 200, asset);
      assert.equal(file.headers['x-content-type-options'], 'nosniff', asset);
    }
  });

  test("the Swagger UI's static files may be cached (no no-store); the OpenAPI document may not", async () => {
    const css = await runtime.api.get('/docs/static/swagger-ui.css', null);
    assert.equal(css.statusCode, 200);
    assert.notEqual(css.headers['cache-control'], 'no-store');
    const doc = await runtime.api.get('/openapi.json', null);
    assert.equal(doc.statusCode, 200);
    assertSecurityHeaders(doc, '/openapi.json');
  });
});
