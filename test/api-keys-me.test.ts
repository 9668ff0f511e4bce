// GET /keys/me: the calling key's name, scopes and experiments (what the dashboard shows and which edit
// controls it offers), for the root key and managed keys; never a secret; `read` needed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  API_KEY,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const dir = makeTempDir();
let rt: TestRuntime;

before(async () => {
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'keys-me');
});

after(async () => {
  await rt?.close();
  removeTempDir(dir);
});

async function createKey(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const res = await rt.api.post('/keys', body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

describe('GET /keys/me', { skip: SKIP_BACKEND }, () => {
  test('the root key: name root, every scope, every experiment', async () => {
    const res = await rt.api.get('/keys/me');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      name: 'root',
      scopes: ['assign', 'log', 'read', 'admin'],
      experiments: null,
    });
    assert.equal(res.body.includes(API_KEY), false);
  });

  test('a read key limited to experiments: its own name, scopes and slugs, never its secret', async () => {
    const { key } = await createKey({ name: 'viewer', scopes: ['read'], experiments: ['beta', 'alpha'] });
    const res = await rt.api.get('/keys/me', key);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { name: 'viewer', scopes: ['read'], experiments: ['alpha', 'beta'] });
    assert.equal(res.body.includes(key), false);
    assert.equal(res.body.includes(key.slice(0, 12)), false, 'not even the prefix');
  });

  test('an admin key answers its scopes in the documented order', async () => {
    const { key } = await createKey({ name: 'operator', scopes: ['admin', 'read'] });
    const res = await rt.api.get('/keys/me', key);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { name: 'operator', scopes: ['read', 'admin'], experiments: null });
  });

  test('a key without read is 403 naming the scope; no key or a wrong key is the spec 401', async () => {
    const { key } = await createKey({ name: 'agent', scopes: ['assign', 'log'] });
    const refused = await rt.api.get('/keys/me', key);
    assert.equal(refused.statusCode, 403);
    assert.match(refused.json().error, /lacks the 'read' scope/);
    for (const candidate of [null, 'ask_nope', 'wrong-key-0123456789']) {
      const res = await rt.api.get('/keys/me', candidate);
      assert.equal(res.statusCode, 401);
      assert.equal(res.body, '{"error":"Unauthorized"}');
    }
  });

  test('Authorization: Bearer <key> works as x-api-key does (OFREP providers and MCP clients send it)', async () => {
    const { key } = await createKey({ name: 'bearer', scopes: ['read'] });
    const bearer = (value: string) =>
      rt.api.call({ method: 'GET', url: '/keys/me', key: null, headers: { authorization: value } });
    for (const value of [`Bearer ${key}`, `bearer ${key}`, `BEARER  ${key} `]) {
      const res = await bearer(value);
      assert.equal(res.statusCode, 200, `${value}: ${res.body}`);
      assert.equal(res.json().name, 'bearer');
    }
    for (const value of ['Bearer wrong-key-0123456789', `Basic ${key}`, key, 'Bearer ']) {
      const res = await bearer(value);
      assert.equal(res.statusCode, 401, value);
      assert.equal(res.body, '{"error":"Unauthorized"}');
    }
    // Both sent: x-api-key decides.
    const both = await rt.api.call({
      method: 'GET',
      url: '/keys/me',
      key,
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    assert.equal(both.json().name, 'bearer');
    // An empty x-api-key (an unset variable) does not hide the Bearer token beside it.
    const empty = await rt.api.call({
      method: 'GET',
      url: '/keys/me',
      key: null,
      headers: { 'x-api-key': '', authorization: `Bearer ${key}` },
    });
    assert.equal(empty.statusCode, 200, empty.body);
    assert.equal(empty.json().name, 'bearer');
  });

  test('a revoked key is 401', async () => {
    const { id, key } = await createKey({ name: 'short-lived', scopes: ['read'] });
    assert.equal((await rt.api.get('/keys/me', key)).statusCode, 200);
    assert.equal((await rt.api.call({ method: 'DELETE', url: `/keys/${id}` })).statusCode, 204);
    const res = await rt.api.get('/keys/me', key);
    assert.equal(res.statusCode, 401);
    assert.equal(res.body, '{"error":"Unauthorized"}');
  });

  test('with thousands of keys: each key gets its own name and scopes, from memory (no store read)', async () => {
    const made: Array<{ name: string; key: string; scopes: string[] }> = [];
    const scopeSets = [['read'], ['read', 'log'], ['admin'], ['assign', 'read']];
    for (let i = 0; i < 2000; i += 16) {
      const batch = Array.from({ length: Math.min(16, 2000 - i) }, async (_, j) => {
        const n = i + j;
        const scopes = scopeSets[n % scopeSets.length]!;
        const { key } = await createKey({ name: `agent-${n}`, scopes });
        return { name: `agent-${n}`, key, scopes };
      });
      made.push(...(await Promise.all(batch)));
    }
    // The key list cannot be read from the store now: /keys/me must not need it.
    const store = rt.store;
    const saved = { listKeys: store.listKeys, listKeyPage: store.listKeyPage };
    const refuse = () => Promise.reject(new Error('the key list was read'));
    store.listKeys = refuse;
    store.listKeyPage = refuse;
    try {
      for (const i of [0, 1, 2, 3, 999, 1998, 1999]) {
        const { name, key, scopes } = made[i]!;
        const res = await rt.api.get('/keys/me', key);
        assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
        const order = ['assign', 'log', 'read', 'admin'];
        assert.deepEqual(res.json(), {
          name,
          scopes: [...scopes].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
          experiments: null,
        });
      }
      // Sixteen at once, all answered, each with its own name.
      const answers = await Promise.all(made.slice(100, 116).map((m) => rt.api.get('/keys/me', m.key)));
      assert.deepEqual(
        answers.map((a) => a.json().name),
        made.slice(100, 116).map((m) => m.name),
      );
    } finally {
      store.listKeys = saved.listKeys;
      store.listKeyPage = saved.listKeyPage;
    }
  });
});
