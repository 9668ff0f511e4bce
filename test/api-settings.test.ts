// GET /settings (issue 36): the server's public settings the dashboard's help texts state, as configured
// (MONITOR_INTERVAL_SECONDS, RATE_LIMIT_PER_SECOND), to any valid key; nothing without one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertUnauthorized,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  withRuntime,
} from './helpers/app.js';

let dir: string;
let runtime: TestRuntime;

before(async () => {
  dir = makeTempDir();
  runtime = await startTestRuntime(dir, 'settings', {
    monitorIntervalSeconds: 90,
    rateLimits: { perSecond: 250 },
  });
});
after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

test('answers the configured monitor interval and default rate limit, exactly those keys', {
  skip: SKIP_BACKEND,
}, async () => {
  const res = await runtime.api.get('/settings');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { monitorIntervalSeconds: 90, rateLimitPerSecond: 250 });
});

test('a read key may read them; no key may not', { skip: SKIP_BACKEND }, async () => {
  const created = await runtime.api.post('/keys', { name: 'reader', scopes: ['read'] });
  assert.equal(created.statusCode, 201, created.body);
  const res = await runtime.api.get('/settings', created.json().key);
  assert.equal(res.statusCode, 200);
  assertUnauthorized(await runtime.api.get('/settings', null));
});

test('a server with the monitor off says 0', { skip: SKIP_BACKEND }, async () => {
  await withRuntime(dir, 'settings-off', { monitorIntervalSeconds: 0 }, async (off) => {
    assert.deepEqual((await off.api.get('/settings')).json(), {
      monitorIntervalSeconds: 0,
      rateLimitPerSecond: 0,
    });
  });
});
