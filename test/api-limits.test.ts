// Limits and hostile input (issue 2, section 4), plus the unkeyed probes and the API documentation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  API_KEY,
  type Api,
  assertError,
  assertUnauthorized,
  type Call,
  makeTempDir,
  nestedObject,
  type Response,
  removeTempDir,
  SKIP_BACKEND,
  send,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
  withRuntime,
} from './helpers/app.js';

let dir: string;
let runtime: TestRuntime;
let api: Api;
let slug: string;

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return; // the suites below are skipped too
  // These suites send hundreds of requests without a valid key from one address on purpose: the
  // failed-authentication throttle (ADR 0017; tested in api-rate-limits) would answer them 429.
  runtime = await startTestRuntime(dir, 'limits', { rateLimits: { authFailureLimit: 100_000 } });
  api = runtime.api;
  slug = (await api.createExperiment()).slug;
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

function assertNotPolluted(): void {
  const probe: Record<string, unknown> = {};
  assert.equal(probe.polluted, undefined, 'Object.prototype was polluted');
  assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
}

/** Every keyed route that takes a slug, with a body it would accept. */
function slugCalls(s: string): Call[] {
  return [
    { method: 'POST', url: `/experiment/${s}/assign`, body: { userId: 'u' } },
    { method: 'POST', url: `/experiment/${s}/log`, body: { variantKey: 'A' } },
    { method: 'POST', url: `/experiment/${s}/logs`, body: { results: [{ variantKey: 'A' }] } },
    { method: 'GET', url: `/experiment/${s}` },
    { method: 'GET', url: `/experiment/${s}/results` },
    { method: 'GET', url: `/experiment/${s}/results/export?format=csv` },
    { method: 'PATCH', url: `/experiment/${s}`, body: { name: 'x' } },
    { method: 'DELETE', url: `/experiment/${s}` },
  ];
}

/** Odd slugs as they appear in a URL path, all routable by the HTTP router. */
const ODD_SLUGS = [
  '%2F',
  'a%2Fb',
  '..',
  '%2E%2E',
  '.',
  '%C3%A9',
  '%F0%9F%9A%80',
  '%E6%97%A5%E6%9C%AC',
  '%00',
  'a%00b',
  '%20',
  'a%20b',
  '%0D%0AX-Injected%3A%201',
  "'%3B%20DROP%20TABLE%20experiments%3B--",
  '%2A',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'a'.repeat(101),
  'a'.repeat(1000),
];

async function assertNever500(call: Call): Promise<Response> {
  const res = await api.call(call);
  assert.ok(res.statusCode < 500, `${call.method} ${call.url.slice(0, 80)} → ${res.statusCode} ${res.body}`);
  return res;
}

