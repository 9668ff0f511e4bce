import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import pino from 'pino';
import { register as globalRegistry } from 'prom-client';
import { parsePrometheus } from '../test/helpers/prometheus.js';
import { UnavailableError } from './core/errors.js';
import { createRequestLog } from './http/request-log.js';
import { GroupCommit } from './ingest/group-commit.js';
import { exposure, result } from './ingest/test-fixtures.js';
import { createMetrics, LATENCY_BOUNDS, type MetricSources, UNMATCHED_ROUTE } from './metrics.js';

const REQUESTS = 'agentsplit_http_requests_total';
const LATENCY = 'agentsplit_http_request_duration_seconds';
const ASSIGN = '/experiment/:slug/assign';

async function scrape(metrics: ReturnType<typeof createMetrics>) {
  return parsePrometheus(await metrics.scrape());
}

const noSources: MetricSources = {
  pendingExposures: () => 0,
  droppedExposures: () => 0,
  experiments: () => [],
};

test('requests are counted by route pattern, method and status; unmatched ones under one label', async () => {
  const metrics = createMetrics();
  metrics.answered(ASSIGN, 'POST', 200, 0.3);
  metrics.answered(ASSIGN, 'POST', 200, 0.4);
  metrics.answered(ASSIGN, 'POST', 404, 0.2);
  metrics.answered('/experiment/:slug', 'GET', 200, 2);
  metrics.answered('/experiment/:slug', 'DELETE', 204, 3);
  metrics.answered(undefined, 'GET', 404, 1);
  metrics.answered(undefined, 'POST', 404, 1);
  const m = await scrape(metrics);
  assert.equal(m.types.get(REQUESTS), 'counter');
  assert.equal(m.value(REQUESTS, { route: ASSIGN, method: 'POST', status: '200' }), 2);
  assert.equal(m.value(REQUESTS, { route: ASSIGN, method: 'POST', status: '404' }), 1);
  assert.equal(m.value(REQUESTS, { route: '/experiment/:slug', method: 'GET', status: '200' }), 1);
  assert.equal(m.value(REQUESTS, { route: '/experiment/:slug', method: 'DELETE', status: '204' }), 1);
  assert.equal(m.value(REQUESTS, { route: UNMATCHED_ROUTE, method: 'GET', status: '404' }), 1);
  assert.equal(m.value(REQUESTS, { route: UNMATCHED_ROUTE, method: 'POST', status: '404' }), 1);
  assert.equal(m.find(REQUESTS).length, 6);
});

test('the latency histogram has bounds from 0.5 ms to 10 s, cumulative, with +Inf equal to the count', async () => {
  const metrics = createMetrics();
  // In ms: at the first bound, between bounds, beyond the last.
  for (const ms of [0.5, 0.7, 3, 3, 40, 12_000]) metrics.answered(ASSIGN, 'POST', 200, ms);
  const m = await scrape(metrics);
  assert.equal(m.types.get(LATENCY), 'histogram');
  const labels = { route: ASSIGN, method: 'POST' };
  const series = m.find(`${LATENCY}_bucket`, labels);
  assert.deepEqual(
    series.map((b) => b.labels.le),
    [...LATENCY_BOUNDS.map(String), '+Inf'],
  );
  assert.equal(LATENCY_BOUNDS[0], 0.0005);
  assert.equal(LATENCY_BOUNDS.at(-1), 10);
  const at = (le: string) => m.value(`${LATENCY}_bucket`, { ...labels, le });
  assert.equal(at('0.0005'), 1);
  assert.equal(at('0.001'), 2);
  assert.equal(at('0.005'), 4);
  assert.equal(at('0.05'), 5);
  assert.equal(at('10'), 5);
  assert.equal(at('+Inf'), 6);
  for (let i = 1; i < series.length; i++) assert.ok(series[i]!.value >= series[i - 1]!.value);
  assert.equal(m.value(`${LATENCY}_count`, labels), 6);
  const sum = m.value(`${LATENCY}_sum`, labels)!;
  assert.ok(Math.abs(sum - 12.0472) < 1e-9, String(sum));
});

