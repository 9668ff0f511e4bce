import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { resolveApiKey } from './api-key.js';
import { ConfigError, loadConfig } from './config.js';

test('defaults: port 3000 on 127.0.0.1, SQLite under ./data, 1 MiB bodies, info logs', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3000);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.bodyLimit, 1024 * 1024);
  assert.equal(c.logLevel, 'info');
  assert.equal(c.apiKey, undefined);
  assert.deepEqual(c.database, {
    kind: 'sqlite',
    path: join(process.cwd(), 'data', 'agentsplit.db'),
    writerNice: 10,
  });
});

test('DATABASE_URL forms', () => {
  assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database, {
    kind: 'sqlite',
    path: ':memory:',
  });
  assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.db' }).database, {
    kind: 'sqlite',
    path: '/tmp/x.db',
    writerNice: 10,
  });
  assert.deepEqual(loadConfig({ DATABASE_URL: 'postgres://u@h/db', DATABASE_POOL_SIZE: '25' }).database, {
    kind: 'postgres',
    url: 'postgres://u@h/db',
    poolSize: 25,
    statementTimeoutMs: 4000,
  });
  assert.deepEqual(
    loadConfig({ DATABASE_URL: 'postgres://u@h/db', DATABASE_STATEMENT_TIMEOUT_MS: '0' }).database,
    {
      kind: 'postgres',
      url: 'postgres://u@h/db',
      poolSize: 10,
      statementTimeoutMs: 0,
    },
  );
  assert.throws(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '-1' }), /DATABASE_STATEMENT_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL must start with/);
});

test('bad values are refused with the variable named', () => {
  assert.throws(() => loadConfig({ PORT: 'eighty' }), ConfigError);
  assert.throws(() => loadConfig({ PORT: '70000' }), /PORT must be an integer/);
  assert.throws(() => loadConfig({ BODY_LIMIT: '-1' }), /BODY_LIMIT/);
  assert.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL/);
  assert.throws(() => loadConfig({ API_KEY: 'short' }), /API_KEY must be at least 16/);
});

test('MONITOR_INTERVAL_SECONDS: 60 by default, 0 turns the monitor off, anything else refused', () => {
  assert.equal(loadConfig({}).monitorIntervalSeconds, 60);
  assert.equal(loadConfig({ MONITOR_INTERVAL_SECONDS: '0' }).monitorIntervalSeconds, 0);
  assert.equal(loadConfig({ MONITOR_INTERVAL_SECONDS: '5' }).monitorIntervalSeconds, 5);
  assert.throws(() => loadConfig({ MONITOR_INTERVAL_SECONDS: '-1' }), /MONITOR_INTERVAL_SECONDS/);
  assert.throws(() => loadConfig({ MONITOR_INTERVAL_SECONDS: '1.5' }), /MONITOR_INTERVAL_SECONDS/);
});

test('without API_KEY a strong key is generated once, kept with mode 0600, and reused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-key-'));
  try {
    const first = resolveApiKey(undefined, dir, false);
    assert.equal(first.generated, true);
    assert.ok(first.key.length >= 40);
    assert.equal(statSync(first.file!).mode & 0o777, 0o600);
    assert.equal(readFileSync(first.file!, 'utf8').trim(), first.key);
    const second = resolveApiKey(undefined, dir, false);
    assert.equal(second.generated, false);
    assert.equal(second.key, first.key);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('in production a missing API_KEY refuses to start', () => {
  assert.throws(() => resolveApiKey(undefined, '/nonexistent', true), /NODE_ENV=production/);
  assert.equal(
    resolveApiKey('configured-key-0123456789', '/nonexistent', true).key,
    'configured-key-0123456789',
  );
});

test('an empty or short key file refuses to start instead of accepting an empty key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-key-'));
  try {
    for (const content of ['', '  \n', 'short']) {
      writeFileSync(join(dir, 'api-key'), content);
      assert.throws(() => resolveApiKey(undefined, dir, false), /holds no valid key/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CORS_ORIGINS: off by default; a comma-separated list of origins, or * for any origin', () => {
  assert.deepEqual(loadConfig({}).corsOrigins, []);
  assert.deepEqual(loadConfig({ CORS_ORIGINS: '' }).corsOrigins, []);
  assert.deepEqual(
    loadConfig({ CORS_ORIGINS: 'https://dash.example.com, http://localhost:5173,,' }).corsOrigins,
    ['https://dash.example.com', 'http://localhost:5173'],
  );
  assert.deepEqual(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*']);
  assert.deepEqual(loadConfig({ CORS_ORIGINS: 'http://[::1]:8080' }).corsOrigins, ['http://[::1]:8080']);
  // Written as browsers send Origin (they are compared exactly): lowercase host, no default port.
  assert.deepEqual(
    loadConfig({ CORS_ORIGINS: 'https://Dash.Example.com:443,HTTP://a.example:80' }).corsOrigins,
    ['https://dash.example.com', 'http://a.example'],
  );
  assert.deepEqual(loadConfig({ CORS_ORIGINS: 'chrome-extension://abcdef' }).corsOrigins, [
    'chrome-extension://abcdef',
  ]);
});

test('CORS_ORIGINS: an entry that is not an origin refuses to start, naming the entry', () => {
  for (const bad of [
    'dash.example.com',
    'https://dash.example.com/',
    'https://dash.example.com/app',
    'https://dash.example.com?x=1',
    'https://user@dash.example.com',
    'https://dash.example.com:99999',
    'null',
    '*.example.com',
    'https://ok.example.com,ftp:/nohost',
  ]) {
    assert.throws(
      () => loadConfig({ CORS_ORIGINS: bad }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /^CORS_ORIGINS entries must be origins such as https:\/\/dash\.example\.com/.test(err.message) &&
        err.message.includes(`(got '${bad.split(',').pop()}')`),
      bad,
    );
  }
});

test('webhooks: the retry schedule, the timeout and WEBHOOK_DENY_PRIVATE', () => {
  const c = loadConfig({});
  assert.deepEqual(c.webhooks, {
    retrySchedule: [5, 300, 1800, 7200, 18000, 36000, 36000],
    timeoutMs: 15_000,
    denyPrivate: false,
  });
  const set = loadConfig({
    WEBHOOK_RETRY_SCHEDULE: '0.2, 1,60',
    WEBHOOK_TIMEOUT_SECONDS: '3',
    WEBHOOK_DENY_PRIVATE: 'true',
  });
  assert.deepEqual(set.webhooks, { retrySchedule: [0.2, 1, 60], timeoutMs: 3000, denyPrivate: true });
  for (const bad of ['1,,2', 'x', '-1', '1e9']) {
    assert.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad }), ConfigError, bad);
  }
  assert.throws(() => loadConfig({ WEBHOOK_DENY_PRIVATE: 'yes' }), ConfigError);
});

