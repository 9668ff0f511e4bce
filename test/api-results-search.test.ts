// Searching results (issue 36): GET /experiment/:slug/results?q= finds text in a result's input, output,
// or a comment given with feedback on it (its logId or its assignmentId), ignoring case; each result
// carries its newest comments. Runs on SQLite, and on PostgreSQL with AGENTSPLIT_TEST_BACKEND=postgres.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  assertError,
  makeTempDir,
  type Result,
  type ResultPage,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

let dir: string;
let runtime: TestRuntime;
let api: Api;

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return;
  runtime = await startTestRuntime(dir, 'results-search');
  api = runtime.api;
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

type Commented = Result & { comments: Array<{ text: string; at: string }> };

async function search(slug: string, q: string, extra = ''): Promise<Commented[]> {
  const res = await api.get(`/experiment/${slug}/results?q=${encodeURIComponent(q)}${extra}`);
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as ResultPage).results as Commented[];
}

async function log(slug: string, body: Record<string, unknown>): Promise<string> {
  const res = await api.post(`/experiment/${slug}/log`, body);
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { logId: string }).logId;
}

async function feedback(slug: string, body: Record<string, unknown>): Promise<void> {
  const res = await api.post(`/experiment/${slug}/feedback`, body);
  assert.equal(res.statusCode, 200, res.body);
}

const ids = (results: Result[]) => results.map((r) => r.logId);

describe('GET /experiment/:slug/results?q=', { skip: SKIP_BACKEND }, () => {
  test('finds text in the input, the output, and comments on the logId or the assignment, ignoring case', async () => {
    const { slug } = await api.createExperiment();
    const inInput = await log(slug, { variantKey: 'A', input: { question: 'Where is my PARCEL?' } });
    const inOutput = await log(slug, { variantKey: 'B', output: { answer: 'Your parcel ships today.' } });
    const other = await log(slug, { variantKey: 'A', input: { question: 'Refund please' } });
    const commented = await log(slug, { variantKey: 'A', input: { question: 'Hello' } });
    await feedback(slug, { logId: commented, metrics: { rating: 2 }, comment: 'Misread the Parcel number' });
    const assigned = await api.assign(slug, { userId: 'u1' });
    const { assignmentId, variant: variantKey } = assigned;
    const viaAssignment = await log(slug, { variantKey, assignmentId, input: { question: 'Hi' } });
    await feedback(slug, { assignmentId, metrics: { thumbs_up: false }, comment: 'wrong tone entirely' });

    assert.deepEqual(ids(await search(slug, 'parcel')), [inInput, inOutput, commented]);
    assert.deepEqual(ids(await search(slug, 'TONE ENT')), [viaAssignment]);
    assert.deepEqual(ids(await search(slug, 'refund')), [other]);
    assert.deepEqual(await search(slug, 'nowhere to be found'), []);
    // A result logged after a search is found by the next one (the index catches up before reading).
    const late = await log(slug, { variantKey: 'B', output: { answer: 'late parcel' } });
    assert.deepEqual(ids(await search(slug, 'parcel', '&order=desc')), [late, commented, inOutput, inInput]);
  });

  test('each result carries its newest 5 comments, newest first; [] when none', async () => {
    const { slug } = await api.createExperiment();
    const quiet = await log(slug, { variantKey: 'A', input: { q: 'quiet' } });
    const busy = await log(slug, { variantKey: 'A', input: { q: 'busy' } });
    for (let i = 1; i <= 7; i++) {
      await feedback(slug, { logId: busy, metrics: { [`m${i}`]: i, other: 1 }, comment: `comment ${i}` });
    }
    const page = (await api.get(`/experiment/${slug}/results`)).json() as { results: Commented[] };
    const byId = new Map(page.results.map((r) => [r.logId, r]));
    assert.deepEqual(byId.get(quiet)!.comments, []);
    // Sending `other` again replaced its row's comment: the 7 calls left comments 1..7, one each.
    const comments = byId.get(busy)!.comments;
    assert.deepEqual(
      comments.map((c) => c.text),
      ['comment 7', 'comment 6', 'comment 5', 'comment 4', 'comment 3'],
    );
    for (const c of comments) assert.ok(!Number.isNaN(Date.parse(c.at)), c.at);
    const found = await search(slug, 'comment 2');
    assert.deepEqual(ids(found), [busy]);
  });

  test('combines with the variant filter and pages with the cursor', async () => {
    const { slug } = await api.createExperiment();
    const expected: string[] = [];
    for (let i = 0; i < 9; i++) {
      const variantKey = i % 2 === 0 ? 'A' : 'B';
      const id = await log(slug, {
        variantKey,
        output: { text: i % 3 === 0 ? 'no match' : `shared needle ${i}` },
      });
      if (variantKey === 'A' && i % 3 !== 0) expected.push(id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const extra: string = `&variant=A&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await api.get(`/experiment/${slug}/results?q=NEEDLE${extra}`);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json() as ResultPage;
      seen.push(...ids(page.results));
      cursor = page.nextCursor;
    } while (cursor !== null);
    assert.deepEqual(seen, expected);
  });

  test('unicode text is found', async () => {
    const { slug } = await api.createExperiment();
    const id = await log(slug, { variantKey: 'A', input: { text: 'Grüß Gott — 你好世界 — 🎉👩‍💻 done' } });
    await log(slug, { variantKey: 'A', input: { text: 'plain ascii' } });
    assert.deepEqual(ids(await search(slug, 'Grüß')), [id]);
    assert.deepEqual(ids(await search(slug, '你好世')), [id]);
    assert.deepEqual(ids(await search(slug, '🎉👩‍💻')), [id]);
  });

  test('SQL and full-text syntax in q is matched literally, never a 500', async () => {
    const { slug } = await api.createExperiment();
    const special = await log(slug, {
      variantKey: 'A',
      input: { text: "it's 100%_done a*b NEAR(x y) back\\slash OR AND" },
    });
    const plain = await log(slug, {
      variantKey: 'A',
      input: { text: 'its 1000 done ab NEAR x y backslash' },
    });
    for (const q of ["it's", '100%_', 'a*b', 'NEAR(x', 'k\\\\s', ' OR AND']) {
      assert.deepEqual(ids(await search(slug, q)), [special], `q=${q}`);
    }
    assert.deepEqual(ids(await search(slug, '"text"')), [special, plain]);
    for (const q of ['%%%', '___', '***', '"""', "'''", '\\\\\\', 'NEAR', 'a OR b', '");--', '*"NEAR(']) {
      const res = await api.get(`/experiment/${slug}/results?q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 200, `q=${q}: ${res.body}`);
    }
    assert.deepEqual(await search(slug, '%%%'), []);
    assert.deepEqual(await search(slug, '___'), []);
  });

  test('q under 3 characters or over 200 is a 400', async () => {
    const { slug } = await api.createExperiment();
    assertError(await api.get(`/experiment/${slug}/results?q=ab`), 400, /at least 3 characters/);
    assertError(await api.get(`/experiment/${slug}/results?q=`), 400, /at least 3 characters/);
    assertError(await api.get(`/experiment/${slug}/results?q=${'x'.repeat(201)}`), 400, /q/);
    // Three characters, however many bytes.
    assert.deepEqual(await search(slug, '你好世'), []);
  });
});