test('the request log counts every answer, and a database outage (503) as a database error', async () => {
  const metrics = createMetrics();
  const log = createRequestLog(pino({ level: 'silent' }), { slowMs: 1000, metrics });
  const req = { method: 'POST', url: '/experiment/x/log', headers: {} } as IncomingMessage;
  log.answered(req, undefined, 200, 1, undefined, '/experiment/:slug/log');
  log.answered(
    req,
    undefined,
    503,
    1,
    new UnavailableError('the database is unreachable', 1),
    '/experiment/:slug/log',
  );
  log.answered(req, undefined, 500, 1, new Error('a bug'), '/experiment/:slug/log');
  log.answered(req, undefined, 400, 0);
  const m = await scrape(metrics);
  const logRoute = { route: '/experiment/:slug/log', method: 'POST' };
  assert.equal(m.value(REQUESTS, { ...logRoute, status: '200' }), 1);
  assert.equal(m.value(REQUESTS, { ...logRoute, status: '503' }), 1);
  assert.equal(m.value(REQUESTS, { ...logRoute, status: '500' }), 1);
  assert.equal(m.value(REQUESTS, { route: UNMATCHED_ROUTE, method: 'POST', status: '400' }), 1);
  assert.equal(m.value('agentsplit_database_errors_total', { source: 'request' }), 1);
  assert.equal(m.value('agentsplit_database_errors_total', { source: 'exposure_write' }), 0);
  assert.equal(m.value('agentsplit_database_errors_total', { source: 'experiment_sync' }), 0);
});

test('a group commit reports each committed batch: results per commit and each request’s wait', async () => {
  const metrics = createMetrics();
  const gates: Array<() => void> = [];
  const gc = new GroupCommit(() => new Promise<void>((resolve) => gates.push(resolve)), {
    onCommit: (info) => metrics.committed(info),
  });
  // Three requests arrive together (one of two results): one transaction of 4 results.
  const first = Promise.all([
    gc.appendResults([result('a')]),
    gc.appendResults([result('b'), result('c')]),
    gc.appendResults([result('d')]),
  ]);
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 20));
  gates.shift()!();
  await first;
  // Then one alone.
  const second = gc.appendResults([result('e')]);
  await new Promise((r) => setImmediate(r));
  gates.shift()!();
  await second;
  const m = await scrape(metrics);
  const size = 'agentsplit_group_commit_batch_size';
  assert.equal(m.types.get(size), 'histogram');
  assert.equal(m.value(`${size}_count`, { kind: 'results' }), 2);
  assert.equal(m.value(`${size}_sum`, { kind: 'results' }), 5);
  assert.equal(m.value(`${size}_bucket`, { kind: 'results', le: '1' }), 1);
  assert.equal(m.value(`${size}_bucket`, { kind: 'results', le: '5' }), 2);
  assert.equal(m.value(`${size}_count`, { kind: 'exposures' }), 0);
  const wait = 'agentsplit_group_commit_wait_seconds';
  assert.equal(m.types.get(wait), 'histogram');
  assert.equal(m.value(`${wait}_count`), 4, 'one wait per request');
  // The first three waited at least the 20 ms their transaction was held.
  assert.ok(m.value(`${wait}_sum`)! >= 0.06, String(m.value(`${wait}_sum`)));
  assert.equal(m.value(`${wait}_bucket`, { le: '0.01' }), 1, 'only the last request waited under 10 ms');
});