test('MCP_ALLOWED_HOSTS: local names and HOST by default; a list replaces them; bad entries refuse to start', () => {
  assert.deepEqual(loadConfig({}).mcp.allowedHosts, ['localhost', '127.0.0.1', '[::1]']);
  assert.deepEqual(loadConfig({ HOST: '10.0.0.5' }).mcp.allowedHosts, [
    'localhost',
    '127.0.0.1',
    '[::1]',
    '10.0.0.5',
  ]);
  assert.deepEqual(loadConfig({ HOST: '::' }).mcp.allowedHosts, ['localhost', '127.0.0.1', '[::1]', '[::]']);
  assert.deepEqual(loadConfig({ MCP_ALLOWED_HOSTS: 'Agents.Example.com, ::1,,*' }).mcp.allowedHosts, [
    'agents.example.com',
    '[::1]',
    '*',
  ]);
  for (const bad of ['agents.example.com:8080', 'https://agents.example.com', '[::1'])
    assert.throws(
      () => loadConfig({ MCP_ALLOWED_HOSTS: bad }),
      /MCP_ALLOWED_HOSTS entries must be host names/,
    );
});

test('MCP_ALLOWED_ORIGINS: empty by default (origins of allowed hosts); origins as CORS_ORIGINS takes them', () => {
  assert.deepEqual(loadConfig({}).mcp.allowedOrigins, []);
  assert.deepEqual(
    loadConfig({ MCP_ALLOWED_ORIGINS: 'https://Console.example.com:443' }).mcp.allowedOrigins,
    ['https://console.example.com'],
  );
  assert.throws(
    () => loadConfig({ MCP_ALLOWED_ORIGINS: 'console.example.com' }),
    /MCP_ALLOWED_ORIGINS entries must be origins/,
  );
});

test('TRUST_PROXY: none by default; a hop count, or proxies by address and CIDR; true and bad entries refuse to start', () => {
  assert.equal(loadConfig({}).trustProxy, 0);
  for (const none of ['', '0', 'false']) assert.equal(loadConfig({ TRUST_PROXY: none }).trustProxy, 0);
  assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
  assert.equal(loadConfig({ TRUST_PROXY: ' 2 ' }).trustProxy, 2);
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,,::1, loopback' }).trustProxy, [
    '10.0.0.0/8',
    '127.0.0.1',
    '::1',
    'loopback',
  ]);
  assert.throws(
    () => loadConfig({ TRUST_PROXY: 'true' }),
    /TRUST_PROXY must be .*'true' would let any client/,
  );
  assert.throws(() => loadConfig({ TRUST_PROXY: '11' }), /TRUST_PROXY must be a hop count from 0 to 10/);
  for (const bad of ['nginx.internal', '10.0.0.0/33', '10.0.0.1, 300.1.1.1', '-1'])
    assert.throws(() => loadConfig({ TRUST_PROXY: bad }), ConfigError);
  assert.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.1,proxy' }), /\(got 'proxy'\)/);
});
