// The history (issue 27 item 2) through the real server: every change to experiments and keys is an
// event with its actor, written with the change; GET /experiment/:slug/events and GET /events page it
// oldest first, filter it by type and time, and check scopes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  API_KEY,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

interface Event {
  id: string;
  type: string;
  at: string;
  actor: { kind: string; id?: string; name?: string };
  experiment: string | null;
  data: Record<string, unknown>;
}

const dir = makeTempDir();
let rt: TestRuntime;
/** A managed admin key for every experiment, named release-bot. */
let bot: { id: string; key: string };

const ROOT = { kind: 'key', id: 'root', name: 'root' };

before(async () => {
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'events');
  bot = await createKey({ name: 'release-bot', scopes: ['admin'] });
});

after(async () => {
  await rt?.close();
  removeTempDir(dir);
});

async function createKey(body: Record<string, unknown>, key = API_KEY): Promise<{ id: string; key: string }> {
  const res = await rt.api.post('/keys', body, key);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** Every page of `url` (which has a query string), walked by cursor. */
async function walk(url: string, key = API_KEY): Promise<{ events: Event[]; pages: number }> {
  const events: Event[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await rt.api.get(`${url}${cursor === null ? '' : `&cursor=${cursor}`}`, key);
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json() as { events: Event[]; nextCursor: string | null };
    events.push(...page.events);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== null);
  return { events, pages };
}

async function historyOf(slug: string): Promise<Event[]> {
  return (await walk(`/experiment/${slug}/events?limit=100`)).events;
}

describe('history', { skip: SKIP_BACKEND }, () => {
  test('every change to an experiment is an event with its actor: root creates, a managed key updates and pauses', async () => {
    const slug = uniqueSlug('hist');
    await rt.api.createExperiment({ slug, name: 'First name', status: 'draft' });
    const patch = (body: unknown) =>
      rt.api.call({ method: 'PATCH', url: `/experiment/${slug}`, body, key: bot.key });
    assert.equal((await patch({ name: 'Second name', status: 'running' })).statusCode, 200);
    assert.equal((await patch({ status: 'paused' })).statusCode, 200);
    const variants = [
      { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'b2' }, trafficPercent: 50 },
    ];
    assert.equal((await patch({ variants })).statusCode, 200);

    const events = await historyOf(slug);
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'experiment.created',
        'experiment.updated',
        'experiment.status_changed',
        'experiment.status_changed',
        'experiment.updated',
      ],
    );
    const [created, renamed, started, paused, revariant] = events as [Event, Event, Event, Event, Event];
    assert.deepEqual(created.actor, ROOT);
    assert.equal((created.data.experiment as { slug: string }).slug, slug);
    const botActor = { kind: 'key', id: bot.id, name: 'release-bot' };
    for (const e of [renamed, started, paused, revariant]) assert.deepEqual(e.actor, botActor);
    assert.deepEqual(renamed.data, { before: { name: 'First name' }, after: { name: 'Second name' } });
    assert.deepEqual(started.data, { from: 'draft', to: 'running' });
    assert.deepEqual(paused.data, { from: 'running', to: 'paused' });
    const before = revariant.data.before as { version: number; variants: unknown[] };
    const afterChange = revariant.data.after as { version: number; variants: Array<{ payload: unknown }> };
    assert.equal(before.version, 1);
    assert.equal(afterChange.version, 2);
    assert.deepEqual(afterChange.variants[1]?.payload, { prompt: 'b2' });
    for (const e of events) {
      assert.match(e.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(e.experiment, slug);
      assert.ok(!Number.isNaN(Date.parse(e.at)));
    }
    // Oldest first: the times never go back.
    for (let i = 1; i < events.length; i++) assert.ok(events[i - 1]!.at <= events[i]!.at);
    // A PATCH that changes nothing records nothing.
    assert.equal((await patch({ status: 'paused' })).statusCode, 200);
    assert.equal((await patch({ name: 'Second name' })).statusCode, 200);
    assert.equal((await historyOf(slug)).length, 5);
  });

  test("an experiment's history takes type= and since= (the dashboard's status banner reads its status changes)", async () => {
    const slug = uniqueSlug('typed');
    await rt.api.createExperiment({ slug, status: 'running' });
    const patch = (body: unknown) =>
      rt.api.call({ method: 'PATCH', url: `/experiment/${slug}`, key: bot.key, body });
    assert.equal((await patch({ name: 'Renamed' })).statusCode, 200);
    assert.equal((await patch({ status: 'paused' })).statusCode, 200);
    const res = await rt.api.get(`/experiment/${slug}/events?type=experiment.status_changed`);
    assert.equal(res.statusCode, 200, res.body);
    const changes = res.json().events as Event[];
    assert.deepEqual(
      changes.map((e) => [e.type, e.data.to, e.actor]),
      [['experiment.status_changed', 'paused', { kind: 'key', id: bot.id, name: 'release-bot' }]],
    );
    const prefixed = (await rt.api.get(`/experiment/${slug}/events?type=experiment.*`)).json()
      .events as Event[];
    assert.deepEqual(
      prefixed.map((e) => e.type),
      ['experiment.created', 'experiment.updated', 'experiment.status_changed'],
    );
    const later = await rt.api.get(`/experiment/${slug}/events?since=${encodeURIComponent(changes[0]!.at)}`);
    assert.ok((later.json().events as Event[]).every((e) => e.at >= changes[0]!.at));
    assertError(await rt.api.get(`/experiment/${slug}/events?type=experiment.`), 400, /type must be/);
  });

  test('keys created and revoked are events, never with the secret; the actor is the key that acted', async () => {
    const made = await createKey({ name: 'short-lived', scopes: ['read'], experiments: ['x-only'] }, bot.key);
    const revoked = await rt.api.call({ method: 'DELETE', url: `/keys/${made.id}`, key: API_KEY });
    assert.equal(revoked.statusCode, 204);
    const res = await rt.api.get('/events?type=key.*&limit=100');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body.includes(made.key), false, 'the secret is never in the history');
    const events = (res.json().events as Event[]).filter((e) => e.data.id === made.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.actor]),
      [
        ['key.created', { kind: 'key', id: bot.id, name: 'release-bot' }],
        ['key.revoked', ROOT],
      ],
    );
    assert.deepEqual(events[0]!.data, {
      id: made.id,
      name: 'short-lived',
      scopes: ['read'],
      experiments: ['x-only'],
      prefix: made.key.slice(0, 12),
      rateLimitPerSecond: null,
    });
    assert.deepEqual(events[1]!.data, { id: made.id, name: 'short-lived' });
    assert.equal(events[0]!.experiment, null);
    // The bot's own creation (by root) is there too.
    const botCreated = (res.json().events as Event[]).find((e) => e.data.id === bot.id);
    assert.deepEqual(botCreated?.actor, ROOT);
  });

  test('a deleted experiment: its page of events is 404, its events stay in /events', async () => {
    const slug = uniqueSlug('gone');
    await rt.api.createExperiment({ slug, status: 'draft' });
    const del = await rt.api.call({ method: 'DELETE', url: `/experiment/${slug}`, key: bot.key });
    assert.equal(del.statusCode, 204);
    assertError(await rt.api.get(`/experiment/${slug}/events`), 404, /no experiment/);
    const all = (await walk('/events?type=experiment.*&limit=100')).events.filter(
      (e) => e.experiment === slug,
    );
    assert.deepEqual(
      all.map((e) => [e.type, e.actor.name]),
      [
        ['experiment.created', 'root'],
        ['experiment.deleted', 'release-bot'],
      ],
    );
    assert.equal((all[1]!.data.experiment as { slug: string }).slug, slug);
  });

  test('pages: limit and cursor walk every event once, oldest first; a bad cursor is 400', async () => {
    const slug = uniqueSlug('pages');
    await rt.api.createExperiment({ slug });
    for (let i = 0; i < 6; i++) {
      const res = await rt.api.patch(`/experiment/${slug}`, { description: `step ${i}` });
      assert.equal(res.statusCode, 200);
    }
    const whole = await historyOf(slug);
    assert.equal(whole.length, 7);
    const paged = await walk(`/experiment/${slug}/events?limit=2`);
    assert.equal(paged.pages, 4);
    assert.deepEqual(
      paged.events.map((e) => e.id),
      whole.map((e) => e.id),
    );
    assert.deepEqual(
      whole.slice(1).map((e) => (e.data.after as { description: string }).description),
      ['step 0', 'step 1', 'step 2', 'step 3', 'step 4', 'step 5'],
    );
    const first = (await rt.api.get(`/experiment/${slug}/events?limit=7`)).json();
    assert.equal(first.nextCursor, null, 'no cursor after the last page');
    assertError(await rt.api.get(`/experiment/${slug}/events?cursor=nonsense`), 400, /cursor/);
    assertError(await rt.api.get(`/experiment/${slug}/events?limit=0`), 400);
    assertError(await rt.api.get(`/experiment/${slug}/events?limit=101`), 400);
    // The audit log pages the same way.
    const audit = await walk('/events?limit=3');
    const ids = audit.events.map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(whole.every((e) => ids.includes(e.id)));
  });

  test('GET /events filters by exact type, by prefix, and by since; a bad type or since is 400', async () => {
    const slug = uniqueSlug('filter');
    await rt.api.createExperiment({ slug, status: 'draft' });
    const mid = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await rt.api.setStatus(slug, 'running');
    const exact = (await walk('/events?type=experiment.status_changed&limit=100')).events;
    assert.ok(exact.length > 0);
    assert.ok(exact.every((e) => e.type === 'experiment.status_changed'));
    const prefix = (await walk('/events?type=experiment.*&limit=100')).events;
    assert.ok(prefix.every((e) => e.type.startsWith('experiment.')));
    assert.ok(prefix.some((e) => e.type === 'experiment.created' && e.experiment === slug));
    assert.equal((await walk('/events?type=experiment&limit=100')).events.length, 0, 'exact, not a prefix');
    const since = (await walk(`/events?since=${encodeURIComponent(mid)}&limit=100`)).events;
    assert.ok(since.every((e) => e.at >= mid));
    assert.ok(since.some((e) => e.experiment === slug && e.type === 'experiment.status_changed'));
    assert.ok(!since.some((e) => e.experiment === slug && e.type === 'experiment.created'));
    const both = (
      await walk(`/events?type=experiment.status_changed&since=${encodeURIComponent(mid)}&limit=1`)
    ).events;
    assert.ok(both.some((e) => e.experiment === slug));
    assertError(await rt.api.get('/events?since=yesterday'), 400, /since/);
    assertError(await rt.api.get('/events?type=Experiment!'), 400, /type/);
    assertError(await rt.api.get('/events?type=experiment.*.x'), 400, /type/);
  });

  test('scopes: a read key reads an experiment history but gets 403 on /events; a limited key only its own', async () => {
    const mine = uniqueSlug('mine');
    const theirs = uniqueSlug('theirs');
    await rt.api.createExperiment({ slug: mine });
    await rt.api.createExperiment({ slug: theirs });
    const reader = await createKey({ name: 'reader', scopes: ['read'] });
    const limited = await createKey({ name: 'limited', scopes: ['read'], experiments: [mine] });
    const limitedAdmin = await createKey({ name: 'limited-admin', scopes: ['admin'], experiments: [mine] });
    assert.equal((await rt.api.get(`/experiment/${theirs}/events`, reader.key)).statusCode, 200);
    assertError(await rt.api.get('/events', reader.key), 403, /admin/);
    assert.equal((await rt.api.get(`/experiment/${mine}/events`, limited.key)).statusCode, 200);
    assertError(await rt.api.get(`/experiment/${theirs}/events`, limited.key), 403, /limited/);
    assertError(await rt.api.get('/events', limitedAdmin.key), 403, /every experiment/);
    assert.equal((await rt.api.get('/events', bot.key)).statusCode, 200);
    assert.equal((await rt.api.get('/events', null)).statusCode, 401);
  });

  test('a change that fails leaves no event: a slug conflict (409), a refused transition (409), an unknown slug (404)', async () => {
    const slug = uniqueSlug('atomic');
    await rt.api.createExperiment({ slug, status: 'draft' });
    const before = await historyOf(slug);
    const dup = await rt.api.post('/experiments', {
      slug,
      variants: [{ key: 'A', payload: {}, trafficPercent: 100 }],
    });
    assertError(dup, 409, /already exists/);
    assertError(await rt.api.patch(`/experiment/${slug}`, { status: 'completed' }), 409);
    assert.deepEqual(await historyOf(slug), before);
    assertError(await rt.api.get('/experiment/no-such-slug/events'), 404);
    const created = (await walk('/events?type=experiment.created&limit=100')).events;
    assert.equal(created.filter((e) => e.experiment === slug).length, 1);
    // What GET /events shows is what the database holds, committed.
    const counted = await rt.rows<{ n: number | string }>(
      sql`select count(*) as n from events where experiment = ${slug}`,
    );
    assert.equal(Number(counted[0]!.n), before.length);
  });

  test('listeners of committed events hear each committed change once, after its commit', async () => {
    const heard: Event[] = [];
    const stop = rt.bus.onCommitted((events) => heard.push(...(events as Event[])));
    const slug = uniqueSlug('bus');
    await rt.api.createExperiment({ slug, status: 'draft' });
    await rt.api.setStatus(slug, 'running');
    assertError(await rt.api.patch(`/experiment/${slug}`, { status: 'draft' }), 409);
    stop();
    await rt.api.setStatus(slug, 'paused');
    assert.deepEqual(
      heard.filter((e) => e.experiment === slug).map((e) => e.type),
      ['experiment.created', 'experiment.status_changed'],
    );
    const stored = await historyOf(slug);
    assert.deepEqual(
      heard.filter((e) => e.experiment === slug).map((e) => e.id),
      stored.slice(0, 2).map((e) => e.id),
    );
  });
});