test('the exposure queue depth and the exposures dropped are read from the group commit when scraped', async () => {
  const metrics = createMetrics();
  const gates: Array<() => void> = [];
  const gc = new GroupCommit(() => new Promise<void>((resolve) => gates.push(resolve)), {
    maxBufferedExposures: 3,
    exposureDelayMs: 60_000,
    onCommit: (info) => metrics.committed(info),
  });
  metrics.watch({
    ...noSources,
    pendingExposures: () => gc.pendingExposures,
    droppedExposures: () => gc.droppedExposures,
  });
  for (let i = 0; i < 5; i++) gc.appendExposure(exposure(String(i)));
  let m = await scrape(metrics);
  assert.equal(m.types.get('agentsplit_exposure_queue_depth'), 'gauge');
  assert.equal(m.value('agentsplit_exposure_queue_depth'), 3);
  assert.equal(m.types.get('agentsplit_exposures_dropped_total'), 'counter');
  assert.equal(m.value('agentsplit_exposures_dropped_total'), 2);
  gc.appendExposure(exposure('5'));
  const drained = gc.drain();
  await new Promise((r) => setImmediate(r));
  gates.shift()!();
  await drained;
  m = await scrape(metrics);
  assert.equal(m.value('agentsplit_exposure_queue_depth'), 0);
  assert.equal(m.value('agentsplit_exposures_dropped_total'), 3);
  assert.equal(m.value('agentsplit_group_commit_batch_size_sum', { kind: 'exposures' }), 3);
  assert.equal(m.value('agentsplit_group_commit_batch_size_count', { kind: 'results' }), 0);
});

test('experiments loaded are counted by status when scraped, every status shown', async () => {
  const metrics = createMetrics();
  const statuses = ['running', 'running', 'draft', 'archived'] as const;
  metrics.watch({ ...noSources, experiments: () => statuses.map((status) => ({ experiment: { status } })) });
  const m = await scrape(metrics);
  assert.equal(m.types.get('agentsplit_experiments_loaded'), 'gauge');
  const loaded = (status: string) => m.value('agentsplit_experiments_loaded', { status });
  assert.deepEqual(
    ['draft', 'running', 'paused', 'completed', 'released', 'archived'].map(loaded),
    [1, 2, 0, 0, 0, 1],
  );
});

test('rate-limited requests are counted by reason; both reasons are shown at 0 from the start', async () => {
  const metrics = createMetrics();
  let m = await scrape(metrics);
  assert.equal(m.types.get('agentsplit_rate_limited_total'), 'counter');
  assert.equal(m.value('agentsplit_rate_limited_total', { reason: 'key' }), 0);
  assert.equal(m.value('agentsplit_rate_limited_total', { reason: 'failed_auth' }), 0);
  metrics.rateLimited('key');
  metrics.rateLimited('key');
  metrics.rateLimited('failed_auth');
  m = await scrape(metrics);
  assert.equal(m.value('agentsplit_rate_limited_total', { reason: 'key' }), 2);
  assert.equal(m.value('agentsplit_rate_limited_total', { reason: 'failed_auth' }), 1);
});

test('each runtime has a registry of its own, never prom-client’s global one', async () => {
  const one = createMetrics();
  const two = createMetrics();
  one.answered(ASSIGN, 'POST', 200, 1);
  one.answered(ASSIGN, 'POST', 200, 1);
  two.answered(ASSIGN, 'POST', 200, 1);
  const labels = { route: ASSIGN, method: 'POST', status: '200' };
  assert.equal((await scrape(one)).value(REQUESTS, labels), 2);
  assert.equal((await scrape(two)).value(REQUESTS, labels), 1);
  assert.doesNotMatch(await globalRegistry.metrics(), /agentsplit_|process_cpu/);
});

test('the process metrics are collected', async () => {
  const m = await scrape(createMetrics());
  for (const name of [
    'process_cpu_user_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_heap_size_used_bytes',
    'nodejs_eventloop_lag_seconds',
  ]) {
    assert.ok(m.types.has(name), `${name} is missing`);
    assert.ok(m.find(name).length > 0, `${name} has no sample`);
  }
  assert.ok(m.value('process_resident_memory_bytes')! > 0);
});

test('resetting the registry zeroes the counts in place, and counting goes on', async () => {
  const metrics = createMetrics();
  metrics.answered(ASSIGN, 'POST', 200, 1);
  metrics.registry.resetMetrics();
  let m = await scrape(metrics);
  assert.equal(m.value(REQUESTS, { route: ASSIGN, method: 'POST', status: '200' }), 0);
  assert.equal(m.value(`${LATENCY}_count`, { route: ASSIGN, method: 'POST' }), 0);
  metrics.answered(ASSIGN, 'POST', 200, 1);
  m = await scrape(metrics);
  assert.equal(m.value(REQUESTS, { route: ASSIGN, method: 'POST', status: '200' }), 1);
});
