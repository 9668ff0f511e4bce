// What was decided when an experiment completed (issue 36, item 5): PATCH with status "completed" and a
// decision, the 400s, the history's event, and reading it back (list and one), on the backend under test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  assertError,
  makeTempDir,
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
  runtime = await startTestRuntime(dir, 'decision');
  api = runtime.api;
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

interface Decision {
  variant: string;
  note: string;
  decidedAt: string;
}

describe('an experiment completed with a decision', { skip: SKIP_BACKEND }, () => {
  test('keeps the decision: in the answer, GET one, the list; not a new version', async () => {
    const e = await api.createExperiment();
    const res = await api.patch(`/experiment/${e.slug}`, {
      status: 'completed',
      decision: { variant: 'B', note: 'as good, 30% cheaper' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const done = res.json();
    assert.equal(done.status, 'completed');
    assert.equal(done.version, e.version);
    const decision = done.decision as Decision;
    assert.equal(decision.variant, 'B');
    assert.equal(decision.note, 'as good, 30% cheaper');
    assert.equal(decision.decidedAt, done.updatedAt);
    assert.deepEqual((await api.get(`/experiment/${e.slug}`)).json().decision, decision);
    const listed = (await api.get('/experiments?status=completed&limit=100')).json().experiments;
    assert.deepEqual(listed.find((x: { slug: string }) => x.slug === e.slug).decision, decision);
    // Archiving keeps it.
    await api.setStatus(e.slug, 'archived');
    assert.deepEqual((await api.get(`/experiment/${e.slug}`)).json().decision, decision);
  });

  test('the history: the status event carries the decision; a correction is an update', async () => {
    const e = await api.createExperiment();
    const done = await api.patch(`/experiment/${e.slug}`, {
      status: 'completed',
      decision: { variant: 'none', note: 'no difference worth the change' },
    });
    assert.equal(done.statusCode, 200, done.body);
    const first = done.json().decision as Decision;
    const fixed = await api.patch(`/experiment/${e.slug}`, { decision: { variant: 'A' } });
    assert.equal(fixed.statusCode, 200, fixed.body);
    const second = fixed.json().decision as Decision;
    assert.deepEqual([second.variant, second.note], ['A', '']);
    const res = await api.get(`/events?experiment=${e.slug}&limit=100`);
    assert.equal(res.statusCode, 200, res.body);
    const events = (res.json().events as Array<{ type: string; data: Record<string, unknown> }>).filter(
      (x) => x.type !== 'experiment.created',
    );
    const byType = Object.fromEntries(events.map((x) => [x.type, x.data]));
    assert.deepEqual(byType['experiment.status_changed'], {
      from: 'running',
      to: 'completed',
      decision: first,
    });
    assert.deepEqual(byType['experiment.updated'], {
      before: { decision: first },
      after: { decision: second },
    });
  });

  test('completing without a decision leaves null, and one can be added while completed', async () => {
    const e = await api.createExperiment();
    await api.setStatus(e.slug, 'completed');
    assert.equal((await api.get(`/experiment/${e.slug}`)).json().decision, null);
    const res = await api.patch(`/experiment/${e.slug}`, { decision: { variant: 'B', note: 'later' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().decision.variant, 'B');
    const removed = await api.patch(`/experiment/${e.slug}`, { decision: null });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(removed.json().decision, null);
  });

  test('400s: an unknown variant names the variants; other statuses; too long a note; bad shapes', async () => {
    const e = await api.createExperiment();
    const url = `/experiment/${e.slug}`;
    assertError(
      await api.patch(url, { status: 'completed', decision: { variant: 'C' } }),
      400,
      /decision\.variant must be one of the variants \(A, B\) or 'none'/,
    );
    assertError(await api.patch(url, { decision: { variant: 'B' } }), 400, /goes with completing/);
    assertError(
      await api.patch(url, { status: 'paused', decision: { variant: 'B' } }),
      400,
      /goes with completing/,
    );
    assertError(
      await api.patch(url, { status: 'completed', decision: { variant: 'B', note: 'x'.repeat(2001) } }),
      400,
      /decision/,
    );
    assertError(await api.patch(url, { status: 'completed', decision: 'B' }), 400, /decision/);
    assertError(await api.patch(url, { status: 'completed', decision: { note: 'n' } }), 400, /decision/);
    // Nothing was changed by the refusals.
    const now = (await api.get(url)).json();
    assert.deepEqual([now.status, now.decision], ['running', null]);
  });
});
