// Large definitions and experiment lists (issue 24, item 2): many running experiments of 100 variants
// with kilobytes of payload each. GET /experiments/definitions is built once per change (304 by its
// ETag, gzip when accepted, only the key's experiments) and does not hold up the server; GET
// /experiments ends a page before 1 MB, and its cursors still visit every experiment once.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import {
  API_KEY,
  type Api,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  seededRandom,
  send,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

const EXPERIMENTS = 40;
const VARIANTS = 100;
const PAYLOAD_CHARS = 1500;
const PAGE_BYTES = 1024 * 1024;

interface Definition {
  slug: string;
  version: number;
  variants: { key: string; payload: { prompt: string } }[];
}

const URL_ = '/experiments/definitions';

/** Prompts of varied words, so that gzip has real text to work on. */
function variants(seed: number, version = 1) {
  const random = seededRandom(seed);
  const words = ['you', 'are', 'a', 'helpful', 'terse', 'assistant', 'answer', 'the', 'customer', 'order'];
  return Array.from({ length: VARIANTS }, (_, i) => {
    let prompt = `v${version} `;
    while (prompt.length < PAYLOAD_CHARS)
      prompt += `${words[Math.floor(random() * words.length)]} ${random()} `;
    return {
      key: `V${i}`,
      trafficPercent: 100 / VARIANTS,
      payload: { prompt: prompt.slice(0, PAYLOAD_CHARS) },
    };
  });
}