describe('request size and depth', { skip: SKIP_BACKEND }, () => {
  test('a body over the limit → 413 {"error"} naming the limit, on assign, log and logs', async () => {
    await withRuntime(dir, 'small-limit', { bodyLimit: 4096 }, async (rt) => {
      const created = await rt.api.createExperiment();
      const big = { blob: 'x'.repeat(5000) };
      const calls = [
        rt.api.post(`/experiment/${created.slug}/assign`, { userId: 'u', context: big }),
        rt.api.post(`/experiment/${created.slug}/log`, { variantKey: 'A', input: big }),
        rt.api.post(`/experiment/${created.slug}/logs`, { results: [{ variantKey: 'A', input: big }] }),
        rt.api.post('/experiments', {
          slug: 'big',
          variants: [{ key: 'A', payload: big, trafficPercent: 100 }],
        }),
      ];
      for (const res of await Promise.all(calls)) assertError(res, 413, /4096/);
      assert.deepEqual(await rt.api.allResults(created.slug), []);
    });
  });

  test('a body exactly at the limit is accepted', async () => {
    await withRuntime(dir, 'exact-limit', { bodyLimit: 4096 }, async (rt) => {
      const created = await rt.api.createExperiment();
      const shell = JSON.stringify({ variantKey: 'A', input: { blob: '' } });
      const body = JSON.stringify({ variantKey: 'A', input: { blob: 'y'.repeat(4096 - shell.length) } });
      assert.equal(Buffer.byteLength(body), 4096);
      const res = await rt.api.postRaw(`/experiment/${created.slug}/log`, body);
      assert.equal(res.statusCode, 200, res.body);
    });
  });

  test('the key is still checked first on an oversized body: 401 without a key', async () => {
    await withRuntime(dir, 'limit-auth', { bodyLimit: 4096 }, async (rt) => {
      const res = await rt.api.call({
        method: 'POST',
        url: '/experiment/whatever/log',
        raw: JSON.stringify({ variantKey: 'A', input: { blob: 'x'.repeat(5000) } }),
        key: null,
      });
      assertUnauthorized(res);
    });
  });

  test('JSON nested 64 levels is accepted on assign, log and logs', async () => {
    // The body itself is level 1.
    const assign = await api.post(`/experiment/${slug}/assign`, { userId: 'u', context: nestedObject(63) });
    assert.equal(assign.statusCode, 200, assign.body);
    const log = await api.post(`/experiment/${slug}/log`, { variantKey: 'A', input: nestedObject(63) });
    assert.equal(log.statusCode, 200, log.body);
    const logs = await api.post(`/experiment/${slug}/logs`, {
      results: [{ variantKey: 'A', input: nestedObject(61) }],
    });
    assert.equal(logs.statusCode, 200, logs.body);
  });

  test('JSON nested 65 levels → 400 naming the depth limit, and nothing is stored', async () => {
    const created = await api.createExperiment();
    const s = created.slug;
    assertError(
      await api.post(`/experiment/${s}/assign`, { userId: 'u', context: nestedObject(64) }),
      400,
      /64/,
    );
    assertError(
      await api.post(`/experiment/${s}/log`, { variantKey: 'A', input: nestedObject(64) }),
      400,
      /64/,
    );
    const logs = await api.post(`/experiment/${s}/logs`, {
      results: [{ variantKey: 'A', input: nestedObject(62) }],
    });
    assertError(logs, 400, /64/);
    // Arrays count as levels too.
    const arrays = `{"variantKey":"A","input":{"a":${'['.repeat(63)}${']'.repeat(63)}}}`;
    assertError(await api.postRaw(`/experiment/${s}/log`, arrays), 400, /64/);
    assert.deepEqual(await api.allResults(s), []);
  });

  test('JSON nested 100000 levels → 400, not a crash', async () => {
    const deep = `{"variantKey":"A","input":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    assertError(await api.postRaw(`/experiment/${slug}/log`, deep), 400);
    const res = await api.get('/healthz', null);
    assert.equal(res.statusCode, 200);
  });
});

describe('metric names', { skip: SKIP_BACKEND }, () => {
  // On PostgreSQL a ~2.7 KB name overflowed the rollup key's btree row and answered 500.
  test('a metric name over 128 characters → 400 naming it shortened, on log and logs, nothing stored', async () => {
    const long = 'm'.repeat(3000);
    const before = (await api.allResults(slug)).length;
    const one = assertError(
      await api.post(`/experiment/${slug}/log`, { variantKey: 'A', metrics: { [long]: 1 } }),
      400,
    );
    assert.match(one, /body\/metrics has a name that is not allowed \("m{40}…", 3000 characters\)/);
    assert.ok(one.length < 300, one);
    const many = await api.post(`/experiment/${slug}/logs`, {
      results: [
        { variantKey: 'A', metrics: { ok: 1 } },
        { variantKey: 'A', metrics: { [long]: 1 } },
      ],
    });
    assertError(many, 400, /body\/results\/1\/metrics has a name that is not allowed/);
    assert.equal((await api.allResults(slug)).length, before);
  });

  test('a metric name with a control character, or empty → 400; 128 characters of any script → 200', async () => {
    for (const name of ['tab\there', 'nl\n', '', 'del\u007f']) {
      assertError(
        await api.post(`/experiment/${slug}/log`, { variantKey: 'A', metrics: { [name]: 1 } }),
        400,
        /metrics has a name/,
      );
    }
    const ok = await api.post(`/experiment/${slug}/log`, {
      variantKey: 'A',
      metrics: { ['é'.repeat(127) + '✓']: 1, 'quality (1-5)': 4 },
    });
    assert.equal(ok.statusCode, 200, ok.body);
  });
});

describe('prototype pollution', { skip: SKIP_BACKEND }, () => {
  test('"__proto__" in an assign body and context does not pollute Object.prototype', async () => {
    const raw =
      '{"userId":"u","__proto__":{"polluted":"body"},' +
      '"context":{"__proto__":{"polluted":"context"},"constructor":{"prototype":{"polluted":"ctor"}}}}';
    const res = await api.postRaw(`/experiment/${slug}/assign`, raw);
    assert.equal(res.statusCode, 200, res.body);
    assertNotPolluted();
  });

  test('"__proto__" in log and logs bodies does not pollute, and is stored as data', async () => {
    const created = await api.createExperiment();
    const item =
      '{"variantKey":"A","__proto__":{"polluted":"body"},"input":{"__proto__":{"polluted":"input"}},' +
      '"metrics":{"__proto__":{"polluted":1}},"context":{"constructor":{"prototype":{"polluted":"ctor"}}}}';
    assert.equal((await api.postRaw(`/experiment/${created.slug}/log`, item)).statusCode, 200);
    assert.equal(
      (await api.postRaw(`/experiment/${created.slug}/logs`, `{"results":[${item},${item}]}`)).statusCode,
      200,
    );
    assertNotPolluted();
    const results = await api.allResults(created.slug);
    assert.equal(results.length, 3);
    for (const r of results) {
      assert.deepEqual(r.input, JSON.parse('{"__proto__":{"polluted":"input"}}'));
      assert.ok(Object.hasOwn(r.input as object, '__proto__'));
    }
    assertNotPolluted();
  });

  test('"__proto__" in a create body cannot set fields or pollute', async () => {
    const s = uniqueSlug('proto');
    const raw =
      `{"slug":"${s}","__proto__":{"status":"running","active":true,"polluted":"create"},` +
      '"variants":[{"key":"A","payload":{"__proto__":{"polluted":"payload"}},"trafficPercent":100}]}';
    const res = await api.postRaw('/experiments', raw);
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.status, 'draft');
    assert.equal(body.active, false);
    assert.ok(Object.hasOwn(body.variants[0].payload, '__proto__'));
    assertNotPolluted();
  });
});

describe('odd slugs', { skip: SKIP_BACKEND }, () => {
  test('slugs with odd characters → 400 or 404 {"error"}, never 500', async () => {
    for (const odd of ODD_SLUGS) {
      for (const call of slugCalls(odd)) {
        const res = await assertNever500(call);
        assert.ok(
          [400, 404].includes(res.statusCode),
          `${call.method} ${call.url.slice(0, 80)} → ${res.statusCode}`,
        );
        assertError(res, res.statusCode);
      }
    }
  });

  test('a slug that is not valid percent-encoding → 400 {"error"}, never 500', async () => {
    for (const odd of ['%', '%E0%A4%A', '%ZZ', '%C3']) {
      for (const call of slugCalls(odd)) {
        const res = await assertNever500(call);
        assertError(res, 400);
      }
    }
  });

  test('a slug longer than the router accepts (5000 characters) → 400 or 404 {"error"}, never 500', async () => {
    for (const call of slugCalls('a'.repeat(5000))) {
      const res = await assertNever500(call);
      assert.ok(
        [400, 404].includes(res.statusCode),
        `${call.method} → ${res.statusCode} ${res.body.slice(0, 120)}`,
      );
      assertError(res, res.statusCode);
    }
  });

  test('an unroutable URL (bad percent-encoding, 5000-character slug) without a key is 401 first', async () => {
    for (const odd of ['%E0%A4%A', 'a'.repeat(5000)]) {
      for (const call of slugCalls(odd)) assertUnauthorized(await api.call({ ...call, key: null }));
    }
  });

  test('a number too large for a double (1e400) → 400 naming it, not silently stored as null', async () => {
    for (const url of [`/experiment/${slug}/log`, `/experiment/${slug}/assign`]) {
      const res = await api.call({
        method: 'POST',
        url,
        raw: '{"variantKey":"A","userId":"u","metrics":{"big":1e400},"context":{"big":1e400}}',
      });
      assertError(res, 400);
      assert.match(res.json().error, /too large/);
    }
  });

  test('odd slugs without a key are 401, not 404', async () => {
    for (const odd of ODD_SLUGS) {
      for (const call of slugCalls(odd)) assertUnauthorized(await api.call({ ...call, key: null }));
    }
  });

  test('creating an experiment with an odd slug → 400', async () => {
    for (const odd of ['a/b', '..', 'é', '\u0000', 'a\nb', '%2F', '__proto__x/']) {
      assertError(
        await api.post('/experiments', {
          slug: odd,
          variants: [{ key: 'A', payload: {}, trafficPercent: 100 }],
        }),
        400,
        /slug/,
      );
    }
  });
});

describe('content type', { skip: SKIP_BACKEND }, () => {
  const urls = () => [`/experiment/${slug}/assign`, `/experiment/${slug}/log`, '/experiments'];

  test('a wrong Content-Type → 400 naming Content-Type', async () => {
    const types = [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ];
    for (const url of urls()) {
      for (const type of types) {
        const res = await api.postRaw(url, '{"userId":"u","variantKey":"A"}', { 'content-type': type });
        assertError(res, 400, /Content-Type/);
      }
    }
  });

  test('a missing, empty or unparsable Content-Type → 400 naming Content-Type', async () => {
    for (const url of urls()) {
      for (const type of ['', 'json', 'application/', ';;']) {
        const res = await api.postRaw(url, '{"userId":"u","variantKey":"A"}', { 'content-type': type });
        assertError(res, 400, /Content-Type/);
      }
      const bare = await send(api.port, {
        method: 'POST',
        url,
        headers: { 'x-api-key': API_KEY },
        payload: '{}',
      });
      assertError(bare, 400, /Content-Type/);
    }
  });

  test('application/json with a charset is accepted', async () => {
    const res = await api.postRaw(`/experiment/${slug}/assign`, '{"userId":"u"}', {
      'content-type': 'application/json; charset=utf-8',
    });
    assert.equal(res.statusCode, 200, res.body);
  });
});

describe('probes and documentation', { skip: SKIP_BACKEND }, () => {
  test('/healthz and /readyz answer 200 without a key', async () => {
    for (const url of ['/healthz', '/readyz']) {
      const res = await api.get(url, null);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(typeof res.json().status, 'string');
      assert.equal((await api.get(url, 'wrong')).statusCode, 200);
    }
  });

  test('/openapi.json lists the assign and log paths with the x-api-key scheme', async () => {
    const res = await api.get('/openapi.json');
    assert.equal(res.statusCode, 200, res.body.slice(0, 200));
    const doc = res.json();
    assert.ok(doc.openapi, 'not an OpenAPI document');
    for (const path of ['/experiment/{slug}/assign', '/experiment/{slug}/log', '/experiment/{slug}/logs']) {
      assert.ok(doc.paths[path]?.post, `${path} is missing`);
    }
    assert.ok(doc.paths['/experiments']?.post);
    assert.ok(doc.paths['/experiment/{slug}/results']?.get);
    const schemes = Object.values(doc.components?.securitySchemes ?? {}) as Array<Record<string, string>>;
    assert.ok(schemes.some((s) => s.type === 'apiKey' && s.in === 'header' && s.name === 'x-api-key'));
    const assignBody =
      doc.paths['/experiment/{slug}/assign'].post.requestBody.content['application/json'].schema;
    assert.ok(assignBody.required.includes('userId'));
  });

  test('/docs serves the Swagger UI (200 or a redirect)', async () => {
    const res = await api.get('/docs', null);
    assert.ok([200, 301, 302, 303, 307, 308].includes(res.statusCode), `${res.statusCode}`);
    if (res.statusCode === 200) assert.match(res.body, /swagger/i);
  });

  test('a public prefix does not open keyed routes (/docs/../experiments without a key)', async () => {
    for (const url of ['/docs/../experiments', '/docs/%2E%2E/experiments', '/healthz/../experiments']) {
      const res = await api.get(url, null);
      assert.notEqual(res.statusCode, 200, `${url} answered 200 without a key`);
      assert.ok(!res.body.includes('"experiments"'), `${url} leaked experiments`);
    }
  });

  test('an unsupported method on a known path → 404 {"error"}', async () => {
    assertError(await api.call({ method: 'DELETE', url: '/experiments' }), 404);
    assertError(await api.call({ method: 'GET', url: `/experiment/${slug}/assign` }), 404);
  });
});
