// GET /metrics (issue 14, section 4): Prometheus text of this runtime's metrics, behind a key. Requests
// are counted the same from both transports: a well-formed assign/log/logs over the socket is answered
// by the fast transport; app.inject and a Content-Type spelled otherwise reach Fastify.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  API_KEY,
  assertUnauthorized,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  send,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';
import { type Exposition, parsePrometheus } from './helpers/prometheus.js';

const REQUESTS = 'agentsplit_http_requests_total';
const LATENCY = 'agentsplit_http_request_duration_seconds';
const ASSIGN = '/experiment/:slug/assign';
const LOG = '/experiment/:slug/log';
const LOGS = '/experiment/:slug/logs';
/** A valid spelling the fast transport does not take as it is: Fastify judges it. */
const OTHER_JSON_SPELLING = 'application/json;charset=UTF-8';

describe('GET /metrics', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'prometheus');
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  async function scrape(): Promise<{ text: string; m: Exposition }> {
    const res = await runtime.api.get('/metrics');
    assert.equal(res.statusCode, 200, res.body);
    return { text: res.body, m: parsePrometheus(res.body) };
  }

  /** POST over the socket with the given Content-Type (the harness's client otherwise). */
  function postAs(contentType: string, url: string, body: unknown) {
    return send(runtime.api.port, {
      method: 'POST',
      url,
      headers: { 'content-type': contentType, 'x-api-key': API_KEY },
      payload: JSON.stringify(body),
    });
  }

  /** POST through Fastify's router alone (no socket, so never the fast transport). */
  async function postThroughFastify(url: string, body: unknown) {
    const res = await runtime.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      payload: JSON.stringify(body),
    });
    return res.statusCode;
  }

  test('needs a key: 401 without one or with a wrong one', async () => {
    assertUnauthorized(await runtime.api.get('/metrics', null));
    assertUnauthorized(await runtime.api.get('/metrics', 'not-the-key-0123456789'));
  });

  test('answers Prometheus text (0.0.4) that parses: # TYPE lines, samples of typed families', async () => {
    const res = await runtime.api.get('/metrics');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    const m = parsePrometheus(res.body);
    assert.ok(/^# HELP agentsplit_/m.test(res.body));
    const expected: Record<string, string> = {
      [REQUESTS]: 'counter',
      [LATENCY]: 'histogram',
      agentsplit_group_commit_batch_size: 'histogram',
      agentsplit_group_commit_wait_seconds: 'histogram',
      agentsplit_exposure_queue_depth: 'gauge',
      agentsplit_exposures_dropped_total: 'counter',
      agentsplit_database_errors_total: 'counter',
      agentsplit_rate_limited_total: 'counter',
      agentsplit_experiments_loaded: 'gauge',
    };
    for (const [name, type] of Object.entries(expected)) assert.equal(m.types.get(name), type, name);
    assert.ok(m.samples.length > 50, `only ${m.samples.length} samples`);
    const depth = m.value('agentsplit_exposure_queue_depth');
    assert.ok(depth !== undefined && Number.isInteger(depth) && depth >= 0);
    assert.equal(m.value('agentsplit_rate_limited_total', { reason: 'key' }), 0);
    assert.equal(m.value('agentsplit_database_errors_total', { source: 'request' }), 0);
  });

  test('counts assign, log and logs under their route patterns and statuses, from both transports', async () => {
    const { slug } = await runtime.api.createExperiment({ slug: uniqueSlug('prom') });
    const missing = uniqueSlug('missing');
    const before = (await scrape()).m;

    // assign: 200 from the fast transport, from Fastify over the socket and through inject; 404 from both.
    assert.equal(
      (await postAs('application/json', `/experiment/${slug}/assign`, { userId: 'u1' })).statusCode,
      200,
    );
    assert.equal(
      (await postAs(OTHER_JSON_SPELLING, `/experiment/${slug}/assign`, { userId: 'u2' })).statusCode,
      200,
    );
    assert.equal(await postThroughFastify(`/experiment/${slug}/assign`, { userId: 'u3' }), 200);
    assert.equal(
      (await postAs('application/json', `/experiment/${missing}/assign`, { userId: 'u' })).statusCode,
      404,
    );
    assert.equal(await postThroughFastify(`/experiment/${missing}/assign`, { userId: 'u' }), 404);
    // log: 200 and 400 (no variantKey) from each transport.
    const result = { variantKey: 'A', metrics: { rating: 4 } };
    assert.equal((await postAs('application/json', `/experiment/${slug}/log`, result)).statusCode, 200);
    assert.equal((await postAs(OTHER_JSON_SPELLING, `/experiment/${slug}/log`, result)).statusCode, 200);
    assert.equal(
      (await postAs('application/json', `/experiment/${slug}/log`, { metrics: {} })).statusCode,
      400,
    );
    assert.equal(await postThroughFastify(`/experiment/${slug}/log`, { metrics: {} }), 400);
    // logs: one of two results from each transport.
    const two = { results: [result, { variantKey: 'B' }] };
    assert.equal((await postAs('application/json', `/experiment/${slug}/logs`, two)).statusCode, 200);
    assert.equal(await postThroughFastify(`/experiment/${slug}/logs`, two), 200);
    // Unknown paths: one label, whatever the path.
    await runtime.api.get(`/no-such-route/${slug}`);
    await runtime.api.get('/another/unknown/path');

    const { text, m } = await scrape();
    const delta = (route: string, method: string, status: number) =>
      (m.value(REQUESTS, { route, method, status: String(status) }) ?? 0) -
      (before.value(REQUESTS, { route, method, status: String(status) }) ?? 0);
    assert.equal(delta(ASSIGN, 'POST', 200), 3);
    assert.equal(delta(ASSIGN, 'POST', 404), 2);
    assert.equal(delta(LOG, 'POST', 200), 2);
    assert.equal(delta(LOG, 'POST', 400), 2);
    assert.equal(delta(LOGS, 'POST', 200), 2);
    assert.equal(delta('unmatched', 'GET', 404), 2);
    assert.equal(delta('unmatched', 'POST', 200), 0, 'every assign, log and logs found its route');
    assert.ok(
      m.value(REQUESTS, { route: '/metrics', method: 'GET', status: '200' })! >= 1,
      'scrapes are counted',
    );
    assert.ok(m.value(REQUESTS, { route: '/experiments', method: 'POST', status: '201' })! >= 1);
    // Route patterns only: no slug, no raw path ever becomes a label value.
    assert.ok(!text.includes(slug) && !text.includes(missing), 'a slug is a label value');
    assert.ok(!text.includes('no-such-route') && !text.includes('/another/unknown'));

    // The latency histogram counted every assign, in cumulative buckets ending at +Inf = count.
    const labels = { route: ASSIGN, method: 'POST' };
    const count = m.value(`${LATENCY}_count`, labels)!;
    assert.equal(count - (before.value(`${LATENCY}_count`, labels) ?? 0), 5);
    const buckets = m.find(`${LATENCY}_bucket`, labels);
    assert.equal(buckets.at(0)!.labels.le, '0.0005');
    assert.equal(buckets.at(-2)!.labels.le, '10');
    assert.equal(buckets.at(-1)!.labels.le, '+Inf');
    assert.equal(buckets.at(-1)!.value, count);
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value);
    assert.ok(m.value(`${LATENCY}_sum`, labels)! > 0);
  });

  test('a logged result shows as a group-commit batch, with its wait', async () => {
    const { slug } = await runtime.api.createExperiment({ slug: uniqueSlug('prom') });
    const before = (await scrape()).m;
    await runtime.api.log(slug, { variantKey: 'A', metrics: { rating: 5 } });
    await runtime.api.logMany(slug, [{ variantKey: 'A' }, { variantKey: 'B' }, { variantKey: 'B' }]);
    const { m } = await scrape();
    const grew = (name: string, labels?: Record<string, string>) =>
      (m.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
    const results = { kind: 'results' };
    assert.equal(grew('agentsplit_group_commit_batch_size_sum', results), 4, 'four results committed');
    assert.equal(grew('agentsplit_group_commit_batch_size_count', results), 2, 'in two transactions');
    assert.equal(grew('agentsplit_group_commit_wait_seconds_count'), 2, 'one wait per request');
    assert.ok(grew('agentsplit_group_commit_wait_seconds_sum') > 0);
  });

  test('the exposures of assignments show as group-commit batches of exposures', async () => {
    const { slug } = await runtime.api.createExperiment({ slug: uniqueSlug('prom') });
    await runtime.ingest.drain(); // earlier tests' exposures are written first
    const before = (await scrape()).m;
    for (let i = 0; i < 3; i++) await runtime.api.assign(slug, { userId: `exp-${i}` });
    await runtime.ingest.drain();
    const { m } = await scrape();
    const sum = 'agentsplit_group_commit_batch_size_sum';
    assert.equal(
      (m.value(sum, { kind: 'exposures' }) ?? 0) - (before.value(sum, { kind: 'exposures' }) ?? 0),
      3,
    );
    assert.equal(m.value('agentsplit_exposure_queue_depth'), 0);
    assert.equal(m.value('agentsplit_exposures_dropped_total'), 0);
  });

  test('shows the experiments loaded, by status', async () => {
    const loaded = (m: Exposition, status: string) => m.value('agentsplit_experiments_loaded', { status })!;
    const before = (await scrape()).m;
    await runtime.api.createExperiment({ slug: uniqueSlug('prom') });
    await runtime.api.createExperiment({ slug: uniqueSlug('prom') });
    await runtime.api.createExperiment({ slug: uniqueSlug('prom'), status: 'draft' });
    const paused = await runtime.api.createExperiment({ slug: uniqueSlug('prom') });
    await runtime.api.setStatus(paused.slug, 'paused');
    const { m } = await scrape();
    assert.equal(loaded(m, 'running') - loaded(before, 'running'), 2);
    assert.equal(loaded(m, 'draft') - loaded(before, 'draft'), 1);
    assert.equal(loaded(m, 'paused') - loaded(before, 'paused'), 1);
    assert.equal(loaded(m, 'completed'), 0);
    // The same as the service lists.
    const listed = await runtime.api.get('/experiments?status=running&limit=100');
    assert.equal(loaded(m, 'running'), listed.json().experiments.length);
  });

  test('counts rate-limited requests through the runtime’s metrics', async () => {
    runtime.metrics.rateLimited('failed_auth');
    const { m } = await scrape();
    assert.equal(m.value('agentsplit_rate_limited_total', { reason: 'failed_auth' }), 1);
    assert.equal(m.value('agentsplit_rate_limited_total', { reason: 'key' }), 0);
  });

  test('shows the process metrics', async () => {
    const { m } = await scrape();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_gc_duration_seconds',
    ]) {
      assert.ok(m.types.has(name), `${name} is missing`);
    }
    assert.ok(m.value('process_resident_memory_bytes')! > 10_000_000);
  });

  test('the OpenAPI document describes the 200 as text/plain, under operations, with a key', async () => {
    const doc = (await runtime.api.get('/openapi.json', null)).json();
    const op = doc.paths['/metrics']?.get;
    assert.ok(op, 'GET /metrics is not in the document');
    assert.deepEqual(op.tags, ['operations']);
    assert.ok(op.summary && op.description);
    assert.deepEqual(Object.keys(op.responses['200'].content), ['text/plain']);
    assert.equal(op.responses['200'].content['text/plain'].schema.type, 'string');
    assert.ok(op.responses['401']);
    assert.notDeepEqual(op.security, []);
  });
});

describe('two runtimes in one process', { skip: SKIP_BACKEND }, () => {
  test('each counts its own requests (a registry per runtime)', async () => {
    const dir = makeTempDir();
    const one = await startTestRuntime(dir, 'prometheus-one');
    const two = await startTestRuntime(dir, 'prometheus-two');
    try {
      const { slug } = await one.api.createExperiment({ slug: uniqueSlug('prom') });
      for (let i = 0; i < 3; i++) await one.api.assign(slug, { userId: `u${i}` });
      const labels = { route: ASSIGN, method: 'POST', status: '200' };
      const m1 = parsePrometheus((await one.api.get('/metrics')).body);
      const m2 = parsePrometheus((await two.api.get('/metrics')).body);
      assert.equal(m1.value(REQUESTS, labels), 3);
      assert.equal(m2.value(REQUESTS, labels), undefined);
      assert.equal(m2.value(REQUESTS, { route: '/experiments', method: 'POST', status: '201' }), undefined);
    } finally {
      await one.close();
      await two.close();
      removeTempDir(dir);
    }
  });
});