describe('large definitions and experiment lists', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  /** Every experiment this file made, by slug, running unless a test stops it. */
  const made: string[] = [];

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'definitions_size');
    api = runtime.api;
    for (let i = 0; i < EXPERIMENTS; i++) {
      const e = await api.createExperiment({ slug: uniqueSlug(`big-${i}`), variants: variants(i) });
      made.push(e.slug);
    }
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  const fetchDefinitions = (headers: Record<string, string> = {}, key?: string) =>
    api.call({ method: 'GET', url: URL_, headers, key });

  const slugsOf = (body: string) =>
    (JSON.parse(body) as { experiments: Definition[] }).experiments.map((d) => d.slug);

  test('a full fetch is 200 with a strong ETag; the same tag answers 304 with no body', async () => {
    const full = await fetchDefinitions();
    assert.equal(full.statusCode, 200);
    assert.equal(full.headers['content-encoding'], undefined);
    assert.match(String(full.headers['content-type']), /^application\/json/);
    assert.equal(Number(full.headers['content-length']), full.rawPayload.length);
    assert.ok(
      full.rawPayload.length > EXPERIMENTS * VARIANTS * PAYLOAD_CHARS,
      `${full.rawPayload.length} bytes`,
    );
    const slugs = slugsOf(full.body);
    assert.deepEqual(slugs, [...made].sort());
    const etag = full.headers.etag as string;
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);

    for (let i = 0; i < 3; i++) {
      const again = await fetchDefinitions({ 'if-none-match': etag });
      assert.equal(again.statusCode, 304);
      assert.equal(again.rawPayload.length, 0);
      assert.equal(again.headers.etag, etag);
    }
    // An unchanged set answers the same bytes.
    assert.ok((await fetchDefinitions()).rawPayload.equals(full.rawPayload));
  });

  test('gzip when Accept-Encoding allows it: its own tag, and it gunzips to the identical JSON', async () => {
    const plain = await fetchDefinitions({ 'accept-encoding': 'identity' });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /accept-encoding/i);
    const zipped = await fetchDefinitions({ 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.match(String(zipped.headers.vary), /accept-encoding/i);
    assert.equal(Number(zipped.headers['content-length']), zipped.rawPayload.length);
    assert.ok(zipped.rawPayload.length < plain.rawPayload.length / 2, `${zipped.rawPayload.length} bytes`);
    assert.ok(gunzipSync(zipped.rawPayload).equals(plain.rawPayload));
    const tag = plain.headers.etag as string;
    assert.equal(zipped.headers.etag, `${tag.slice(0, -1)}-gzip"`);

    // Either tag answers 304, whichever form is asked for.
    for (const [ifNoneMatch, encoding] of [
      [zipped.headers.etag as string, 'gzip'],
      [tag, 'gzip'],
      [zipped.headers.etag as string, 'identity'],
    ] as const) {
      const res = await fetchDefinitions({ 'if-none-match': ifNoneMatch, 'accept-encoding': encoding });
      assert.equal(res.statusCode, 304, `${ifNoneMatch} ${encoding}`);
      assert.equal(res.rawPayload.length, 0);
    }
  });

  test('a key limited to some experiments sees only those, plain and gzip', async () => {
    const mine = [made[7]!, made[3]!];
    const created = await api.post('/keys', { name: 'agent', scopes: ['assign'], experiments: mine });
    assert.equal(created.statusCode, 201, created.body);
    const key = (created.json() as { key: string }).key;
    const plain = await fetchDefinitions({}, key);
    assert.equal(plain.statusCode, 200);
    assert.deepEqual(slugsOf(plain.body), [...mine].sort());
    const zipped = await fetchDefinitions({ 'accept-encoding': 'gzip' }, key);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.ok(gunzipSync(zipped.rawPayload).equals(plain.rawPayload));
    const all = await fetchDefinitions();
    assert.notEqual(plain.headers.etag, all.headers.etag);
    // The whole set's tag is not this key's.
    assert.equal(
      (await fetchDefinitions({ 'if-none-match': all.headers.etag as string }, key)).statusCode,
      200,
    );
    assert.equal(
      (await fetchDefinitions({ 'if-none-match': plain.headers.etag as string }, key)).statusCode,
      304,
    );
  });

  test('a change (new variants, a stopped experiment) changes the ETag and the answer', async () => {
    const before = await fetchDefinitions({ 'accept-encoding': 'gzip' });
    const etag = before.headers.etag as string;
    const changed = made[5]!;
    const patched = await api.patch(`/experiment/${changed}`, { variants: variants(5, 2) });
    assert.equal(patched.statusCode, 200, patched.body);
    const after = await fetchDefinitions({ 'if-none-match': etag, 'accept-encoding': 'gzip' });
    assert.equal(after.statusCode, 200);
    assert.notEqual(after.headers.etag, etag);
    const definitions = (JSON.parse(gunzipSync(after.rawPayload).toString()) as { experiments: Definition[] })
      .experiments;
    const d = definitions.find((x) => x.slug === changed)!;
    assert.equal(d.version, 2);
    assert.match(d.variants[0]!.payload.prompt, /^v2 /);

    const stopped = made.at(-1)!;
    await api.setStatus(stopped, 'paused');
    const without = await fetchDefinitions({ 'if-none-match': after.headers.etag as string });
    assert.equal(without.statusCode, 200);
    assert.ok(!slugsOf(without.body).includes(stopped));
    await api.setStatus(stopped, 'running');
    assert.deepEqual(slugsOf((await fetchDefinitions()).body), [...made].sort());
  });

  /** One full fetch over its own connection, counting the bytes (not keeping them). */
  function fullFetch(): Promise<{ status: number; bytes: number; length: number }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: api.port, path: URL_, headers: { 'x-api-key': API_KEY } },
        (res) => {
          let bytes = 0;
          res.on('data', (d: Buffer) => {
            bytes += d.length;
          });
          res.on('error', reject);
          res.on('end', () =>
            resolve({ status: res.statusCode!, bytes, length: Number(res.headers['content-length']) }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  test('/healthz keeps answering while 16 full fetches run at once, and each fetch is whole', async (t) => {
    let fetching = true;
    const healthz: number[] = [];
    const fetches = Promise.all(Array.from({ length: 16 }, () => fullFetch())).finally(() => {
      fetching = false;
    });
    const poll = (async () => {
      while (fetching) {
        const started = performance.now();
        const res = await send(api.port, { method: 'GET', url: '/healthz', headers: {} });
        assert.equal(res.statusCode, 200);
        if (fetching) healthz.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const started = performance.now();
    const answers = await fetches;
    const ms = performance.now() - started;
    await poll;
    for (const a of answers) {
      assert.equal(a.status, 200);
      assert.equal(a.bytes, a.length);
    }
    const slowest = Math.max(0, ...healthz);
    t.diagnostic(
      `16 fetches of ${answers[0]!.bytes} bytes in ${ms.toFixed(0)} ms; /healthz ×${healthz.length} meanwhile, slowest ${slowest.toFixed(1)} ms`,
    );
    // Liveness, not speed: answered while the fetches were still running.
    assert.ok(healthz.length >= 1, 'no /healthz answer while the fetches ran');
  });

  test('GET /experiments?limit=100 pages by bytes too; following the cursors lists each experiment once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await api.get(`/experiments?limit=100${after}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.rawPayload.length <= PAGE_BYTES + 1024, `a page of ${res.rawPayload.length} bytes`);
      const page = res.json() as { experiments: { slug: string }[]; nextCursor: string | null };
      assert.ok(page.experiments.length >= 1);
      if (pages === 0) {
        assert.ok(page.experiments.length < 100);
        assert.notEqual(page.nextCursor, null);
      }
      seen.push(...page.experiments.map((e) => e.slug));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    assert.equal(new Set(seen).size, seen.length, 'no experiment twice');
    assert.deepEqual([...seen].sort(), [...made].sort());
    assert.ok(pages >= 4, `${pages} pages`);
  });
});
