// The store contract: every backend must pass these. Runs on real SQLite files, in-memory SQLite, the
// in-memory store (memory-store.ts) and, when it is reachable, PostgreSQL.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { ConflictError, NotFoundError, UnavailableError } from '../src/core/errors.js';
import {
  type Actor,
  type ChangeEvent,
  type EventSource,
  experimentChanged,
  experimentCreated,
  experimentDeleted,
  keyCreated,
  keyRevoked,
  MONITOR_ACTOR,
  ROOT_ACTOR,
} from '../src/core/events.js';
import { createExperiment, type Experiment } from '../src/core/experiment.js';
import type { Exposure } from '../src/core/exposure.js';
import { newId } from '../src/core/ids.js';
import { MAX_METRICS_PER_EXPERIMENT } from '../src/core/metric-cap.js';
import { checkSteps } from '../src/core/rollout.js';
import { type MetricRollup, rollUpResults } from '../src/core/rollups.js';
import type { TargetSegments } from '../src/core/segments.js';
import type { SketchRow } from '../src/core/sketch-rollups.js';
import { hourOf } from '../src/core/time.js';
import type { HourlyUnitRollup } from '../src/core/unit-hours.js';
import type { UnitRollup } from '../src/core/units.js';
import type { FeedbackValue, NewFeedback, NewResult } from '../src/core/writes.js';
import { toExposureBatches } from '../src/ingest/exposure-queue.js';
import { sketchBin, sketchOf } from '../src/stats/sketch.js';
import { rolledOf as rolledResult } from '../src/store/batch-plan.js';
import { selectExperiment } from '../src/store/experiment-rows.js';
import { type DatabaseTarget, openDatabase, openStore } from '../src/store/index.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { loadMigrations, migrate } from '../src/store/migrate.js';
import type { ResultQuery } from '../src/store/result-types.js';
import { SqlStore } from '../src/store/sql-store.js';
import type { EventStore, Store, StoredKey } from '../src/store/store.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { seededRandom } from './helpers/random.js';

const dir = mkdtempSync(join(tmpdir(), 'agentsplit-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const databases: TestDatabase[] = [];
after(async () => {
  for (const d of databases) await d.drop();
});

const sqlBackends: Array<{ name: string; target: () => Promise<DatabaseTarget>; skip?: boolean }> = [
  { name: 'SQLite file', target: async () => ({ kind: 'sqlite', path: join(dir, `${Math.random()}.db`) }) },
  { name: 'SQLite in memory', target: async () => ({ kind: 'sqlite', path: ':memory:' }) },
  {
    name: 'PostgreSQL',
    skip: !(await postgresReachable()),
    target: async () => {
      const db = await createTestDatabase('contract');
      databases.push(db);
      return { kind: 'postgres', url: db.url };
    },
  },
];

/**
 * Every backend runs the contract below. The in-memory store skips only what is about SQL itself, further
 * down: rows of the legacy `exposures` table and of the earlier exposure form written by hand, migrations,
 * reopening a file, the SQLite writer thread's priority, and PostgreSQL's locking between two instances.
 */
const backends: Array<{ name: string; open: () => Promise<Store>; skip?: boolean }> = [
  ...sqlBackends.map((b) => ({ name: b.name, skip: b.skip, open: async () => openStore(await b.target()) })),
  { name: 'in-memory store', open: async () => new MemoryStore() },
];

const NOW = '2026-03-01T12:00:00.000Z';
function experiment(slug: string): Experiment {
  return createExperiment(
    {
      slug,
      variants: [
        { key: 'A', payload: { prompt: 'a', nested: { deep: [1, 2, { x: null }] } }, trafficPercent: 40 },
        { key: 'B', payload: { prompt: 'b' }, trafficPercent: 60 },
      ],
    },
    NOW,
  );
}

let counter = 0;
function result(experimentId: number, overrides: Partial<NewResult> = {}): NewResult {
  counter++;
  return {
    logId: `log-${counter}`,
    experimentId,
    version: 1,
    variantKey: counter % 2 ? 'A' : 'B',
    knownVariant: true,
    userId: `user-${counter}`,
    assignmentId: null,
    input: JSON.stringify({ q: 'héllo ✓', __proto__x: 1 }),
    output: null,
    metrics: JSON.stringify({ latency: counter }),
    context: null,
    timestamp: null,
    createdAt: new Date(Date.parse(NOW) + counter * 1000).toISOString(),
    ...overrides,
  };
}

function exposure(experimentId: number, variantKey = 'A'): Exposure {
  return {
    assignmentId: `as-${++counter}`,
    experimentId,
    version: 1,
    variantKey,
    userId: 'u',
    context: { page: 'checkout' },
    createdAt: NOW,
  };
}

function sticky(slug: string): Experiment {
  return { ...experiment(slug), assignment: 'sticky' };
}

/** Two times in different hours (results of the tests above are at NOW + n seconds: other hours). */
const HOUR_1 = '2026-03-02T09:15:00.000Z';
const HOUR_2 = '2026-03-02T10:45:30.000Z';

function assigned(experimentId: number, variantKey: string, createdAt: string): Exposure {
  return { ...exposure(experimentId, variantKey), createdAt };
}

const sum = (values: number[]) => values.reduce((a, x) => a + x, 0);

interface Moments {
  n: number;
  sum: number;
  sumSquares: number;
}

/** Rollup rows by hour (when they have one), version, variant, metric and kind. */
function statsOf(rows: Array<MetricRollup & { hour?: string }>): Record<string, Moments> {
  const out: Record<string, Moments> = {};
  for (const r of rows) {
    const key = `${r.hour === undefined ? '' : `${r.hour} `}${r.version}/${r.variantKey}/${r.metric}/${r.kind}`;
    assert.equal(out[key], undefined, `one row per key: ${key}`);
    out[key] = { n: r.n, sum: r.sum, sumSquares: r.sumSquares };
  }
  return out;
}

type UnitStats = Omit<UnitRollup, 'experimentId' | 'version' | 'variantKey' | 'metric' | 'kind'>;

function unitStats(rows: UnitRollup[]): Record<string, UnitStats> {
  const out: Record<string, UnitStats> = {};
  for (const r of rows) {
    const key = `${r.version}/${r.variantKey}/${r.metric}/${r.kind}`;
    assert.equal(out[key], undefined, `one row per key: ${key}`);
    const { units, sumX, sumX2, sumY, sumY2, sumXY } = r;
    out[key] = { units, sumX, sumX2, sumY, sumY2, sumXY };
  }
  return out;
}

/** What the delta method reads, from each user's own (x, y): the sum of its values and their count. */
function unitSums(users: Array<[x: number, y: number]>): UnitStats {
  return {
    units: users.length,
    sumX: sum(users.map(([x]) => x)),
    sumX2: sum(users.map(([x]) => x * x)),
    sumY: sum(users.map(([, y]) => y)),
    sumY2: sum(users.map(([, y]) => y * y)),
    sumXY: sum(users.map(([x, y]) => x * y)),
  };
}

/** The unit rollups of raw results, computed here from scratch: every user's (x, y) per metric, then sums. */
function expectedUnits(results: NewResult[]): Record<string, UnitStats> {
  const users = new Map<string, Map<string, [number, number]>>();
  for (const r of results) {
    if (r.unit !== true || r.userId === null || r.metrics === null) continue;
    for (const [metric, value] of Object.entries(JSON.parse(r.metrics) as Record<string, unknown>)) {
      let x: number;
      let kind: string;
      if (typeof value === 'number') [x, kind] = [value, 'mean'];
      else if (typeof value === 'boolean') [x, kind] = [value ? 1 : 0, 'proportion'];
      else continue;
      const key = `${r.version}/${r.variantKey}/${metric}/${kind}`;
      const byUser = users.get(key) ?? new Map<string, [number, number]>();
      const [sx, sy] = byUser.get(r.userId) ?? [0, 0];
      byUser.set(r.userId, [sx + x, sy + 1]);
      users.set(key, byUser);
    }
  }
  return Object.fromEntries([...users].map(([key, byUser]) => [key, unitSums([...byUser.values()])]));
}

/**
 * Sums that were added up in another order (the live rollups one write at a time, a rebuild or this test
 * all at once; Σx² moved by (a + dx)² − a² per write) differ in their last bits only: equal within 1e-9
 * relative, far above the few ulps the order costs and far below any difference a wrong sum makes.
 */
function assertClose(actual: number, expected: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)),
    `${what}: ${actual} ≠ ${expected}`,
  );
}

function assertSameStats(actual: Record<string, Moments>, expected: Record<string, Moments>, what: string) {
  assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), what);
  for (const [key, e] of Object.entries(expected)) {
    const a = actual[key]!;
    assert.equal(a.n, e.n, `${what} ${key} n`);
    assertClose(a.sum, e.sum, `${what} ${key} sum`);
    assertClose(a.sumSquares, e.sumSquares, `${what} ${key} sumSquares`);
  }
}

/** Counts (units, Σy, Σy²: sums of integers) exactly; sums of values within 1e-9 relative (assertClose). */
function assertSameUnits(actual: Record<string, UnitStats>, expected: Record<string, UnitStats>) {
  assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), 'unit rollup keys');
  for (const [key, e] of Object.entries(expected)) {
    const a = actual[key]!;
    assert.deepEqual([a.units, a.sumY, a.sumY2], [e.units, e.sumY, e.sumY2], `${key} units, Σy, Σy²`);
    assertClose(a.sumX, e.sumX, `${key} Σx`);
    assertClose(a.sumX2, e.sumX2, `${key} Σx²`);
    assertClose(a.sumXY, e.sumXY, `${key} Σxy`);
  }
}

/**
 * Without rows that hold nothing: a value that moved to another kind leaves its old row at n = 0 (rollups
 * are only ever added to), which a rebuild from raw rows does not write.
 */
function nonEmpty(stats: Record<string, Moments>): Record<string, Moments> {
  return Object.fromEntries(Object.entries(stats).filter(([, s]) => s.n !== 0));
}

function nonEmptyUnits(stats: Record<string, UnitStats>): Record<string, UnitStats> {
  return Object.fromEntries(Object.entries(stats).filter(([, s]) => s.units !== 0));
}

for (const backend of backends) {
  describe(`store contract: ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    const open = async () => {
      store = await backend.open();
      return store;
    };
    after(async () => store?.close());
    /** Feedback on a logged result, as the feedback service builds it from findResult. */
    const feedbackOn = async (
      experimentId: number,
      logId: string,
      values: FeedbackValue[],
      createdAt: string,
    ): Promise<NewFeedback> => {
      const target = await store.findResult(experimentId, logId);
      assert.ok(target, `result ${logId} exists`);
      const stored = (await store.listExperiments()).find((s) => s.id === experimentId)!;
      return {
        feedbackId: `fb-${++counter}`,
        experimentId,
        target: `l:${logId}`,
        version: target.version,
        variantKey: target.variantKey,
        userId: target.userId,
        unit: stored.experiment.assignment === 'sticky',
        values,
        comment: null,
        createdAt,
      };
    };

    test('experiments round-trip with every field', async () => {
      await open();
      const e = experiment('round-trip');
      const stored = await store.insertExperiment(e);
      assert.ok(stored.id > 0);
      const listed = (await store.listExperiments()).find((s) => s.experiment.slug === 'round-trip');
      assert.deepEqual(listed, stored);
    });

    test('a duplicate slug is a ConflictError', async () => {
      await assert.rejects(store.insertExperiment(experiment('round-trip')), ConflictError);
    });

    test('updateExperiment applies the change in a transaction', async () => {
      const stored = await store.updateExperiment('round-trip', (cur) => ({
        ...cur,
        name: 'renamed',
        version: 2,
      }));
      assert.equal(stored.experiment.name, 'renamed');
      const again = (await store.listExperiments()).find((s) => s.experiment.slug === 'round-trip');
      assert.equal(again?.experiment.version, 2);
    });

    const T0 = '2026-11-28T00:00:00.000Z';
    test('rollouts: one live at a time, moves written over their version only, attached to the experiment', async () => {
      const e = await store.insertExperiment(experiment('rolled'));
      const base = {
        experimentVersion: 1,
        variant: 'B',
        control: 'A',
        state: 'running' as const,
        step: 0,
        steps: checkSteps(undefined),
        guardrails: [],
        onRegression: 'rollback' as const,
        seed: 'rolled:rollout:B',
        approved: -1,
        stepStartedAt: T0,
        reason: null,
        createdAt: T0,
        updatedAt: T0,
      };
      const event = (type: string): ChangeEvent => ({
        id: newId(),
        type,
        at: T0,
        actor: MONITOR_ACTOR,
        experiment: 'rolled',
        data: {},
      });
      const started = await store.insertRollout('rolled', (cur) => {
        assert.equal(cur.rollout, undefined);
        return {
          rollout: { id: 'r1', experimentId: cur.id, version: 1, rollout: base },
          events: [event('rollout.started')],
        };
      });
      assert.equal(started.rollout?.id, 'r1');
      await assert.rejects(
        store.insertRollout('rolled', (cur) => ({
          rollout: { id: 'r2', experimentId: cur.id, version: 1, rollout: base },
          events: [event('rollout.started')],
        })),
        ConflictError,
      );
      const later = '2026-11-28T01:00:00.000Z';
      const advanced = { ...base, step: 1, stepStartedAt: later, updatedAt: later };
      const moved = await store.moveRollout('rolled', 'r1', 1, advanced, [event('rollout.step_advanced')]);
      assert.equal(moved?.rollout?.version, 2);
      // A second mover planning from version 1 lost: nothing written, its event neither.
      const lost = await store.moveRollout('rolled', 'r1', 1, { ...base, step: 2 }, [
        event('rollout.step_advanced'),
      ]);
      assert.equal(lost, undefined);
      const found = await store.findExperiment('rolled');
      assert.deepEqual(found?.rollout, { id: 'r1', experimentId: e.id, version: 2, rollout: advanced });
      const listed = (await store.listExperiments()).find((s) => s.experiment.slug === 'rolled');
      assert.deepEqual(listed?.rollout, found?.rollout);
      const updated = await store.updateExperiment('rolled', (cur) => ({ ...cur, name: 'still rolled' }));
      assert.deepEqual(updated.rollout, found?.rollout);
      const types = (await (store as Store & EventStore).listEvents({ experiment: 'rolled', limit: 10 })).map(
        (x) => x.type,
      );
      assert.deepEqual(types, ['rollout.started', 'rollout.step_advanced']);
      // An ended rollout makes room for the next.
      await store.moveRollout('rolled', 'r1', 2, { ...advanced, state: 'rolled_back' }, [
        event('rollout.rolled_back'),
      ]);
      const second = await store.insertRollout('rolled', (cur) => ({
        rollout: { id: 'r3', experimentId: cur.id, version: 1, rollout: base },
        events: [],
      }));
      assert.equal(second.rollout?.id, 'r3');
      await store.deleteExperiment('rolled', () => {});
      assert.equal(await store.findExperiment('rolled'), undefined);
    });

    test('a change that throws writes nothing', async () => {
      await assert.rejects(
        store.updateExperiment('round-trip', () => {
          throw new ConflictError('no');
        }),
        ConflictError,
      );
      const again = (await store.listExperiments()).find((s) => s.experiment.slug === 'round-trip');
      assert.equal(again?.experiment.name, 'renamed');
    });

    test('updating or deleting an unknown slug is a NotFoundError', async () => {
      await assert.rejects(
        store.updateExperiment('missing', (c) => c),
        NotFoundError,
      );
      await assert.rejects(
        store.deleteExperiment('missing', () => {}),
        NotFoundError,
      );
    });

    test('appendBatch commits results and exposures together, readable at once', async () => {
      const { id } = await store.insertExperiment(experiment('batch'));
      const rows = Array.from({ length: 2500 }, () => result(id));
      await store.appendBatch({
        results: rows,
        exposures: toExposureBatches(Array.from({ length: 3000 }, () => exposure(id))),
      });
      assert.equal(await store.countExposures(id), 3000);
      const page = await store.listResults({ experimentId: id, limit: 1000 });
      assert.equal(page.results.length, 1000);
      assert.equal(page.hasMore, true);
      assert.deepEqual(page.results[0]!.input, { q: 'héllo ✓', __proto__x: 1 });
      assert.equal(page.results[0]!.logId, rows[0]!.logId);
    });

    test('client exposures are stored once per assignment id, however often and concurrently sent', async () => {
      const { id } = await store.insertExperiment(experiment('client-once'));
      const other = await store.insertExperiment(experiment('client-once-other'));
      const sent = (i: number, check = 'aaaaaaaa', experimentId = id) => ({
        ...exposure(experimentId),
        assignmentId: `01972ff0-f582-7a3c-9e41-${String(i).padStart(12, '0')}.1.0.dQ==.${check}`,
      });
      const exposed = async (experimentId = id) =>
        (await store.readRollups(experimentId)).exposures.reduce((n, e) => n + e.n, 0);
      // The same id twice in a batch, and its other check (the CRC-32 form): one assignment.
      await store.appendBatch({
        results: [],
        exposures: [],
        clientExposures: [sent(1), sent(2), sent(1, 'bbbbbbbb')],
      });
      assert.equal(await store.countExposures(id), 2);
      await store.appendBatch({ results: [], exposures: [], clientExposures: [sent(2), sent(3)] });
      assert.equal(await store.countExposures(id), 3);
      await Promise.all(
        Array.from({ length: 5 }, () =>
          store.appendBatch({ results: [], exposures: [], clientExposures: [sent(5), sent(4)] }),
        ),
      );
      assert.equal(await store.countExposures(id), 5);
      assert.equal(await exposed(), 5, 'the exposure rollups count each once too');
      assert.deepEqual(
        (await store.listExposures(id)).map((e) => e.assignmentId.slice(33, 36)),
        ['001', '002', '003', '005', '004'],
      );
      // Another experiment's id space is its own.
      await store.appendBatch({
        results: [],
        exposures: [],
        clientExposures: [sent(1, 'cccccccc', other.id)],
      });
      assert.equal(await store.countExposures(other.id), 1);
    });

    test('listExposures gives every exposure back in assignment order, across batches and versions', async () => {
      const { id } = await store.insertExperiment(experiment('listed'));
      const first = Array.from({ length: 5 }, (_, i) => exposure(id, i % 2 ? 'B' : 'A'));
      const second = [{ ...exposure(id, 'B'), version: 2 }, exposure(id, 'A')];
      await store.appendBatch({ results: [], exposures: toExposureBatches(first) });
      await store.appendBatch({ results: [], exposures: toExposureBatches(second) });
      // One batch row per experiment version, in the order each version first appears in the write.
      assert.deepEqual(await store.listExposures(id), [...first, ...second]);
      assert.equal(await store.countExposures(id), 7);
      assert.deepEqual(await store.listExposures(999_999), []);
    });

    test('search keeps results whose input, output or a comment holds the text, ignoring case, with the other filters and pages', async () => {
      const { id } = await store.insertExperiment(experiment('search'));
      const other = await store.insertExperiment(experiment('search-other'));
      const hit = (text: string, at: 'input' | 'output', variantKey = 'A') =>
        result(id, { variantKey, [at]: JSON.stringify({ text }) });
      const rows = [
        hit('The Quick brown fox', 'input'),
        hit('a quick reply', 'output', 'B'),
        hit('nothing here', 'input'),
        hit('100%_ liter*al "NEAR" \\ text', 'output'),
        hit('QUICKLY again', 'input'),
      ];
      await store.appendBatch({ results: rows, exposures: [] });
      await store.appendBatch({
        results: [result(other.id, { input: JSON.stringify({ t: 'quick' }) })],
        exposures: [],
      });
      const found = async (search: string, more: Partial<ResultQuery> = {}) =>
        (await store.listResults({ experimentId: id, search, limit: 100, ...more })).results.map(
          (r) => r.logId,
        );
      assert.deepEqual(await found('quick'), [rows[0]!.logId, rows[1]!.logId, rows[4]!.logId]);
      assert.deepEqual(await found('QUICK', { variantKey: 'A', order: 'desc' }), [
        rows[4]!.logId,
        rows[0]!.logId,
      ]);
      assert.deepEqual(await found('%_ liter*al \\"NEAR'), [rows[3]!.logId]);
      assert.deepEqual(await found('%%%'), []);
      assert.deepEqual(await found('absent text'), []);
      // Results committed after a search are found by the next one.
      const later = hit('quick, later', 'output');
      await store.appendBatch({ results: [later], exposures: [] });
      const paged: string[] = [];
      let afterSeq: number | undefined;
      for (;;) {
        const page = await store.listResults({ experimentId: id, search: 'quick', afterSeq, limit: 2 });
        paged.push(...page.results.map((r) => r.logId));
        if (!page.hasMore) break;
        afterSeq = page.lastSeq!;
      }
      assert.deepEqual(paged, [rows[0]!.logId, rows[1]!.logId, rows[4]!.logId, later.logId]);
      // A comment on the result is searched, and carried (newest first).
      const commented = {
        ...(await feedbackOn(id, rows[2]!.logId, [{ metric: 'r', kind: 'mean', value: 1 }], HOUR_2)),
        comment: 'Too Verbose',
      };
      await store.appendBatch({ results: [], exposures: [], feedback: [commented] });
      const page = await store.listResults({ experimentId: id, search: 'too verb', limit: 10 });
      assert.deepEqual(
        page.results.map((r) => r.logId),
        [rows[2]!.logId],
      );
      assert.deepEqual(
        page.results[0]!.comments.map((c) => c.text),
        ['Too Verbose'],
      );
      const plain = await store.listResults({ experimentId: id, limit: 1 });
      assert.deepEqual(plain.results[0]!.comments, []);
    });

    test('a batch with a result for a missing experiment fails whole', async () => {
      const { id } = await store.insertExperiment(experiment('atomic'));
      await assert.rejects(store.appendBatch({ results: [result(id), result(999_999)], exposures: [] }));
      assert.equal((await store.listResults({ experimentId: id, limit: 10 })).results.length, 0);
    });

    test('pages follow commit order with no gaps or duplicates, and filters apply', async () => {
      const { id } = await store.insertExperiment(experiment('pages'));
      await store.appendBatch({ results: Array.from({ length: 25 }, () => result(id)), exposures: [] });
      const seen: string[] = [];
      let after: number | undefined;
      for (;;) {
        const page = await store.listResults({ experimentId: id, afterSeq: after, limit: 7 });
        seen.push(...page.results.map((r) => r.logId));
        if (!page.hasMore) break;
        after = page.lastSeq!;
        // New results arriving between pages land after everything already paged.
        if (seen.length === 7) await store.appendBatch({ results: [result(id)], exposures: [] });
      }
      assert.equal(seen.length, 26);
      assert.equal(new Set(seen).size, 26);
      const onlyA = await store.listResults({ experimentId: id, variantKey: 'A', limit: 100 });
      assert.ok(onlyA.results.every((r) => r.variantKey === 'A'));
      const all = await store.listResults({ experimentId: id, limit: 100 });
      const mid = all.results[10]!.createdAt;
      const since = await store.listResults({ experimentId: id, since: mid, limit: 100 });
      assert.equal(since.results[0]!.createdAt, mid);
      const until = await store.listResults({ experimentId: id, until: mid, limit: 100 });
      assert.equal(until.results.length, 10);
      const last = await store.lastResultSeq(id);
      const bounded = await store.listResults({ experimentId: id, uptoSeq: last, limit: 100 });
      assert.equal(bounded.results.length, 26);
    });

    test('deleteExperiment consults the guard with whether results exist', async () => {
      await store.insertExperiment(experiment('empty-draft'));
      let sawResults: boolean | undefined;
      await store.deleteExperiment('empty-draft', (_e, has) => {
        sawResults = has;
      });
      assert.equal(sawResults, false);
      assert.equal(
        (await store.listExperiments()).some((s) => s.experiment.slug === 'empty-draft'),
        false,
      );
      await assert.rejects(
        store.deleteExperiment('pages', (_e, has) => {
          if (has) throw new ConflictError('has results');
        }),
        ConflictError,
      );
    });

    test('rollups follow every committed batch, and a rebuild from raw rows equals them (min and max too)', async () => {
      const { id } = await store.insertExperiment(experiment('rollups'));
      const random = seededRandom(7);
      // The least and greatest value of each version, variant and metric, as logged.
      const extremes = new Map<string, [number, number]>();
      const see = (key: string, x: number) => {
        const [lo, hi] = extremes.get(key) ?? [x, x];
        extremes.set(key, [Math.min(lo, x), Math.max(hi, x)]);
      };
      const values = () => ({
        latency_ms: Math.round(100 + 900 * random()),
        cost: random() / 100,
        ok: random() < 0.7,
        label: 'not a metric',
        ...(random() < 0.3 ? { rating: 1 + Math.floor(5 * random()) } : {}),
      });
      let expectedLatency = 0;
      let expectedA = 0;
      const expectedResults = new Map<string, number>();
      for (let batch = 0; batch < 20; batch++) {
        const results = Array.from({ length: 1 + Math.floor(random() * 60) }, () => {
          const metrics = values();
          const variant = random() < 0.5 ? 'A' : 'B';
          if (variant === 'A') {
            expectedLatency += metrics.latency_ms;
            expectedA++;
          }
          const countKey = `${batch < 10 ? 1 : 2}/${variant}`;
          expectedResults.set(countKey, (expectedResults.get(countKey) ?? 0) + 1);
          for (const [metric, x] of Object.entries(metrics)) {
            if (typeof x !== 'string')
              see(`${countKey}/${metric}/${typeof x === 'number' ? 'mean' : 'proportion'}`, Number(x));
          }
          return result(id, {
            variantKey: variant,
            version: batch < 10 ? 1 : 2,
            metrics: JSON.stringify(metrics),
          });
        });
        const exposures = Array.from({ length: Math.floor(random() * 30) }, () => exposure(id));
        await store.appendBatch({ results, exposures: toExposureBatches(exposures) });
      }
      const live = await store.readRollups(id);
      const latencyA = live.metrics.filter((m) => m.metric === 'latency_ms' && m.variantKey === 'A');
      assert.equal(
        latencyA.reduce((a, m) => a + m.n, 0),
        expectedA,
      );
      assert.equal(
        latencyA.reduce((a, m) => a + m.sum, 0),
        expectedLatency,
      );
      assert.ok(live.metrics.every((m) => m.metric !== 'label'));
      const extremesOf = (rows: MetricRollup[]) =>
        new Map(
          rows.map((m) => [`${m.version}/${m.variantKey}/${m.metric}/${m.kind}`, [m.minValue, m.maxValue]]),
        );
      assert.deepEqual(extremesOf(live.metrics), extremes);
      assert.equal(
        live.exposures.reduce((a, e) => a + e.n, 0),
        await store.countExposures(id),
      );
      // Results per version and variant, counted as they were committed.
      const resultCounts = (rows: Array<{ version: number; variantKey: string; n: number }>) =>
        new Map(rows.map((r) => [`${r.version}/${r.variantKey}`, r.n]));
      assert.deepEqual(resultCounts(live.results), expectedResults);

      const counts = await store.rebuildRollups(id);
      assert.equal(counts.exposures, await store.countExposures(id));
      const rebuilt = await store.readRollups(id);
      assert.deepEqual(resultCounts(rebuilt.results), expectedResults);
      const key = (m: { version: number; variantKey: string; metric?: string; kind?: string }) =>
        `${m.version}/${m.variantKey}/${m.metric ?? ''}/${m.kind ?? ''}`;
      const byKey = new Map(rebuilt.metrics.map((m) => [key(m), m]));
      assert.equal(rebuilt.metrics.length, live.metrics.length);
      for (const m of live.metrics) {
        const r = byKey.get(key(m));
        assert.ok(r, `rebuild lacks ${key(m)}`);
        assert.equal(r.n, m.n);
        // Summation order differs between batches and pages: equal to the last few bits.
        assert.ok(Math.abs(r.sum - m.sum) <= 1e-9 * Math.max(1, Math.abs(m.sum)), key(m));
        assert.ok(
          Math.abs(r.sumSquares - m.sumSquares) <= 1e-9 * Math.max(1, Math.abs(m.sumSquares)),
          key(m),
        );
      }
      assert.deepEqual(extremesOf(rebuilt.metrics), extremes);
      assert.deepEqual(
        rebuilt.exposures.map((e) => [key(e), e.n]).sort(),
        live.exposures.map((e) => [key(e), e.n]).sort(),
      );
    });

    test(`metric names beyond MAX_METRICS_PER_EXPERIMENT are stored, not rolled up, recorded on the result; a rebuild reproduces the live rollups`, async () => {
      const { id } = await store.insertExperiment(experiment('metric-cap'));
      // Concurrent batches, each with names of its own: whatever order they commit in, the experiment
      // rolls up exactly MAX_METRICS_PER_EXPERIMENT names, and each result says which of its were left out.
      const batches = Array.from({ length: 8 }, (_, b) =>
        Array.from({ length: 5 }, (_, r) =>
          result(id, {
            metrics: JSON.stringify({
              shared: r,
              ...Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`b${b}r${r % 2}k${k}`, k])),
              text: 'not a metric value',
            }),
          }),
        ),
      );
      const decided = await Promise.all(
        batches.map((results) => store.appendBatch({ results, exposures: [] })),
      );
      const live = await store.readRollups(id);
      const names = new Set(live.metrics.map((m) => m.metric));
      assert.equal(names.size, MAX_METRICS_PER_EXPERIMENT);
      assert.ok(names.has('shared') && !names.has('text'));
      const all = batches.flat();
      const allOverCap = decided.flatMap((d) => d.metricsOverCap);
      for (const [i, r] of all.entries()) {
        const sent = Object.keys(JSON.parse(r.metrics!)).filter((n) => n !== 'text');
        const over = allOverCap[i] ?? [];
        assert.deepEqual(
          sent.filter((n) => !names.has(n)),
          over,
          'each result records exactly its names that are not rolled up',
        );
      }
      assert.ok(allOverCap.some((over) => (over?.length ?? 0) > 0));
      // Stored whole.
      const page = await store.listResults({ experimentId: id, limit: 100 });
      assert.equal(page.results.length, all.length);
      assert.equal(Object.keys(page.results[0]!.metrics!).length, 42);

      const key = (m: MetricRollup) => `${m.version}/${m.variantKey}/${m.metric}/${m.kind} ${m.n} ${m.sum}`;
      await store.rebuildRollups(id);
      assert.deepEqual((await store.readRollups(id)).metrics.map(key).sort(), live.metrics.map(key).sort());
      // The cap still holds after the rebuild; names already rolled up still are.
      const late = result(id, { metrics: JSON.stringify({ shared: 1, brand_new: 2 }) });
      const lateDecided = await store.appendBatch({ results: [late], exposures: [] });
      assert.deepEqual(lateDecided.metricsOverCap[0], ['brand_new']);
      assert.equal(
        new Set((await store.readRollups(id)).metrics.map((m) => m.metric)).size,
        MAX_METRICS_PER_EXPERIMENT,
      );
    });

    test('listVersions returns every variant definition, each from when it was recorded', async () => {
      const stored = await store.insertExperiment(experiment('versions'));
      const later = '2026-03-05T08:30:00.000Z';
      await store.updateExperiment('versions', (cur) => ({
        ...cur,
        version: 2,
        updatedAt: later,
        variants: cur.variants.map((v) => ({ ...v, trafficPercent: 50 })),
      }));
      // A change that keeps the variants records no version.
      await store.updateExperiment('versions', (cur) => ({ ...cur, name: 'renamed', updatedAt: NOW }));
      const versions = await store.listVersions(stored.id);
      assert.deepEqual(
        versions.map((v) => [v.version, v.variants.map((x) => x.trafficPercent), v.createdAt]),
        [
          [1, [40, 60], NOW],
          [2, [50, 50], later],
        ],
      );
    });

    test('feedback: a new value adds one observation to the metric rollups and to the hour it came in', async () => {
      const { id } = await store.insertExperiment(experiment('feedback-new'));
      const [first, second] = [result(id, { createdAt: HOUR_1 }), result(id, { createdAt: HOUR_1 })];
      await store.appendBatch({ results: [first, second], exposures: [] });
      await store.appendBatch({
        results: [],
        exposures: [],
        feedback: [
          await feedbackOn(id, first.logId, [{ metric: 'rating', kind: 'mean', value: 4 }], HOUR_2),
          await feedbackOn(id, second.logId, [{ metric: 'rating', kind: 'mean', value: 5 }], HOUR_2),
        ],
      });
      const expected = (v: number[]) => ({ n: v.length, sum: sum(v), sumSquares: sum(v.map((x) => x * x)) });
      const rating = (rows: MetricRollup[]) => rows.filter((m) => m.metric === 'rating');
      assert.deepEqual(statsOf(rating((await store.readRollups(id)).metrics)), {
        [`1/${first.variantKey}/rating/mean`]: expected([4]),
        [`1/${second.variantKey}/rating/mean`]: expected([5]),
      });
      // Counted in the hour the feedback came, not the result's.
      const h2 = hourOf(HOUR_2);
      assert.deepEqual(statsOf(rating((await store.readHourly(id)).metrics)), {
        [`${h2} 1/${first.variantKey}/rating/mean`]: expected([4]),
        [`${h2} 1/${second.variantKey}/rating/mean`]: expected([5]),
      });
      // The results' own metrics, in their hour.
      assert.deepEqual(
        Object.keys(
          statsOf((await store.readHourly(id)).metrics.filter((m) => m.metric === 'latency')),
        ).sort(),
        [`${hourOf(HOUR_1)} 1/A/latency/mean`, `${hourOf(HOUR_1)} 1/B/latency/mean`],
      );
    });

    test('min and max per rollup row: a corrected extreme stays in the live range (every value ever counted) until a rebuild narrows it', async () => {
      const { id } = await store.insertExperiment(experiment('extremes-feedback'));
      const targets = [1, 2, 3].map((latency) =>
        result(id, { variantKey: 'A', createdAt: HOUR_1, metrics: JSON.stringify({ latency }) }),
      );
      await store.appendBatch({ results: targets, exposures: [] });
      const rate = async (logId: string, value: number) =>
        store.appendBatch({
          results: [],
          exposures: [],
          feedback: [await feedbackOn(id, logId, [{ metric: 'rating', kind: 'mean', value }], HOUR_2)],
        });
      for (const [i, value] of [1, 3, 5].entries()) await rate(targets[i]!.logId, value);
      const range = async (metric: string) => {
        const [all] = (await store.readRollups(id)).metrics.filter((m) => m.metric === metric);
        const [hour] = (await store.readHourly(id)).metrics.filter((m) => m.metric === metric);
        return [all!.minValue, all!.maxValue, hour!.minValue, hour!.maxValue];
      };
      assert.deepEqual(await range('latency'), [1, 3, 1, 3]);
      assert.deepEqual(await range('rating'), [1, 5, 1, 5]);
      // 5 corrected to 4: the 5 cannot be taken back out of a max, so it stays until a rebuild.
      await rate(targets[2]!.logId, 4);
      assert.deepEqual(await range('rating'), [1, 5, 1, 5]);
      // A new value past them moves them, a value inside them does not.
      await rate(targets[1]!.logId, 0.5);
      assert.deepEqual(await range('rating'), [0.5, 5, 0.5, 5]);
      await store.rebuildRollups(id);
      assert.deepEqual(await range('rating'), [0.5, 4, 0.5, 4]);
      assert.deepEqual(await range('latency'), [1, 3, 1, 3]);
    });

    test('feedback: the same target and metric again replaces the value (n unchanged, sums moved by the difference), in the hour it was first counted', async () => {
      const { id } = await store.insertExperiment(experiment('feedback-replace'));
      const targets = [result(id, { variantKey: 'A' }), result(id, { variantKey: 'A' })];
      await store.appendBatch({ results: targets, exposures: [] });
      const rate = async (logId: string, value: number, at: string) =>
        store.appendBatch({
          results: [],
          exposures: [],
          feedback: [await feedbackOn(id, logId, [{ metric: 'rating', kind: 'mean', value }], at)],
        });
      await rate(targets[0]!.logId, 4, HOUR_1);
      await rate(targets[1]!.logId, 5, HOUR_1);
      const rating = async () =>
        statsOf((await store.readRollups(id)).metrics.filter((m) => m.metric === 'rating'));
      assert.deepEqual(await rating(), { '1/A/rating/mean': { n: 2, sum: 9, sumSquares: 41 } });
      await rate(targets[0]!.logId, 2, HOUR_2);
      assert.deepEqual(await rating(), { '1/A/rating/mean': { n: 2, sum: 7, sumSquares: 29 } });
      // Sent again unchanged (a retry): nothing moves.
      await rate(targets[0]!.logId, 2, HOUR_2);
      assert.deepEqual(await rating(), { '1/A/rating/mean': { n: 2, sum: 7, sumSquares: 29 } });
      const hourly = (await store.readHourly(id)).metrics.filter((m) => m.metric === 'rating');
      assert.deepEqual(
        hourly.map((b) => [b.hour, b.n, b.sum, b.sumSquares]),
        [[hourOf(HOUR_1), 2, 7, 29]],
      );
    });

    test('feedback: a change of kind (number → true/false) moves the value from one kind to the other', async () => {
      const { id } = await store.insertExperiment(experiment('feedback-kind'));
      const target = result(id, { variantKey: 'B' });
      const other = result(id, { variantKey: 'B' });
      await store.appendBatch({ results: [target, other], exposures: [] });
      await store.appendBatch({
        results: [],
        exposures: [],
        feedback: [
          await feedbackOn(id, target.logId, [{ metric: 'helpful', kind: 'mean', value: 3 }], HOUR_1),
          await feedbackOn(id, other.logId, [{ metric: 'helpful', kind: 'mean', value: 2 }], HOUR_1),
        ],
      });
      await store.appendBatch({
        results: [],
        exposures: [],
        feedback: [
          await feedbackOn(id, target.logId, [{ metric: 'helpful', kind: 'proportion', value: 1 }], HOUR_2),
        ],
      });
      const helpful = (rows: MetricRollup[]) => nonEmpty(statsOf(rows.filter((m) => m.metric === 'helpful')));
      assert.deepEqual(helpful((await store.readRollups(id)).metrics), {
        '1/B/helpful/mean': { n: 1, sum: 2, sumSquares: 4 },
        '1/B/helpful/proportion': { n: 1, sum: 1, sumSquares: 1 },
      });
      // Still in the hour it was first counted in.
      const h1 = hourOf(HOUR_1);
      assert.deepEqual(helpful((await store.readHourly(id)).metrics), {
        [`${h1} 1/B/helpful/mean`]: { n: 1, sum: 2, sumSquares: 4 },
        [`${h1} 1/B/helpful/proportion`]: { n: 1, sum: 1, sumSquares: 1 },
      });
    });

    test('feedback: the same target and metric twice in one batch counts once, with the later value', async () => {
      const { id } = await store.insertExperiment(experiment('feedback-twice'));
      const target = result(id, { variantKey: 'A' });
      await store.appendBatch({ results: [target], exposures: [] });
      await store.appendBatch({
        results: [],
        exposures: [],
        feedback: [
          await feedbackOn(id, target.logId, [{ metric: 'rating', kind: 'mean', value: 1 }], HOUR_1),
          await feedbackOn(
            id,
            target.logId,
            [
              { metric: 'rating', kind: 'mean', value: 3 },
              { metric: 'solved', kind: 'proportion', value: 0 },
            ],
            HOUR_1,
          ),
        ],
      });
      const rows = (await store.readRollups(id)).metrics.filter((m) => m.metric !== 'latency');
      assert.deepEqual(statsOf(rows), {
        '1/A/rating/mean': { n: 1, sum: 3, sumSquares: 9 },
        '1/A/solved/proportion': { n: 1, sum: 0, sumSquares: 0 },
      });
    });

    test('feedback on a sticky experiment joins the user’s unit, and a replaced value moves it', async () => {
      const { id } = await store.insertExperiment(sticky('feedback-units'));
      const ann = [1, 2].map((i) =>
        result(id, { variantKey: 'A', userId: 'ann', unit: true, metrics: JSON.stringify({ score: i }) }),
      );
      const bob = result(id, {
        variantKey: 'A',
        userId: 'bob',
        unit: true,
        metrics: JSON.stringify({ score: 1.5 }),
      });
      await store.appendBatch({ results: [...ann, bob], exposures: [] });
      await store.appendBatch({
        results: [],
        exposures: [],
        feedback: [
          await feedbackOn(id, ann[0]!.logId, [{ metric: 'score', kind: 'mean', value: 10 }], HOUR_1),
          await feedbackOn(id, bob.logId, [{ metric: 'score', kind: 'mean', value: 4 }], HOUR_1),
        ],
      });
      await store.appendBatch({
        results: [],
        exposures: [],
        feedback: [await feedbackOn(id, bob.logId, [{ metric: 'score', kind: 'mean', value: 6.25 }], HOUR_2)],
      });
      // ann: x = 1 + 2 + 10 over y = 3 values; bob: x = 1.5 + 6.25 over y = 2 (the 4 was replaced).
      assert.deepEqual(unitStats((await store.readRollups(id)).units), {
        '1/A/score/mean': unitSums([
          [13, 3],
          [7.75, 2],
        ]),
      });
    });

    test('per-user units: sums over users equal sums computed from the raw per-user data, across batches, with a user twice in one batch', async () => {
      const { id } = await store.insertExperiment(sticky('units'));
      const random = seededRandom(15);
      const users = Array.from({ length: 12 }, (_, i) => ({
        id: `unit-${i}`,
        variant: i % 3 === 0 ? 'B' : 'A',
      }));
      const logged: NewResult[] = [];
      const draw = (user: (typeof users)[number] | null, version: number) =>
        result(id, {
          userId: user?.id ?? null,
          variantKey: user?.variant ?? 'A',
          version,
          unit: true,
          metrics: JSON.stringify({
            cost: random() * 3,
            ok: random() < 0.6,
            label: 'not a metric',
            ...(random() < 0.4 ? { steps: 1 + Math.floor(random() * 9) } : {}),
          }),
        });
      for (let b = 0; b < 6; b++) {
        const version = b < 4 ? 1 : 2;
        const batch = Array.from({ length: 8 }, () =>
          draw(users[Math.floor(random() * users.length)]!, version),
        );
        // The same user twice in one batch, and a result without a user (analysed per call only).
        batch.push(draw(users[b]!, version), draw(users[b]!, version), draw(null, version));
        logged.push(...batch);
        await store.appendBatch({ results: batch, exposures: [] });
      }
      const live = await store.readRollups(id);
      const expected = expectedUnits(logged);
      assert.ok(Object.keys(expected).length >= 8, 'both versions, both variants, three metrics');
      assertSameUnits(unitStats(live.units), expected);
      // Results without a user still count per call.
      const costN = live.metrics.filter((m) => m.metric === 'cost').reduce((n, m) => n + m.n, 0);
      assert.equal(costN, logged.length);
      assert.ok(live.units.every((u) => u.metric !== 'label'));
    });

    test('per-user units: results with unit=false, or without a userId, make none', async () => {
      const { id } = await store.insertExperiment(experiment('no-units'));
      await store.appendBatch({
        results: [
          result(id, { unit: false, userId: 'u1' }),
          result(id, { userId: 'u2' }),
          result(id, { unit: true, userId: null }),
        ],
        exposures: [],
      });
      const rollups = await store.readRollups(id);
      assert.deepEqual(rollups.units, []);
      assert.equal(
        rollups.metrics.reduce((n, m) => n + m.n, 0),
        3,
      );
    });

    test('rebuildRollups reproduces the live metric, hourly and per-user rollups after results and feedback replacements', async () => {
      const { id } = await store.insertExperiment(sticky('rebuild-all'));
      const random = seededRandom(23);
      const users = Array.from({ length: 8 }, (_, i) => ({ id: `rb-${i}`, variant: i % 2 ? 'B' : 'A' }));
      const logged: NewResult[] = [];
      const rated = new Map<string, string>();
      const replaced = { value: 0, kind: 0 };
      /** Each rated result's latest rating: the rollup row it counts in, and its value. */
      const ratings = new Map<string, { key: string; value: number }>();
      for (let b = 0; b < 5; b++) {
        const at = b < 3 ? HOUR_1 : HOUR_2;
        const results = Array.from({ length: 10 }, (_, k) => {
          const user = k === 9 ? null : users[Math.floor(random() * users.length)]!;
          return result(id, {
            userId: user?.id ?? null,
            variantKey: user?.variant ?? 'B',
            unit: true,
            createdAt: at,
            metrics: JSON.stringify({ cost: random() * 2, ok: random() < 0.5 }),
          });
        });
        // Ratings of results committed before, on a few of them, so that many replace an earlier rating
        // (another value, or a change of kind: counted below).
        const feedback = [];
        for (let f = 0; f < (b === 0 ? 0 : 8); f++) {
          const target = logged[Math.floor(random() * Math.min(12, logged.length))]!;
          const kind = random() < 0.3 ? 'proportion' : 'mean';
          const value = kind === 'proportion' ? (random() < 0.5 ? 1 : 0) : Math.round(random() * 50) / 10;
          const before = rated.get(target.logId);
          if (before !== undefined) replaced[before === kind ? 'value' : 'kind']++;
          rated.set(target.logId, kind);
          ratings.set(target.logId, { key: `1/${target.variantKey}/rating/${kind}`, value });
          feedback.push(await feedbackOn(id, target.logId, [{ metric: 'rating', kind, value }], at));
        }
        await store.appendBatch({ results, exposures: [], feedback });
        logged.push(...results);
      }
      assert.ok(replaced.value > 0 && replaced.kind > 0, JSON.stringify(replaced));
      // A value that changes kind and leaves its first kind with no value at all.
      const thumbed = logged[1]!;
      for (const [kind, value] of [
        ['mean', 1],
        ['proportion', 1],
      ] as const) {
        const feedback = [await feedbackOn(id, thumbed.logId, [{ metric: 'thumbs', kind, value }], HOUR_2)];
        await store.appendBatch({ results: [], exposures: [], feedback });
      }
      const live = await store.readRollups(id);
      const liveBuckets = await store.readHourly(id);
      assert.ok(live.units.length > 0 && liveBuckets.metrics.length > 0);
      const emptied = (m: { metric: string; kind: string }) => m.metric === 'thumbs' && m.kind === 'mean';
      assert.ok(live.metrics.filter(emptied).every((m) => m.n === 0 && m.sum === 0));
      assert.ok(live.units.filter(emptied).every((u) => u.units === 0 && u.sumY === 0));
      const counts = await store.rebuildRollups(id);
      assert.equal(counts.results, logged.length);
      const rebuilt = await store.readRollups(id);
      const rebuiltBuckets = await store.readHourly(id);
      assertSameStats(statsOf(rebuilt.metrics), nonEmpty(statsOf(live.metrics)), 'metric rollups');
      assertSameStats(
        statsOf(rebuiltBuckets.metrics),
        nonEmpty(statsOf(liveBuckets.metrics)),
        'hourly rollups',
      );
      assertSameUnits(unitStats(rebuilt.units), nonEmptyUnits(unitStats(live.units)));
      // Min and max: rebuilt, those of the values counted now; live, of every value ever counted (a rating
      // replaced keeps its old value's reach: rebuild.ts), so the rebuilt range lies inside the live one, and
      // the metrics no feedback touched come back the same.
      const now = new Map<string, [number, number]>();
      const see = (key: string, x: number) => {
        const [lo, hi] = now.get(key) ?? [x, x];
        now.set(key, [Math.min(lo, x), Math.max(hi, x)]);
      };
      for (const r of logged) {
        const { cost, ok } = JSON.parse(r.metrics!) as { cost: number; ok: boolean };
        see(`1/${r.variantKey}/cost/mean`, cost);
        see(`1/${r.variantKey}/ok/proportion`, ok ? 1 : 0);
      }
      for (const { key, value } of ratings.values()) see(key, value);
      see(`1/${thumbed.variantKey}/thumbs/proportion`, 1);
      const ranges = (rows: MetricRollup[]) =>
        new Map(
          rows
            .filter((m) => m.n !== 0)
            .map((m) => [`${m.version}/${m.variantKey}/${m.metric}/${m.kind}`, [m.minValue, m.maxValue]]),
        );
      assert.deepEqual(ranges(rebuilt.metrics), now);
      for (const [key, [lo, hi]] of ranges(live.metrics)) {
        const [min, max] = now.get(key)!;
        assert.ok(lo! <= min && hi! >= max, `${key}: live [${lo}, ${hi}] holds [${min}, ${max}]`);
        if (!key.includes('/rating/')) assert.deepEqual([lo, hi], [min, max], key);
      }
      // Per hour: each hour's range inside the live one's, and the hours' ranges span the all-time one.
      const hourRanges = (rows: Array<MetricRollup & { hour: string }>) =>
        new Map(
          rows.filter((m) => m.n !== 0).map((m) => [`${m.hour} ${m.variantKey}/${m.metric}/${m.kind}`, m]),
        );
      const liveHours = hourRanges(liveBuckets.metrics);
      for (const [key, m] of hourRanges(rebuiltBuckets.metrics)) {
        const l = liveHours.get(key)!;
        assert.ok(l.minValue! <= m.minValue! && l.maxValue! >= m.maxValue!, key);
        if (!key.includes('/rating/'))
          assert.deepEqual([l.minValue, l.maxValue], [m.minValue, m.maxValue], key);
      }
      for (const [key, [min, max]] of now) {
        const hours = rebuiltBuckets.metrics.filter(
          (m) => m.n !== 0 && key === `1/${m.variantKey}/${m.metric}/${m.kind}`,
        );
        assert.deepEqual(
          [Math.min(...hours.map((m) => m.minValue!)), Math.max(...hours.map((m) => m.maxValue!))],
          [min, max],
          key,
        );
      }
      // Issue 23's sums: the same sketch bins, and hourly unit moves that add up to the same unit rollups
      // (per hour they may differ where a correction reached back: see rebuild.ts).
      assert.ok(live.sketches.length > 0 && liveBuckets.units.length > 0);
      assert.deepEqual(binCounts(rebuilt.sketches), binCounts(live.sketches));
      assert.deepEqual(binCounts(rebuiltBuckets.sketches), binCounts(liveBuckets.sketches));
      assertSameUnits(nonEmptyUnits(unitTotals(liveBuckets.units)), nonEmptyUnits(unitStats(live.units)));
      assertSameUnits(nonEmptyUnits(unitTotals(rebuiltBuckets.units)), nonEmptyUnits(unitStats(live.units)));
      // Appends after a rebuild move the rebuilt sums as they moved the live ones.
      const late = users.map((u) =>
        result(id, {
          userId: u.id,
          variantKey: u.variant,
          unit: true,
          createdAt: HOUR_2,
          metrics: JSON.stringify({ cost: 0.375, ok: true }),
        }),
      );
      await store.appendBatch({ results: late, exposures: [] });
      logged.push(...late);
      const afterward = (await store.readRollups(id)).units.filter(
        (u) => u.metric === 'cost' || u.metric === 'ok',
      );
      assertSameUnits(unitStats(afterward), expectedUnits(logged));
    });

    test('readHourly returns hourly metric rows, oldest first, and hourly exposures from the exposure batches', async () => {
      const { id } = await store.insertExperiment(experiment('buckets'));
      const at = (time: string, variantKey: string, latency: number) =>
        result(id, { createdAt: time, variantKey, metrics: JSON.stringify({ latency, ok: latency > 2 }) });
      // Committed out of hour order: the second hour first.
      await store.appendBatch({
        results: [at(HOUR_2, 'A', 5)],
        exposures: toExposureBatches([assigned(id, 'B', HOUR_2), assigned(id, 'B', HOUR_2)]),
      });
      await store.appendBatch({
        results: [at(HOUR_1, 'A', 1), at(HOUR_1, 'A', 3), at(HOUR_1, 'B', 2)],
        exposures: toExposureBatches([
          assigned(id, 'A', HOUR_1),
          assigned(id, 'A', HOUR_1),
          assigned(id, 'B', HOUR_1),
          assigned(id, 'A', HOUR_1),
        ]),
      });
      const { metrics, exposures } = await store.readHourly(id);
      const hours = metrics.map((m) => m.hour);
      assert.deepEqual(hours, [...hours].sort(), 'oldest hour first');
      assert.ok(metrics.every((m) => m.experimentId === id));
      const h1 = hourOf(HOUR_1);
      const h2 = hourOf(HOUR_2);
      assert.deepEqual(
        metrics
          .map(
            (m) =>
              `${m.hour} ${m.version}/${m.variantKey}/${m.metric}/${m.kind} ${m.n} ${m.sum} ${m.sumSquares}`,
          )
          .sort(),
        [
          `${h1} 1/A/latency/mean 2 4 10`,
          `${h1} 1/A/ok/proportion 2 1 1`,
          `${h1} 1/B/latency/mean 1 2 4`,
          `${h1} 1/B/ok/proportion 1 0 0`,
          `${h2} 1/A/latency/mean 1 5 25`,
          `${h2} 1/A/ok/proportion 1 1 1`,
        ],
      );
      const hourly = (rows: Array<{ hour: string; version: number; variantKey: string; n: number }>) =>
        rows.map((e) => `${e.hour} ${e.version}/${e.variantKey} ${e.n}`).sort();
      assert.deepEqual(hourly(exposures), [`${h1} 1/A 3`, `${h1} 1/B 1`, `${h2} 1/B 2`]);
      assert.deepEqual(
        exposures.map((e) => e.hour),
        [h1, h1, h2],
      );
      // A rebuild counts the same hours from the exposures themselves.
      await store.rebuildRollups(id);
      const rebuilt = await store.readHourly(id);
      assert.deepEqual(hourly(rebuilt.exposures), hourly(exposures));
      assert.deepEqual(statsOf(rebuilt.metrics), statsOf(metrics));
    });

    test('a result keeps the variant its assignment was issued for (null when it matched)', async () => {
      const { id } = await store.insertExperiment(experiment('assigned-variant'));
      const mismatched = result(id, { variantKey: 'B', assignmentId: 'as-x', assignedVariant: 'A' });
      await store.appendBatch({ results: [mismatched, result(id)], exposures: [] });
      const { results } = await store.listResults({ experimentId: id, limit: 10 });
      assert.deepEqual(
        results.map((r) => r.assignedVariant),
        ['A', null],
      );
    });

    test('findResult finds a result by logId within its experiment, and not in another one', async () => {
      const { id } = await store.insertExperiment(experiment('find-result'));
      const { id: otherId } = await store.insertExperiment(experiment('find-result-other'));
      const target = result(id, {
        variantKey: 'B',
        version: 2,
        userId: 'finder',
        assignmentId: 'as-finder',
        context: JSON.stringify({ plan: 'pro', n: 2 }),
      });
      const anonymous = result(id, { variantKey: 'A', userId: null });
      await store.appendBatch({ results: [target, anonymous, result(otherId)], exposures: [] });
      assert.deepEqual(await store.findResult(id, target.logId), {
        version: 2,
        variantKey: 'B',
        userId: 'finder',
        assignmentId: 'as-finder',
        context: { plan: 'pro', n: 2 },
      });
      assert.deepEqual(await store.findResult(id, anonymous.logId), {
        version: 1,
        variantKey: 'A',
        userId: null,
        assignmentId: null,
        context: null,
      });
      assert.equal(await store.findResult(otherId, target.logId), undefined);
      assert.equal(await store.findResult(id, 'no-such-log'), undefined);
    });

    test('findResults finds many results by logId at once, only within their experiment', async () => {
      const { id } = await store.insertExperiment(experiment('find-results'));
      const { id: otherId } = await store.insertExperiment(experiment('find-results-other'));
      const mine = Array.from({ length: 1200 }, (_, i) =>
        result(id, { variantKey: i % 2 ? 'B' : 'A', userId: i % 3 ? `u${i}` : null }),
      );
      const theirs = result(otherId);
      await store.appendBatch({ results: [...mine, theirs], exposures: [] });
      const asked = [...mine.map((r) => r.logId), theirs.logId, 'no-such-log', mine[0]!.logId];
      const found = await store.findResults(id, asked);
      assert.equal(found.size, 1200, 'beyond one statement (1000 ids), each once');
      for (const r of mine) {
        assert.deepEqual(found.get(r.logId), await store.findResult(id, r.logId));
      }
      assert.equal(found.has(theirs.logId), false);
      assert.equal(found.has('no-such-log'), false);
      assert.deepEqual(await store.findResults(id, []), new Map());
    });

    // SQLite file: appendBatch reads users' sums and feedback rows on the read connection before it hands
    // the batch to the writer thread; batches take turns from that read to the commit, or they would plan
    // from the same reads and lose updates.
    test('concurrent batches for the same user and the same feedback target each count once', async () => {
      const { id } = await store.insertExperiment(sticky('concurrent-units'));
      const target = result(id, {
        variantKey: 'A',
        userId: 'racer',
        unit: true,
        metrics: JSON.stringify({ score: 1 }),
      });
      await store.appendBatch({ results: [target], exposures: [] });
      const values = [1, 2, 3, 4, 5, 6];
      await Promise.all(
        values.map(async (value) =>
          store.appendBatch({
            results: [
              result(id, {
                variantKey: 'A',
                userId: 'racer',
                unit: true,
                metrics: JSON.stringify({ score: value }),
              }),
            ],
            exposures: [],
            feedback: [
              await feedbackOn(id, target.logId, [{ metric: 'rating', kind: 'mean', value }], HOUR_1),
            ],
          }),
        ),
      );
      const rollups = await store.readRollups(id);
      const units = unitStats(rollups.units);
      // One user: x = 1 + 1 + … + 6 over y = 7 results, plus the one rating that was written last.
      const rating = units['1/A/rating/mean'];
      assert.ok(rating && values.includes(rating.sumX), JSON.stringify(rating));
      assert.deepEqual(units, {
        '1/A/score/mean': unitSums([[22, 7]]),
        '1/A/rating/mean': unitSums([[rating.sumX, 1]]),
      });
      const ratings = rollups.metrics.filter((m) => m.metric === 'rating');
      assert.deepEqual(statsOf(ratings), {
        '1/A/rating/mean': { n: 1, sum: rating.sumX, sumSquares: rating.sumX ** 2 },
      });
    });

    test('ping answers', async () => {
      await store.ping();
    });
  });
}

for (const backend of sqlBackends.filter((b) => b.name !== 'SQLite in memory')) {
  test(`${backend.name}: exposures written row by row (before migration 003, or by an older instance) are still read`, {
    skip: backend.skip,
  }, async () => {
    const target = await backend.target();
    const legacyRow = (i: number, at: string) => ({
      assignment_id: `old-${i}`,
      experiment_id: 7,
      experiment_version: i % 4 ? 1 : 2,
      variant_key: i % 3 ? 'A' : 'B',
      user_id: `u${i}`,
      context: i % 2 ? JSON.stringify({ i, s: 'é "q"' }) : null,
      created_at: at,
    });
    const before = Array.from({ length: 1500 }, (_, i) => legacyRow(i, '2026-03-01T10:00:00.000Z'));
    const during = Array.from({ length: 20 }, (_, i) => legacyRow(5000 + i, '2026-03-01T12:30:00.000Z'));
    const db = await openDatabase(target);
    try {
      // The schema as migration 002 left it, with exposures written row by row.
      await db.runScript(
        'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
      );
      for (const m of loadMigrations(db.dialect).filter((m) => m.version <= 2)) {
        await db.runScript(m.sql);
        await db.runScript(`INSERT INTO schema_migrations VALUES (${m.version}, '${m.name}', '${NOW}')`);
      }
      for (let i = 0; i < before.length; i += 500) {
        await db.readWrite
          .insertInto('exposures')
          .values(before.slice(i, i + 500))
          .execute();
      }
      assert.deepEqual(
        await migrate(db),
        loadMigrations(db.dialect)
          .map((m) => m.version)
          .filter((v) => v > 2),
      );
    } finally {
      await db.close();
    }
    const store = await openStore(target);
    try {
      // New exposures go into batches; an instance of the previous release still writes rows.
      const fresh = [exposure(7, 'A'), exposure(7, 'B')];
      await store.appendBatch({ results: [], exposures: toExposureBatches(fresh) });
      const oldInstance = await openDatabase(target);
      try {
        await oldInstance.readWrite.insertInto('exposures').values(during).execute();
      } finally {
        await oldInstance.close();
      }
      const asListed = (r: ReturnType<typeof legacyRow>): Exposure => ({
        assignmentId: r.assignment_id,
        experimentId: 7,
        version: r.experiment_version,
        variantKey: r.variant_key,
        userId: r.user_id,
        context: r.context === null ? null : JSON.parse(r.context),
        createdAt: r.created_at,
      });
      // In time order: the old rows (10:00), the batch (NOW, 12:00), the late rows (12:30).
      assert.deepEqual(await store.listExposures(7), [
        ...before.map(asListed),
        ...fresh,
        ...during.map(asListed),
      ]);
      assert.equal(await store.countExposures(7), 1522);
      const live = await store.readRollups(7);
      const rebuilt = await store.rebuildRollups(7);
      assert.equal(rebuilt.exposures, 1522);
      const after = await store.readRollups(7);
      const byKey = (r: { version: number; variantKey: string; n: number }) =>
        `${r.version}/${r.variantKey}=${r.n}`;
      assert.deepEqual(
        after.exposures.map(byKey).sort(),
        [
          `1/A=${1 + during.filter((r) => r.experiment_version === 1 && r.variant_key === 'A').length + before.filter((r) => r.experiment_version === 1 && r.variant_key === 'A').length}`,
          `1/B=${1 + during.filter((r) => r.experiment_version === 1 && r.variant_key === 'B').length + before.filter((r) => r.experiment_version === 1 && r.variant_key === 'B').length}`,
          `2/A=${[...before, ...during].filter((r) => r.experiment_version === 2 && r.variant_key === 'A').length}`,
          `2/B=${[...before, ...during].filter((r) => r.experiment_version === 2 && r.variant_key === 'B').length}`,
        ].sort(),
      );
      assert.ok(live.exposures.length > 0);
    } finally {
      await store.close();
    }
  });
}

// Releases before this one stored some exposures as [assignmentId, variantKey, createdAt, request], the
// assign request's own text (ADR 0009). They are no longer written, but databases hold them.
for (const backend of sqlBackends) {
  test(`${backend.name}: exposures stored in the earlier request form are still read and counted`, {
    skip: backend.skip,
  }, async () => {
    const db = await openDatabase(await backend.target());
    await migrate(db);
    const store = new SqlStore(db);
    try {
      const { id } = await store.insertExperiment(experiment('request-form'));
      const at = '2026-03-01T11:00:00.000Z';
      const requestText = '{ "context": {"plan":"pro","q\\"k":"\\u00e9 😀"}, "userId":"u-1" }';
      const rowText = `[["r-1","A","${at}",${requestText}],["r-2","B","${at}",{"userId":"u-2"}],["r-3","B","u-3",null,"${at}"]]`;
      await db.readWrite
        .insertInto('exposure_batches')
        .values({ experiment_id: id, experiment_version: 1, count: 3, exposures: rowText })
        .execute();
      const fresh = exposure(id, 'A');
      await store.appendBatch({ results: [], exposures: toExposureBatches([fresh]) });
      const base = { experimentId: id, version: 1, createdAt: at };
      assert.deepEqual(await store.listExposures(id), [
        {
          ...base,
          assignmentId: 'r-1',
          variantKey: 'A',
          userId: 'u-1',
          context: { plan: 'pro', 'q"k': 'é 😀' },
        },
        { ...base, assignmentId: 'r-2', variantKey: 'B', userId: 'u-2', context: null },
        { ...base, assignmentId: 'r-3', variantKey: 'B', userId: 'u-3', context: null },
        fresh,
      ]);
      assert.equal((await store.rebuildRollups(id)).exposures, 4);
      const counts = (await store.readRollups(id)).exposures.map((e) => `${e.variantKey}=${e.n}`).sort();
      assert.deepEqual(counts, ['A=2', 'B=2']);
    } finally {
      await store.close();
    }
  });
}

test('reopening a SQLite file keeps data and re-runs no migration', async () => {
  const target: DatabaseTarget = { kind: 'sqlite', path: join(dir, 'reopen.db') };
  const first = await openStore(target);
  await first.insertExperiment(experiment('kept'));
  await first.close();
  const second = await openStore(target);
  try {
    assert.deepEqual(
      (await second.listExperiments()).map((s) => s.experiment.slug),
      ['kept'],
    );
  } finally {
    await second.close();
  }
});

/** Niceness of each thread of this process, by thread id (field 19 of /proc/self/task/<tid>/stat). */
function threadNiceness(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended between listing and reading
    }
  }
  return out;
}

test('the SQLite writer thread runs the configured levels below the process, and only it (Linux)', {
  skip: !existsSync('/proc/thread-self'),
}, async () => {
  const before = threadNiceness();
  // Relative, as `nice -n 7`: whatever niceness this test runs at, the writer is 7 below (up to 19).
  const expected = Math.min(19, before.get(process.pid)! + 7);
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'nice.db'), writerNice: 7 });
  try {
    await store.insertExperiment(experiment('nice'));
    const after = threadNiceness();
    const changed = [...after].filter(([tid, n]) => n === expected && before.get(tid) !== expected);
    assert.equal(changed.length, 1, `one new thread at nice ${expected}: ${JSON.stringify([...after])}`);
    assert.equal(after.get(process.pid), before.get(process.pid), 'the main thread keeps its niceness');
  } finally {
    await store.close();
  }
});

test('PostgreSQL: appends from two instances never leave a gap behind a reader’s cursor', {
  skip: !(await postgresReachable()),
}, async () => {
  const db = await createTestDatabase('order');
  databases.push(db);
  const [a, b] = [
    await openStore({ kind: 'postgres', url: db.url }),
    await openStore({ kind: 'postgres', url: db.url }),
  ];
  try {
    const { id } = await a.insertExperiment(experiment('order'));
    // Instance A commits big batches (seq numbers taken early, committed late); B many small ones.
    const big = (async () => {
      for (let i = 0; i < 4; i++) {
        await a.appendBatch({ results: Array.from({ length: 3000 }, () => result(id)), exposures: [] });
      }
    })();
    let writing = true;
    const small = (async () => {
      while (writing) await b.appendBatch({ results: [result(id)], exposures: [] });
    })();
    const seen: string[] = [];
    let after: number | undefined;
    const readPage = async () => {
      const page = await b.listResults({ experimentId: id, afterSeq: after, limit: 500 });
      seen.push(...page.results.map((r) => r.logId));
      if (page.lastSeq !== null) after = page.lastSeq;
    };
    while (!(await Promise.race([big.then(() => true), new Promise((r) => setTimeout(() => r(false), 5))]))) {
      await readPage();
    }
    writing = false;
    await small;
    for (let before = -1; before !== seen.length; ) {
      before = seen.length;
      await readPage();
    }
    const all: string[] = [];
    let cursor: number | undefined;
    for (;;) {
      const page = await a.listResults({ experimentId: id, afterSeq: cursor, limit: 1000 });
      all.push(...page.results.map((r) => r.logId));
      if (!page.hasMore) break;
      cursor = page.lastSeq!;
    }
    assert.equal(seen.length, all.length, `the reader missed ${all.length - seen.length} results`);
    assert.deepEqual(seen, all);
  } finally {
    await a.close();
    await b.close();
  }
});

test('PostgreSQL: two instances adding to the same rollups in opposite orders never deadlock', {
  skip: !(await postgresReachable()),
}, async () => {
  const db = await createTestDatabase('deadlock');
  databases.push(db);
  const [a, b] = [
    await openStore({ kind: 'postgres', url: db.url }),
    await openStore({ kind: 'postgres', url: db.url }),
  ];
  try {
    const { id } = await a.insertExperiment(experiment('deadlock'));
    const keys = Array.from({ length: 100 }, (_, i) => `v${String(i).padStart(3, '0')}`);
    const batch = (order: string[]) => ({
      results: [],
      exposures: toExposureBatches(order.map((k) => exposure(id, k))),
    });
    for (let round = 0; round < 30; round++) {
      await Promise.all([a.appendBatch(batch(keys)), b.appendBatch(batch([...keys].reverse()))]);
    }
    const rollups = await a.readRollups(id);
    assert.equal(
      rollups.exposures.reduce((sum, e) => sum + e.n, 0),
      30 * 2 * 100,
    );
  } finally {
    await a.close();
    await b.close();
  }
});

// Managed keys and Idempotency-Key claims are SQL only (the in-memory store has neither).
for (const backend of sqlBackends) {
  test(`${backend.name}: listKeyPage gives the live keys in (createdAt, id) order, a page at a time, from any position`, {
    skip: backend.skip,
  }, async () => {
    const store = await openStore(await backend.target());
    try {
      const keys: StoredKey[] = [];
      for (let i = 0; i < 25; i++) {
        // Five keys per millisecond: ties are ordered by id.
        const createdAt = new Date(Date.parse(NOW) + Math.floor(i / 5)).toISOString();
        const id = `01934f6e-0000-7000-8000-${String((i * 7919) % 25).padStart(12, '0')}`;
        const key: StoredKey = {
          id,
          name: `k${i}`,
          scopes: ['read'],
          experiments: null,
          prefix: `ask_${i}`,
          hash: `hash-${i}`,
          rateLimitPerSecond: null,
          createdAt,
          lastUsedAt: null,
        };
        keys.push(key);
        await store.insertKey(key);
      }
      await store.revokeKey(keys[7]!.id, NOW);
      const live = keys
        .filter((_, i) => i !== 7)
        .sort((x, y) =>
          x.createdAt === y.createdAt ? (x.id < y.id ? -1 : 1) : x.createdAt < y.createdAt ? -1 : 1,
        );
      const paged: StoredKey[] = [];
      let after: { createdAt: string; id: string } | undefined;
      for (;;) {
        const page = await store.listKeyPage(after, 4);
        paged.push(...page);
        if (page.length < 4) break;
        after = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
      }
      assert.deepEqual(
        paged.map((k) => k.id),
        live.map((k) => k.id),
      );
      assert.deepEqual(paged, await store.listKeys(), 'the same keys as listKeys, every field');
      // From a position no key has (a revoked key's): what comes after it.
      const from = await store.listKeyPage({ createdAt: keys[7]!.createdAt, id: keys[7]!.id }, 100);
      assert.deepEqual(
        from.map((k) => k.id),
        live.filter((k) => `${k.createdAt}${k.id}` > `${keys[7]!.createdAt}${keys[7]!.id}`).map((k) => k.id),
      );
    } finally {
      await store.close();
    }
  });
}

test('PostgreSQL: an Idempotency-Key claim holds while the instance that made it is alive, and no longer', {
  skip: !(await postgresReachable()),
}, async () => {
  const db = await createTestDatabase('claims');
  databases.push(db);
  const [a, b] = [
    await openStore({ kind: 'postgres', url: db.url }),
    await openStore({ kind: 'postgres', url: db.url }),
  ];
  const EPOCH = '1970-01-01T00:00:00.000Z';
  let aClosed = false;
  try {
    await a.startInstance();
    await b.startInstance();
    const now = new Date().toISOString();
    const claim = (store: SqlStore, key: string, fingerprint: string, staleBefore = EPOCH) =>
      store.claimIdempotencyKey('root', key, fingerprint, now, EPOCH, staleBefore);
    assert.equal(await claim(a, 'k1', 'fa'), true, 'a new key');
    assert.equal(await claim(a, 'k2', 'fa'), true);
    assert.equal(await claim(b, 'k1', 'fb'), false, 'A is alive: its claim holds');
    assert.equal(
      await claim(b, 'k1', 'fb', new Date(Date.parse(now) + 1).toISOString()),
      true,
      'the last resort: pending since before staleBefore',
    );
    assert.equal(await claim(b, 'k2', 'fb'), false);
    const many = Array.from({ length: 20 }, (_, i) => `many-${i}`);
    for (const key of many) assert.equal(await claim(a, key, 'fa'), true);
    assert.equal(await claim(b, 'k3', 'fb'), true);
    assert.equal(await claim(b, 'k3', 'fb2'), true, 'its own claim (left behind) is taken over');
    await a.close();
    aClosed = true;
    assert.equal(await claim(b, 'k2', 'fb'), true, 'A is gone: its claim is taken over at once');
    // Many retries at once, each asking whether A is alive: none mistakes another's check for A.
    assert.deepEqual(
      await Promise.all(many.map((key) => claim(b, key, 'fb'))),
      many.map(() => true),
    );
    assert.equal((await b.findIdempotencyKey('root', 'k2', EPOCH))?.fingerprint, 'fb');
  } finally {
    if (!aClosed) await a.close();
    await b.close();
  }
});

test('PostgreSQL: an instance whose lock connection broke claims nothing (503) until it holds its lock again', {
  skip: !(await postgresReachable()),
}, async () => {
  const db = await createTestDatabase('lostlock');
  databases.push(db);
  const store = await openStore({ kind: 'postgres', url: db.url });
  const admin = await openDatabase({ kind: 'postgres', url: db.url });
  const EPOCH = '1970-01-01T00:00:00.000Z';
  const claim = (key: string) =>
    store.claimIdempotencyKey('root', key, 'f', new Date().toISOString(), EPOCH, EPOCH);
  const lockSessions = async () =>
    (
      await sql<{ pid: number; instance: number }>`select pid, objid::int as instance from pg_locks
        where locktype = 'advisory' and granted and classid = ${0x61677372}::int::oid and objsubid = 2
        and database = (select oid from pg_database where datname = current_database())`.execute(
        admin.readWrite,
      )
    ).rows;
  try {
    await store.startInstance();
    assert.equal(await claim('before'), true);
    const [held] = await lockSessions();
    assert.ok(held, 'the instance holds its lock');
    await sql`select pg_terminate_backend(${held.pid}::int)`.execute(admin.readWrite);
    // Until the lock is back, a claim is refused as unavailable (503 with Retry-After at the edge).
    let refused: unknown;
    while (refused === undefined) {
      refused = await claim('during').then(
        () => undefined,
        (err) => err,
      );
    }
    assert.ok(refused instanceof UnavailableError, String(refused));
    // It takes the same lock again (same instance id, another session) and claims again.
    for (;;) {
      const sessions = await lockSessions();
      if (sessions.length === 1 && sessions[0]!.pid !== held.pid) {
        assert.equal(sessions[0]!.instance, held.instance);
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    for (;;) {
      const ok = await claim('after').catch(() => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await store.close();
    await admin.close();
  }
});

// Migration 004 moves PostgreSQL's JSON columns from jsonb to json and adds results.metrics_over_cap:
// rows stored before it read back as the same values and roll up as before.
for (const backend of sqlBackends) {
  test(`${backend.name}: results and experiments stored before migration 004 read back the same, and rebuild the same rollups`, {
    skip: backend.skip,
  }, async () => {
    const target = await backend.target();
    const db = await openDatabase(target);
    try {
      await db.runScript(
        'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
      );
      for (const m of loadMigrations(db.dialect).filter((m) => m.version <= 3)) {
        await db.runScript(m.sql);
        await db.runScript(`INSERT INTO schema_migrations VALUES (${m.version}, '${m.name}', '${NOW}')`);
      }
      const store = new SqlStore(db);
      // Written as the previous release wrote it: migration 001's columns only.
      const e = experiment('before-004');
      const inserted = await db.readWrite
        .insertInto('experiments')
        .values({
          slug: e.slug,
          name: e.name,
          description: e.description,
          status: e.status,
          assignment: e.assignment,
          seed: e.seed,
          variants: JSON.stringify(e.variants),
          version: e.version,
          created_at: e.createdAt,
          updated_at: e.updatedAt,
        } as never)
        .returning('id')
        .executeTakeFirstOrThrow();
      const id = Number(inserted.id);
      const old = Array.from({ length: 30 }, (_, i) =>
        result(id, {
          metrics: JSON.stringify({ latency: i, ok: i % 2 === 0 }),
          context: JSON.stringify({ z: 1, a: [{ y: 2, x: 'é' }] }),
        }),
      );
      // Written as the previous release wrote them: no metrics_over_cap column yet.
      await db.readWrite
        .insertInto('results')
        .values(
          old.map((r) => ({
            log_id: r.logId,
            experiment_id: id,
            experiment_version: 1,
            variant_key: r.variantKey,
            known_variant: 1,
            user_id: r.userId,
            assignment_id: null,
            input: r.input,
            output: null,
            metrics: r.metrics,
            context: r.context,
            client_timestamp: null,
            created_at: r.createdAt,
          })) as never,
        )
        .execute();
      // Read as rows: the store's listing also reads tables later migrations add (feedback, contexts).
      const parsed = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
      const rowsBefore = await db.readOnly
        .selectFrom('results')
        .select(['log_id', 'input', 'output', 'metrics', 'context'])
        .where('experiment_id', '=', id)
        .orderBy('seq')
        .execute();
      const listedBefore = {
        results: rowsBefore.map((r) => ({
          logId: r.log_id,
          input: parsed(r.input),
          output: parsed(r.output),
          metrics: parsed(r.metrics),
          context: parsed(r.context),
        })),
      };
      // The experiment's row as such: the store's find also reads a later table (rollouts, migration 027).
      const experimentBefore = await selectExperiment(db.readOnly, 'before-004');
      assert.deepEqual(
        (await migrate(db)).filter((v) => v <= 4),
        [4],
      );
      const listedAfter = await store.listResults({ experimentId: id, limit: 100 });
      assert.deepEqual(
        listedAfter.results.map(({ logId, input, output, metrics, context }) => ({
          logId,
          input,
          output,
          metrics,
          context,
        })),
        listedBefore.results,
      );
      assert.ok(
        listedAfter.results.every(
          (r) => r.assignmentContext === null && Object.keys(r.feedback).length === 0,
        ),
      );
      // The same, with the metric definitions migration 006 adds (none), and the segments of a later one (none).
      assert.deepEqual(await store.findExperiment('before-004'), {
        ...experimentBefore!,
        experiment: {
          ...experimentBefore!.experiment,
          metrics: [],
          segments: [],
          guardrailAction: 'notify',
          minimumUnits: 100,
          // Who enters (migration 022): everyone.
          targeting: null,
          coverage: 100,
          layer: null,
          overrides: [],
          defaultVariant: null,
          // What was decided (migration 023): nothing yet.
          decision: null,
        },
      });
      assert.equal(listedBefore.results.length, 30);
      assert.deepEqual(listedBefore.results[3]!.context, { z: 1, a: [{ y: 2, x: 'é' }] });
      await store.rebuildRollups(id);
      const sorted = (metrics: MetricRollup[]) =>
        metrics.map((m) => `${m.version}/${m.variantKey}/${m.metric}/${m.kind}=${m.n},${m.sum}`).sort();
      const expected = rollUpResults(old.map(rolledResult));
      assert.equal(expected.length, 4);
      assert.deepEqual(sorted((await store.readRollups(id)).metrics), sorted(expected));
    } finally {
      await db.close();
    }
  });
}

// Migration 017 adds the metric rollups' min and max as NULL (unknown) to rows already stored: new values
// leave them unknown (alone they do not bound the values counted before), and a rebuild fills them.
for (const backend of sqlBackends) {
  test(`${backend.name}: rollups stored before migration 017 keep an unknown min and max under new values until a rebuild`, {
    skip: backend.skip,
  }, async () => {
    const db = await openDatabase(await backend.target());
    try {
      await migrate(db);
      const store = new SqlStore(db);
      const { id } = await store.insertExperiment(experiment('before-017'));
      const logged = (latency: number) =>
        result(id, { variantKey: 'A', createdAt: HOUR_1, metrics: JSON.stringify({ latency }) });
      await store.appendBatch({ results: [logged(50), logged(10)], exposures: [] });
      // As migration 017 leaves the rows of an earlier release.
      for (const table of ['metric_rollups', 'bucket_rollups'] as const) {
        await db.readWrite
          .updateTable(table)
          .set({ min_value: null, max_value: null })
          .where('experiment_id', '=', id)
          .execute();
      }
      await store.appendBatch({ results: [logged(30), logged(70)], exposures: [] });
      const ranges = async () => [
        ...(await store.readRollups(id)).metrics.map((m) => [m.minValue, m.maxValue]),
        ...(await store.readHourly(id)).metrics.map((m) => [m.minValue, m.maxValue]),
      ];
      assert.deepEqual(await ranges(), [
        [null, null],
        [null, null],
      ]);
      await store.rebuildRollups(id);
      assert.deepEqual(await ranges(), [
        [10, 70],
        [10, 70],
      ]);
    } finally {
      await db.close();
    }
  });
}

test('PostgreSQL: two instances admitting new metric names at once roll up exactly MAX_METRICS_PER_EXPERIMENT', {
  skip: !(await postgresReachable()),
}, async () => {
  const db = await createTestDatabase('cap');
  databases.push(db);
  const [a, b] = [
    await openStore({ kind: 'postgres', url: db.url }),
    await openStore({ kind: 'postgres', url: db.url }),
  ];
  try {
    const { id } = await a.insertExperiment(experiment('cap'));
    // Both learn the experiment's names early (10 of them), then race with 150 new names each.
    await a.appendBatch({ results: [result(id, { metrics: JSON.stringify({ m0: 1 }) })], exposures: [] });
    const first = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`m${i}`, i]));
    await b.appendBatch({ results: [result(id, { metrics: JSON.stringify(first) })], exposures: [] });
    const race = (store: Store, prefix: string) =>
      Promise.all(
        Array.from({ length: 5 }, (_, k) =>
          store.appendBatch({
            results: [
              result(id, {
                metrics: JSON.stringify(
                  Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`${prefix}${k}-${i}`, i])),
                ),
              }),
            ],
            exposures: [],
          }),
        ),
      );
    await Promise.all([race(a, 'a'), race(b, 'b')]);
    const live = await a.readRollups(id);
    assert.equal(new Set(live.metrics.map((m) => m.metric)).size, MAX_METRICS_PER_EXPERIMENT);
    const key = (m: MetricRollup) => `${m.variantKey}/${m.metric}/${m.kind} ${m.n} ${m.sum}`;
    await b.rebuildRollups(id);
    assert.deepEqual((await a.readRollups(id)).metrics.map(key).sort(), live.metrics.map(key).sort());
  } finally {
    await a.close();
    await b.close();
  }
});

test("PostgreSQL: two instances moving the same users' sums within segment values at once leave what a rebuild computes", {
  skip: !(await postgresReachable()),
}, async () => {
  const db = await createTestDatabase('segment-units');
  databases.push(db);
  const [a, b] = [
    await openStore({ kind: 'postgres', url: db.url }),
    await openStore({ kind: 'postgres', url: db.url }),
  ];
  try {
    const { id } = await a.insertExperiment({ ...sticky('segment-race'), segments: ['plan'] });
    const random = seededRandom(330);
    // Six users, each result in one of two plans: every batch of both instances moves the same rows.
    const batch = () =>
      Array.from({ length: 6 }, () => {
        const user = Math.floor(random() * 6);
        const plan = random() < 0.5 ? 'pro' : 'free';
        return result(id, {
          userId: `race-${user}`,
          variantKey: user % 2 ? 'B' : 'A',
          unit: true,
          metrics: JSON.stringify({ latency: Math.round(random() * 1000) }),
          segments: { values: { plan }, lookup: [], wait: false },
        });
      });
    const race = (store: Store) =>
      Promise.all(Array.from({ length: 10 }, () => store.appendBatch({ results: batch(), exposures: [] })));
    await Promise.all([race(a), race(b)]);
    const stats = async (key: string) => {
      const rows = await a.readSegments(id, key);
      return unitStats(rows.units.map((u) => ({ ...u, variantKey: `${u.value}/${u.variantKey}` })));
    };
    const live = await stats('plan');
    assert.equal(Object.keys(live).length, 4);
    await b.rebuildRollups(id);
    assertSameUnits(await stats('plan'), live);
  } finally {
    await a.close();
    await b.close();
  }
});

/** Unit rollup rows summed per version, variant, metric and kind (hourly moves summed over their hours). */
function unitTotals(rows: UnitRollup[]): Record<string, UnitStats> {
  const out: Record<string, UnitStats> = {};
  for (const r of rows) {
    const key = `${r.version}/${r.variantKey}/${r.metric}/${r.kind}`;
    const t = out[key] ?? { units: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 };
    out[key] = t;
    t.units += r.units;
    t.sumX += r.sumX;
    t.sumX2 += r.sumX2;
    t.sumY += r.sumY;
    t.sumY2 += r.sumY2;
    t.sumXY += r.sumXY;
  }
  return out;
}

/** Sketch bin counts per key (hour, version, variant, metric, side, bin), rows at 0 left out. */
function binCounts(rows: Array<SketchRow & { hour?: string }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    if (r.count === 0) continue;
    const key = `${r.hour ?? ''} ${r.version}/${r.variantKey}/${r.metric} ${r.side}:${r.key}`;
    assert.equal(out[key], undefined, `one row per key: ${key}`);
    out[key] = r.count;
  }
  return out;
}

/** Values counted per metric (and hour): what a sketch's bins add up to. */
function sketchTotals(rows: Array<SketchRow & { hour?: string }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    const key = `${r.hour ?? ''} ${r.version}/${r.variantKey}/${r.metric}`;
    out[key] = (out[key] ?? 0) + r.count;
  }
  return Object.fromEntries(Object.entries(out).filter(([, n]) => n !== 0));
}

for (const backend of backends) {
  describe(`store contract, write-time sums of issue 23: ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    after(async () => store?.close());
    const ready = async () => {
      store ??= await backend.open();
      return store;
    };
    const seen = (
      experimentId: number,
      userId: string,
      variantKey: string,
      createdAt = HOUR_1,
      version = 1,
    ): Exposure => ({ ...assigned(experimentId, variantKey, createdAt), userId, version, unit: true });

    test('distinct users: a repeat user counts once per version, in every batch and after a rebuild; random experiments record none', async () => {
      await ready();
      const { id } = await store.insertExperiment(sticky('distinct-users'));
      // u1 calls assign 50 times, in one batch and in later ones; u2 and u3 once each.
      const first = [
        ...Array.from({ length: 30 }, () => seen(id, 'u1', 'A')),
        seen(id, 'u2', 'B'),
        seen(id, 'u3', 'A'),
      ];
      await store.appendBatch({ results: [], exposures: toExposureBatches(first) });
      for (let b = 0; b < 4; b++) {
        const again = [
          ...Array.from({ length: 5 }, () => seen(id, 'u1', 'A', HOUR_2)),
          seen(id, `v${b}`, 'B', HOUR_2),
        ];
        await store.appendBatch({ results: [], exposures: toExposureBatches(again) });
      }
      // Version 2: u1 and u2 are exposed again, under the new version (counted there too).
      await store.appendBatch({
        results: [],
        exposures: toExposureBatches([
          seen(id, 'u1', 'B', HOUR_2, 2),
          seen(id, 'u2', 'B', HOUR_2, 2),
          seen(id, 'u1', 'B', HOUR_2, 2),
        ]),
      });
      const counts = (rows: Array<{ version: number; variantKey: string; n: number }>) =>
        Object.fromEntries(rows.filter((r) => r.n !== 0).map((r) => [`${r.version}/${r.variantKey}`, r.n]));
      const live = await store.readRollups(id);
      assert.deepEqual(counts(live.exposureUsers), { '1/A': 2, '1/B': 5, '2/B': 2 });
      // The exposures themselves are all counted as before: 32 + 4 × 6 + 3.
      assert.equal(sum(live.exposures.map((e) => e.n)), 59);
      await store.rebuildRollups(id);
      assert.deepEqual(counts((await store.readRollups(id)).exposureUsers), counts(live.exposureUsers));
      // After the rebuild, known and new users still count right.
      await store.appendBatch({
        results: [],
        exposures: toExposureBatches([seen(id, 'u3', 'A'), seen(id, 'w', 'A')]),
      });
      assert.deepEqual(counts((await store.readRollups(id)).exposureUsers), { '1/A': 3, '1/B': 5, '2/B': 2 });

      const random = await store.insertExperiment(experiment('distinct-users-random'));
      const plain = (u: string) => ({ ...assigned(random.id, 'A', HOUR_1), userId: u });
      await store.appendBatch({
        results: [],
        exposures: toExposureBatches([plain('x'), plain('x'), plain('y')]),
      });
      await store.rebuildRollups(random.id);
      const r = await store.readRollups(random.id);
      assert.deepEqual(r.exposureUsers, []);
      assert.equal(sum(r.exposures.map((e) => e.n)), 3);
    });

    test('hourly unit moves: the first hour equals the unit rollups as of its end, all hours sum to unit_rollups (floats, integers, feedback corrections)', async () => {
      await ready();
      const { id } = await store.insertExperiment(sticky('unit-hours'));
      const random = seededRandom(2323);
      const users = Array.from({ length: 6 }, (_, i) => ({ id: `uh-${i}`, variant: i % 2 ? 'B' : 'A' }));
      const HOUR_3 = '2026-03-02T11:05:00.000Z';
      const logged: NewResult[] = [];
      const batch = async (times: string[]) => {
        const results = times.map((at) => {
          const u = users[Math.floor(random() * users.length)]!;
          return result(id, {
            userId: u.id,
            variantKey: u.variant,
            unit: true,
            createdAt: at,
            metrics: JSON.stringify({
              cost: random() * 3,
              tokens: Math.floor(random() * 500),
              ok: random() < 0.5,
            }),
          });
        });
        await store.appendBatch({ results, exposures: [] });
        logged.push(...results);
      };
      for (let b = 0; b < 3; b++) await batch(Array.from({ length: 8 }, () => HOUR_1));
      const asOfHour1 = (await store.readRollups(id)).units;
      await batch(Array.from({ length: 8 }, () => HOUR_2));
      // One batch spanning two hours, the same users in both.
      await batch(Array.from({ length: 12 }, (_, k) => (k % 2 ? HOUR_2 : HOUR_3)));
      // Feedback in the third hour correcting values of the first hour's results (twice for one of them).
      const feedback: NewFeedback[] = [];
      for (const [i, value] of [
        [0, 4],
        [1, 7],
        [0, 9],
      ] as const) {
        const target = logged[i]!;
        const stored = (await store.findResult(id, target.logId))!;
        feedback.push({
          feedbackId: `fb-${++counter}`,
          experimentId: id,
          target: `l:${target.logId}`,
          version: stored.version,
          variantKey: stored.variantKey,
          userId: stored.userId,
          unit: true,
          values: [{ metric: 'stars', kind: 'mean', value }],
          comment: null,
          createdAt: HOUR_3,
        });
        await store.appendBatch({ results: [], exposures: [], feedback: [feedback.at(-1)!] });
      }
      const live = await store.readRollups(id);
      const { units } = await store.readHourly(id);
      assert.deepEqual(
        [...new Set(units.map((u) => u.hour))],
        [hourOf(HOUR_1), hourOf(HOUR_2), hourOf(HOUR_3)],
        'oldest hour first',
      );
      assertSameUnits(unitTotals(units.filter((u) => u.hour === hourOf(HOUR_1))), unitStats(asOfHour1));
      const totals = unitTotals(units);
      assertSameUnits(nonEmptyUnits(totals), nonEmptyUnits(unitStats(live.units)));
      // Integer-valued metrics (tokens, ok, stars' count) are equal bit for bit.
      for (const [key, t] of Object.entries(unitStats(live.units))) {
        if (key.includes('/tokens/') || key.includes('/ok/')) assert.deepEqual(totals[key], t, key);
      }
      // The corrected value (9) and the other (7), once each.
      const stars = live.units.filter((u) => u.metric === 'stars');
      assert.deepEqual([sum(stars.map((u) => u.sumX)), sum(stars.map((u) => u.sumY))], [16, 2]);
      // The rebuild replays in the hours written: the same totals, and the first hour unchanged where no
      // correction reached back into it.
      await store.rebuildRollups(id);
      const rebuilt = await store.readHourly(id);
      assertSameUnits(nonEmptyUnits(unitTotals(rebuilt.units)), nonEmptyUnits(unitStats(live.units)));
      const firstHour = (rows: HourlyUnitRollup[]) =>
        unitTotals(rows.filter((u) => u.metric !== 'stars' && u.hour === hourOf(HOUR_1)));
      assertSameUnits(firstHour(rebuilt.units), firstHour(units));
    });

    test('sketch bins: numeric values rolled up are counted once each, per variant and per hour; feedback moves a bin; over-cap and beyond-magnitude values are not', async () => {
      await ready();
      const { id } = await store.insertExperiment(experiment('sketch-bins'));
      const random = seededRandom(77);
      const results: NewResult[] = [];
      for (let i = 0; i < 60; i++) {
        const latency = Math.round(random() * 2000);
        results.push(
          result(id, {
            createdAt: i < 30 ? HOUR_1 : HOUR_2,
            metrics: JSON.stringify({
              latency,
              delta: random() * 10 - 5,
              zero: 0,
              ok: random() < 0.5,
              label: 'text',
              ...(i === 5 ? { huge: 1e200, latency: -1e150 } : {}),
            }),
          }),
        );
      }
      await store.appendBatch({ results: results.slice(0, 40), exposures: [] });
      await store.appendBatch({ results: results.slice(40), exposures: [] });
      // A rating, then its correction: the first value's bin goes back to 0, the second's counts 1.
      const target = results[3]!;
      const where = (await store.findResult(id, target.logId))!;
      for (const value of [3, 300]) {
        await store.appendBatch({
          results: [],
          exposures: [],
          feedback: [
            {
              feedbackId: `fb-${++counter}`,
              experimentId: id,
              target: `l:${target.logId}`,
              version: where.version,
              variantKey: where.variantKey,
              userId: where.userId,
              unit: false,
              values: [{ metric: 'rating', kind: 'mean', value }],
              comment: null,
              createdAt: HOUR_2,
            },
          ],
        });
      }
      // A result naming more metrics than the cap allows: the names beyond it are not counted.
      const many: Record<string, number> = {};
      for (let k = 0; k < MAX_METRICS_PER_EXPERIMENT + 3; k++) many[`m${String(k).padStart(3, '0')}`] = k + 1;
      const capped = result(id, { createdAt: HOUR_2, metrics: JSON.stringify(many) });
      await store.appendBatch({ results: [capped], exposures: [] });
      const live = await store.readRollups(id);
      const stored = await store.readHourly(id);
      // Every numeric value metric_rollups counts is in exactly one bin; nothing else is.
      const rolledUp = Object.fromEntries(
        live.metrics
          .filter((m) => m.kind === 'mean' && m.n !== 0)
          .map((m) => [` ${m.version}/${m.variantKey}/${m.metric}`, m.n]),
      );
      assert.deepEqual(sketchTotals(live.sketches), rolledUp);
      const hourly = Object.fromEntries(
        stored.metrics
          .filter((m) => m.kind === 'mean' && m.n !== 0)
          .map((m) => [`${m.hour} ${m.version}/${m.variantKey}/${m.metric}`, m.n]),
      );
      assert.deepEqual(sketchTotals(stored.sketches), hourly);
      const names = new Set(live.sketches.map((s) => s.metric));
      assert.ok(!names.has('huge') && !names.has('ok') && !names.has('label'), [...names].join());
      const cappedNames = Object.keys(many).filter((m) => names.has(m));
      assert.ok(cappedNames.length < Object.keys(many).length, 'names beyond the cap have no bins');
      assert.ok(live.sketches.some((s) => s.metric === 'zero' && s.side === 0 && s.key === 0));
      assert.ok(live.sketches.some((s) => s.metric === 'delta' && s.side === -1));
      const rating = live.sketches.filter((s) => s.metric === 'rating');
      assert.deepEqual(
        rating.map((s) => [s.side, s.key, s.count]),
        [[1, sketchBin(300).key, 1]],
      );
      // The sketch answers quantiles within 1% of a value of that rank.
      const latencies = results
        .filter((r) => r.variantKey === 'A')
        .map((r) => (JSON.parse(r.metrics!) as { latency: number }).latency)
        .filter((x) => Math.abs(x) <= 1e100);
      const sketch = sketchOf(live.sketches.filter((s) => s.metric === 'latency' && s.variantKey === 'A'));
      assert.equal(sketch.count, latencies.length);
      const median = sketch.getValueAtQuantile(0.5)!;
      assert.ok(
        latencies.some((x) => Math.abs(x - median) <= 0.01 * Math.abs(x) + 1e-9),
        `median ${median} is within 1% of a latency`,
      );
      // A rebuild from raw rows writes the same bins (the correction's latest value, in its first hour).
      await store.rebuildRollups(id);
      assert.deepEqual(binCounts((await store.readRollups(id)).sketches), binCounts(live.sketches));
      assert.deepEqual(binCounts((await store.readHourly(id)).sketches), binCounts(stored.sketches));
    });
  });
}

for (const backend of backends) {
  describe(`store contract, segments of issue 26: ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    after(async () => store?.close());

    /** Counts and metric sums per value and variant, as readSegments answers them. */
    async function readBack(id: number, key: string) {
      const rows = await store.readSegments(id, key);
      const counts: Record<string, number> = {};
      for (const c of rows.counts)
        counts[`${c.value}/${c.variantKey}`] = (counts[`${c.value}/${c.variantKey}`] ?? 0) + c.n;
      const sums: Record<string, [number, number, number]> = {};
      for (const m of rows.metrics)
        sums[`${m.value}/${m.variantKey}/${m.metric}/${m.kind}`] = [m.n, m.sum, m.sumSquares];
      return { counts, sums };
    }

    test('a result counts under its own context value, else its assignment’s: in the same batch, a later one, or waiting for a client’s exposure', async () => {
      store = await backend.open();
      const { id } = await store.insertExperiment({ ...experiment('segments'), segments: ['plan'] });
      const withSegments = (e: Exposure, plan: string): Exposure => ({
        ...e,
        context: { plan },
        segments: { plan },
      });
      const own = result(id, {
        variantKey: 'A',
        metrics: JSON.stringify({ score: 2, ok: true }),
        segments: { values: { plan: 'pro' }, lookup: [], wait: false },
      });
      // Its assign's exposure in the same batch.
      const served = withSegments({ ...exposure(id, 'B'), assignmentId: 'srv-1' }, 'free');
      const sameBatch = result(id, {
        variantKey: 'B',
        assignmentId: 'srv-1',
        metrics: JSON.stringify({ score: 3 }),
        segments: { values: {}, lookup: ['plan'], wait: false },
      });
      // A client's result before its exposure: it waits.
      const early = result(id, {
        variantKey: 'A',
        assignmentId: 'cli-1',
        metrics: JSON.stringify({ score: 5, ok: false }),
        segments: { values: {}, lookup: ['plan'], wait: true },
      });
      await store.appendBatch({ results: [own, sameBatch, early], exposures: toExposureBatches([served]) });
      let read = await readBack(id, 'plan');
      assert.deepEqual(read.counts, { 'pro/A': 1, 'free/B': 1 });
      // A later batch: a result naming the stored assignment, and the client's exposure resolving `early`.
      const later = result(id, {
        variantKey: 'B',
        assignmentId: 'srv-1',
        metrics: JSON.stringify({ score: 4 }),
        segments: { values: {}, lookup: ['plan'], wait: false },
      });
      const client = {
        ...withSegments({ ...exposure(id, 'A'), assignmentId: 'cli-1' }, 'free'),
        byClient: true,
      };
      await store.appendBatch({ results: [later], exposures: toExposureBatches([client]) });
      read = await readBack(id, 'plan');
      assert.deepEqual(read.counts, { 'pro/A': 1, 'free/B': 2, 'free/A': 1 });
      assert.deepEqual(read.sums, {
        'pro/A/score/mean': [1, 2, 4],
        'pro/A/ok/proportion': [1, 1, 1],
        'free/B/score/mean': [2, 7, 25],
        'free/A/score/mean': [1, 5, 25],
        'free/A/ok/proportion': [1, 0, 0],
      });
      // The same exposure again resolves nothing twice; another key reads nothing.
      await store.appendBatch({ results: [], exposures: toExposureBatches([client]) });
      assert.deepEqual((await readBack(id, 'plan')).counts, { 'pro/A': 1, 'free/B': 2, 'free/A': 1 });
      assert.deepEqual(await store.readSegments(id, 'region'), {
        metrics: [],
        counts: [],
        units: [],
        sketches: [],
        pairs: [],
      });
      // An experiment without results can still be deleted with its assignments' segment values.
      const bare = await store.insertExperiment({ ...experiment('segments-bare'), segments: ['plan'] });
      await store.appendBatch({
        results: [],
        exposures: toExposureBatches([withSegments(exposure(bare.id), 'x')]),
      });
      await store.deleteExperiment('segments-bare', () => {});
      assert.equal(
        (await store.listExperiments()).some((s) => s.experiment.slug === 'segments-bare'),
        false,
      );
    });

    test('feedback counts in its target’s segment; a replacement leaves only the segments that counted the old value', async () => {
      const { id } = await store.insertExperiment({ ...experiment('segments-feedback'), segments: ['plan'] });
      const rating = (value: number): FeedbackValue[] => [{ metric: 'rating', kind: 'mean', value }];
      const fb = (target: string, variantKey: string, value: number, segments?: TargetSegments) =>
        ({
          feedbackId: `fb-seg-${++counter}`,
          experimentId: id,
          target,
          version: 1,
          variantKey,
          userId: null,
          unit: false,
          values: rating(value),
          comment: null,
          createdAt: NOW,
          ...(segments ? { segments } : {}),
        }) satisfies NewFeedback;
      const lookup = (assignmentId: string): TargetSegments => ({
        values: {},
        lookup: ['plan'],
        assignmentId,
      });
      const served = {
        ...exposure(id, 'B'),
        assignmentId: 'fa-1',
        context: { plan: 'team' },
        segments: { plan: 'team' },
      };
      await store.appendBatch({ results: [], exposures: toExposureBatches([served]) });
      // On a result's own value, on an assignment's stored value (by assignment and by a result naming
      // it), on an assignment with no value, and one given before the key was declared (no segments).
      await store.appendBatch({
        results: [],
        exposures: [],
        feedback: [
          fb('l:own', 'A', 4, { values: { plan: 'pro' }, lookup: [], assignmentId: null }),
          fb('a:fa-1', 'B', 2, lookup('fa-1')),
          fb('l:named', 'B', 3, lookup('fa-1')),
          fb('a:fa-none', 'A', 5, lookup('fa-none')),
          fb('l:early', 'A', 1),
        ],
      });
      let read = await readBack(id, 'plan');
      assert.deepEqual(read.sums, {
        'pro/A/rating/mean': [1, 4, 16],
        'team/B/rating/mean': [2, 5, 13],
      });
      assert.deepEqual(read.counts, {}, 'feedback counts no results');
      // Replacements: by the difference where the old value was counted; twice in one batch; and the
      // early one enters the segment now (n + 1, nothing taken out of a segment that never counted it).
      await store.appendBatch({
        results: [],
        exposures: [],
        feedback: [
          fb('l:own', 'A', 2, { values: { plan: 'pro' }, lookup: [], assignmentId: null }),
          fb('a:fa-1', 'B', 6, lookup('fa-1')),
          fb('a:fa-1', 'B', 1, lookup('fa-1')),
          fb('l:early', 'A', 7, { values: { plan: 'pro' }, lookup: [], assignmentId: null }),
        ],
      });
      read = await readBack(id, 'plan');
      assert.deepEqual(read.sums, {
        'pro/A/rating/mean': [2, 9, 53],
        'team/B/rating/mean': [2, 4, 10],
      });
      // The whole analysis counts every value once, at its latest.
      const whole = (await store.readRollups(id)).metrics.filter((m) => m.metric === 'rating');
      const byVariant = Object.fromEntries(whole.map((m) => [m.variantKey, [m.n, m.sum, m.sumSquares]]));
      assert.deepEqual(byVariant, { A: [3, 14, 78], B: [2, 4, 10] });
    });
  });
}

// Segments per user (issue 33 item 3): users' sums and sketch bins per segment value, kept at write time
// by results (own values, their assignment's, waiting for a client's exposure) and feedback (replacing), and
// the same after a rebuild from raw rows. Expected sums are computed here from what was sent.
for (const backend of backends) {
  describe(`store contract, segments per user of issue 33: ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    after(async () => store?.close());

    /** One value as the segment rows count it: where, whose, and what (the final state of its target). */
    interface Counted {
      segments: Record<string, string>;
      variantKey: string;
      userId: string | null;
      metric: string;
      kind: 'mean' | 'proportion';
      x: number;
    }

    /** Per-call sums, per-user sums and bins per value, variant, metric and kind, from the counted values. */
    function expected(counted: Iterable<Counted>, key: string) {
      const calls: Record<string, Moments> = {};
      const users = new Map<string, Map<string, [number, number]>>();
      const bins: Record<string, number> = {};
      for (const c of counted) {
        const value = c.segments[key];
        if (value === undefined) continue;
        const at = `${value}/${c.variantKey}/${c.metric}/${c.kind}`;
        calls[at] ??= { n: 0, sum: 0, sumSquares: 0 };
        const m = calls[at];
        m.n += 1;
        m.sum += c.x;
        m.sumSquares += c.x * c.x;
        if (c.userId !== null) {
          const byUser = users.get(at) ?? new Map<string, [number, number]>();
          const [sx, sy] = byUser.get(c.userId) ?? [0, 0];
          byUser.set(c.userId, [sx + c.x, sy + 1]);
          users.set(at, byUser);
        }
        if (c.kind === 'mean') {
          const b = sketchBin(c.x);
          const bin = `${value}/${c.variantKey}/${c.metric} ${b.side}:${b.key}`;
          bins[bin] = (bins[bin] ?? 0) + 1;
        }
      }
      const units = Object.fromEntries(
        [...users].map(([at, byUser]) => [at, unitSums([...byUser.values()])]),
      );
      return { calls, units, bins };
    }

    /** The same three, as readSegments answers them (rows that hold nothing left out). */
    async function read(experimentId: number, key: string) {
      const rows = await store.readSegments(experimentId, key);
      const calls: Record<string, Moments> = {};
      for (const m of rows.metrics) {
        if (m.n === 0) continue;
        calls[`${m.value}/${m.variantKey}/${m.metric}/${m.kind}`] = {
          n: m.n,
          sum: m.sum,
          sumSquares: m.sumSquares,
        };
      }
      const units: Record<string, UnitStats> = {};
      for (const u of rows.units) {
        const { units: n, sumX, sumX2, sumY, sumY2, sumXY } = u;
        if (n !== 0)
          units[`${u.value}/${u.variantKey}/${u.metric}/${u.kind}`] = {
            units: n,
            sumX,
            sumX2,
            sumY,
            sumY2,
            sumXY,
          };
      }
      const bins: Record<string, number> = {};
      for (const b of rows.sketches)
        bins[`${b.value}/${b.variantKey}/${b.metric} ${b.side}:${b.bin}`] = b.count;
      return { calls, units, bins };
    }

    async function assertRows(experimentId: number, counted: Iterable<Counted>, what: string) {
      const values = [...counted];
      for (const key of ['plan', 'region']) {
        const want = expected(values, key);
        const got = await read(experimentId, key);
        assertSameStats(got.calls, want.calls, `${what} ${key} per call`);
        assertSameUnits(got.units, want.units);
        assert.deepEqual(got.bins, want.bins, `${what} ${key} sketch bins`);
        assert.ok(Object.keys(want.units).length > 0 && Object.keys(want.bins).length > 0, `${what} ${key}`);
      }
    }

    test("users' sums and sketch bins per value follow results, waiting results and feedback replacements; a rebuild equals them", async () => {
      store = await backend.open();
      const { id } = await store.insertExperiment({
        ...sticky('segment-units'),
        segments: ['plan', 'region'],
      });
      const random = seededRandom(33);
      const users = Array.from({ length: 6 }, (_, i) => ({ id: `su-${i}`, variant: i % 2 ? 'B' : 'A' }));
      const plans = ['free', 'pro'];
      /** By target and metric: what counts now (a feedback replacement overwrites its target's). */
      const counted = new Map<string, Counted>();
      const countResult = (r: NewResult, segments: Record<string, string>) => {
        for (const [metric, v] of Object.entries(
          JSON.parse(r.metrics!) as Record<string, number | boolean>,
        )) {
          const kind = typeof v === 'boolean' ? 'proportion' : 'mean';
          const x = typeof v === 'boolean' ? (v ? 1 : 0) : v;
          counted.set(`l:${r.logId} ${metric}`, {
            segments,
            variantKey: r.variantKey,
            userId: r.unit ? r.userId : null,
            metric,
            kind,
            x,
          });
        }
      };
      const logged: Array<{ result: NewResult; segments: Record<string, string> }> = [];
      // Each user's assign stored its plan (server-issued ids); the result's own context gives the region
      // and, for some calls, another plan (a user with calls in both plans is a unit in each).
      const served = users.map((u, i) => ({
        ...exposure(id, u.variant),
        assignmentId: `sa-${u.id}`,
        userId: u.id,
        unit: true,
        context: { plan: plans[i % 2]! },
        segments: { plan: plans[i % 2]! },
      }));
      await store.appendBatch({ results: [], exposures: toExposureBatches(served) });
      const waiting: Array<{ result: NewResult; plan: string }> = [];
      for (let b = 0; b < 3; b++) {
        const results: NewResult[] = [];
        for (let k = 0; k < 8; k++) {
          const u = users[Math.floor(random() * users.length)]!;
          const anonymous = k === 7;
          const region = random() < 0.5 ? 'eu' : 'us';
          const ownPlan = random() < 0.25 ? plans[Math.floor(random() * 2)]! : undefined;
          const values: Record<string, string> =
            ownPlan === undefined ? { region } : { region, plan: ownPlan };
          const r = result(id, {
            userId: anonymous ? null : u.id,
            variantKey: u.variant,
            unit: !anonymous,
            assignmentId: `sa-${u.id}`,
            metrics: JSON.stringify({ latency: Math.round(random() * 400) + 1, ok: random() < 0.6 }),
            segments: { values, lookup: ownPlan === undefined ? ['plan'] : [], wait: false },
          });
          results.push(r);
          const planOf = ownPlan ?? served.find((e) => e.assignmentId === `sa-${u.id}`)!.segments.plan;
          logged.push({ result: r, segments: { region, plan: planOf } });
        }
        // A client's result before its exposure: counted in its plan once the exposure comes (batch 2), and
        // one whose exposure never comes: in its region only.
        const client = result(id, {
          userId: users[b]!.id,
          variantKey: users[b]!.variant,
          unit: true,
          assignmentId: `ca-${b}`,
          metrics: JSON.stringify({ latency: 50 + b }),
          segments: { values: { region: 'eu' }, lookup: ['plan'], wait: true },
        });
        results.push(client);
        if (b < 2) waiting.push({ result: client, plan: plans[b]! });
        else logged.push({ result: client, segments: { region: 'eu' } });
        const exposures =
          b === 2
            ? toExposureBatches(
                waiting.map((w) => ({
                  ...exposure(id, w.result.variantKey),
                  assignmentId: w.result.assignmentId!,
                  context: { plan: w.plan },
                  segments: { plan: w.plan },
                  byClient: true,
                })),
              )
            : [];
        await store.appendBatch({ results, exposures });
      }
      for (const w of waiting) logged.push({ result: w.result, segments: { region: 'eu', plan: w.plan } });
      for (const l of logged) countResult(l.result, l.segments);

      // Feedback on results (their own values and their assignment's plan) and on assignments; then
      // corrections: another value, and a change of kind.
      const rate = (target: NewResult, value: number, kind: 'mean' | 'proportion' = 'mean'): NewFeedback => ({
        feedbackId: `fb-su-${++counter}`,
        experimentId: id,
        target: `l:${target.logId}`,
        version: 1,
        variantKey: target.variantKey,
        userId: target.userId,
        unit: target.unit === true,
        values: [{ metric: 'rating', kind, value }],
        comment: null,
        createdAt: HOUR_2,
        segments: { ...target.segments!, assignmentId: target.assignmentId } as TargetSegments,
      });
      const thumb = (u: (typeof users)[number], value: number): NewFeedback => ({
        feedbackId: `fb-su-${++counter}`,
        experimentId: id,
        target: `a:sa-${u.id}`,
        version: 1,
        variantKey: u.variant,
        userId: u.id,
        unit: true,
        values: [{ metric: 'thumbs', kind: 'proportion', value }],
        comment: null,
        createdAt: HOUR_2,
        segments: { values: {}, lookup: ['plan'], assignmentId: `sa-${u.id}` },
      });
      const rated = logged.slice(0, 10);
      const feedback = (round: number) => [
        ...rated.map((l, i) =>
          round === 1 && i % 3 === 0 ? rate(l.result, 1, 'proportion') : rate(l.result, (i + round * 3) % 5),
        ),
        ...users.map((u, i) => thumb(u, (i + round) % 2)),
      ];
      const countFeedback = (round: number) => {
        for (const f of feedback(round)) {
          const target = f.target.startsWith('l:')
            ? logged.find((l) => `l:${l.result.logId}` === f.target)!
            : undefined;
          const u = users.find((x) => `a:sa-${x.id}` === f.target);
          const segments = target
            ? target.segments
            : { plan: served.find((e) => e.assignmentId === `sa-${u!.id}`)!.segments.plan };
          const v = f.values[0]!;
          counted.set(`${f.target} ${v.metric}`, {
            segments,
            variantKey: f.variantKey,
            userId: f.unit ? f.userId : null,
            metric: v.metric,
            kind: v.kind,
            x: v.value,
          });
        }
      };
      await store.appendBatch({ results: [], exposures: [], feedback: feedback(0) });
      await store.appendBatch({ results: [], exposures: [], feedback: feedback(1) });
      countFeedback(1);
      await assertRows(id, counted.values(), 'live');

      await store.rebuildRollups(id);
      await assertRows(id, counted.values(), 'rebuilt');

      // Writes after the rebuild move the rebuilt sums as they moved the live ones.
      const late = users.map((u) =>
        result(id, {
          userId: u.id,
          variantKey: u.variant,
          unit: true,
          assignmentId: `sa-${u.id}`,
          metrics: JSON.stringify({ latency: 7 }),
          segments: { values: { region: 'us' }, lookup: ['plan'], wait: false },
        }),
      );
      await store.appendBatch({ results: late, exposures: [] });
      for (const r of late) {
        countResult(r, {
          region: 'us',
          plan: served.find((e) => e.assignmentId === r.assignmentId)!.segments.plan,
        });
      }
      await assertRows(id, counted.values(), 'after the rebuild');
    });
  });
}

// Results written before migration 018 recorded no segment values: a rebuild fills the per-user rows in from
// their own context's and their assignment's values of the keys declared now (what live counted, when the
// keys were declared before the results, as here).
for (const backend of sqlBackends) {
  test(`${backend.name}: results from before migration 018 get their segments' per-user sums and bins from a rebuild`, {
    skip: backend.skip,
  }, async () => {
    const db = await openDatabase(await backend.target());
    await migrate(db);
    const store = new SqlStore(db);
    try {
      const { id } = await store.insertExperiment({ ...sticky('before-018'), segments: ['plan', 'region'] });
      const served = ['u1', 'u2', 'u3'].map((userId, i) => ({
        ...exposure(id, i % 2 ? 'B' : 'A'),
        assignmentId: `b18-${userId}`,
        userId,
        context: { plan: i === 2 ? 'pro' : 'free' },
        segments: { plan: i === 2 ? 'pro' : 'free' },
      }));
      await store.appendBatch({ results: [], exposures: toExposureBatches(served) });
      const results = Array.from({ length: 18 }, (_, k) => {
        const e = served[k % 3]!;
        const own: Record<string, string> =
          k % 4 === 0 ? { region: 'eu', plan: 'team' } : { region: k % 2 ? 'us' : 'eu' };
        return result(id, {
          userId: e.userId,
          variantKey: e.variantKey,
          unit: true,
          assignmentId: e.assignmentId,
          context: JSON.stringify(own),
          metrics: JSON.stringify({ latency: 10 + k * 3, ok: k % 3 === 0 }),
          segments: { values: own, lookup: 'plan' in own ? [] : ['plan'], wait: false },
        });
      });
      await store.appendBatch({ results, exposures: [] });
      const live = {
        plan: await store.readSegments(id, 'plan'),
        region: await store.readSegments(id, 'region'),
      };
      assert.ok(live.plan.units.length > 0 && live.plan.sketches.length > 0);
      // As a release before 018 left them: no record on the results, no per-user rows, the marker after them.
      await db.readWrite
        .updateTable('results')
        .set({ segments: null })
        .where('experiment_id', '=', id)
        .execute();
      const last = await db.readWrite
        .selectFrom('results')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .executeTakeFirst();
      await db.readWrite
        .updateTable('segments_recorded')
        .set({ after_seq: Number(last!.seq) })
        .execute();
      for (const table of ['segment_unit_sums', 'segment_unit_rollups', 'segment_sketch_bins'] as const) {
        await db.readWrite.deleteFrom(table).execute();
      }
      assert.deepEqual((await store.readSegments(id, 'plan')).units, []);
      await store.rebuildRollups(id);
      for (const key of ['plan', 'region'] as const) {
        const rebuilt = await store.readSegments(id, key);
        const units = (rows: UnitRollup[]) =>
          unitStats(
            rows.map((u) => ({ ...u, variantKey: `${(u as { value?: string }).value}/${u.variantKey}` })),
          );
        assertSameUnits(units(rebuilt.units), units(live[key].units));
        const bins = (rows: typeof rebuilt.sketches) =>
          Object.fromEntries(
            rows.map((b) => [`${b.value}/${b.variantKey}/${b.metric} ${b.side}:${b.bin}`, b.count]),
          );
        assert.deepEqual(bins(rebuilt.sketches), bins(live[key].sketches), `${key} bins`);
        const calls = (rows: MetricRollup[]) =>
          statsOf(
            rows.map((m) => ({ ...m, variantKey: `${(m as { value?: string }).value}/${m.variantKey}` })),
          );
        assertSameStats(calls(rebuilt.metrics), calls(live[key].metrics), `${key} per call`);
      }
    } finally {
      await store.close();
    }
  });
}

// The history of issue 27: events written with the change they record, in one transaction, read oldest first.
for (const backend of backends) {
  describe(`store contract, history of issue 27: ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store & EventStore;
    before(async () => {
      store = (await backend.open()) as Store & EventStore;
    });
    after(async () => store?.close());
    let n = 0;
    const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
    const source = (ms: number, actor: Actor = ROOT_ACTOR): EventSource => ({ actor, at: at(ms), newId });

    test('insert, update and delete write their events; listEvents reads them back whole, oldest first', async () => {
      const slug = `hist-${++n}`;
      const e = experiment(slug);
      const created = experimentCreated(source(0), e);
      await store.insertExperiment(e, undefined, created);
      const bot: Actor = { kind: 'key', id: 'k-1', name: 'bot' };
      await store.updateExperiment(
        slug,
        (cur) => ({ ...cur, name: 'renamed', status: 'running', active: true }),
        (before, after) => experimentChanged(source(1, bot), before, after),
      );
      await store.deleteExperiment(
        slug,
        () => {},
        (deleted) => experimentDeleted(source(2, MONITOR_ACTOR), deleted),
      );
      const events = await store.listEvents({ experiment: slug, limit: 10 });
      assert.deepEqual(
        events.map(({ seq: _seq, ...rest }) => rest),
        [
          created[0],
          {
            id: events[1]!.id,
            type: 'experiment.updated',
            at: at(1),
            actor: bot,
            experiment: slug,
            data: { before: { name: slug }, after: { name: 'renamed' } },
          },
          {
            id: events[2]!.id,
            type: 'experiment.status_changed',
            at: at(1),
            actor: bot,
            experiment: slug,
            data: { from: 'draft', to: 'running' },
          },
          {
            id: events[3]!.id,
            type: 'experiment.deleted',
            at: at(2),
            actor: MONITOR_ACTOR,
            experiment: slug,
            data: events[3]!.data,
          },
        ],
      );
      assert.equal((events[3]!.data.experiment as { name: string }).name, 'renamed');
      const seqs = events.map((x) => x.seq);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      );
      // Paged from a position, filtered by type (exact and prefix) and time.
      const rest = await store.listEvents({ experiment: slug, afterSeq: seqs[1], limit: 1 });
      assert.deepEqual(
        rest.map((x) => x.type),
        ['experiment.status_changed'],
      );
      const exact = await store.listEvents({
        experiment: slug,
        type: { exact: 'experiment.updated' },
        limit: 10,
      });
      assert.deepEqual(
        exact.map((x) => x.seq),
        [seqs[1]],
      );
      const prefix = await store.listEvents({ experiment: slug, type: { prefix: 'experiment.' }, limit: 10 });
      assert.equal(prefix.length, 4);
      const none = await store.listEvents({
        experiment: slug,
        type: { prefix: 'experiment.status.' },
        limit: 10,
      });
      assert.equal(
        none.length,
        0,
        'a prefix is whole dotted words: experiment.status. is not experiment.status_',
      );
      const since = await store.listEvents({ experiment: slug, since: at(1), limit: 10 });
      assert.deepEqual(
        since.map((x) => x.seq),
        seqs.slice(1),
      );
    });

    test('a change that fails writes no event, and an event that fails undoes its change', async () => {
      const slug = `atomic-${++n}`;
      const first = experimentCreated(source(0), experiment(slug));
      await store.insertExperiment(experiment(slug), undefined, first);
      // A refused change (the callback throws) and a refused delete (the guard throws): nothing written.
      await assert.rejects(
        store.updateExperiment(
          slug,
          () => {
            throw new ConflictError('no');
          },
          (b, a) => experimentChanged(source(1), b, a),
        ),
        ConflictError,
      );
      await assert.rejects(
        store.deleteExperiment(
          slug,
          () => {
            throw new ConflictError('no');
          },
          (d) => experimentDeleted(source(1), d),
        ),
        ConflictError,
      );
      await assert.rejects(
        store.insertExperiment(experiment(slug), undefined, experimentCreated(source(1), experiment(slug))),
        ConflictError,
      );
      assert.equal((await store.listEvents({ experiment: slug, limit: 10 })).length, 1);
      // An event the store cannot keep (an id it holds already) takes its change down with it.
      const reused = (type: string) => [{ ...first[0]!, type }];
      const other = `atomic-${++n}`;
      await assert.rejects(
        store.insertExperiment(experiment(other), undefined, reused('experiment.created')),
      );
      assert.equal(await store.findExperiment(other), undefined, 'the insert was undone');
      await assert.rejects(
        store.updateExperiment(
          slug,
          (cur) => ({ ...cur, name: 'never' }),
          () => reused('experiment.updated'),
        ),
      );
      assert.equal((await store.findExperiment(slug))?.experiment.name, slug, 'the update was undone');
      await assert.rejects(
        store.deleteExperiment(
          slug,
          () => {},
          () => reused('experiment.deleted'),
        ),
      );
      assert.ok(await store.findExperiment(slug), 'the delete was undone');
      assert.equal((await store.listEvents({ experiment: slug, limit: 10 })).length, 1);
    });

    test('recordEvents keeps events of no change (the monitor’s findings)', async () => {
      const found = {
        ...experimentCreated(source(5, MONITOR_ACTOR), experiment('x'))[0]!,
        type: 'guardrail.failed',
      };
      await store.recordEvents([found]);
      const read = await store.listEvents({ type: { exact: 'guardrail.failed' }, limit: 10 });
      assert.deepEqual(
        read.map(({ seq: _seq, ...rest }) => rest),
        [found],
      );
    });
  });
}

// Keys are SQL only (the in-memory store has none).
for (const backend of sqlBackends) {
  test(`${backend.name}: a key's creation and revocation write their events with it; an unknown id writes none`, {
    skip: backend.skip,
  }, async () => {
    const store = await openStore(await backend.target());
    try {
      const key: StoredKey = {
        id: newId(),
        name: 'agent',
        scopes: ['read'],
        experiments: null,
        prefix: 'ask_x',
        hash: 'hash-x',
        rateLimitPerSecond: null,
        createdAt: NOW,
        lastUsedAt: null,
      };
      const src = { actor: ROOT_ACTOR, at: NOW, newId };
      const created = keyCreated(src, key);
      await store.insertKey(key, created);
      assert.equal(await store.revokeKey('no-such-key', NOW, (k) => keyRevoked(src, k)), false);
      assert.equal(await store.revokeKey(key.id, NOW, (k) => keyRevoked(src, k)), true);
      const events = await store.listEvents({ type: { prefix: 'key.' }, limit: 10 });
      assert.deepEqual(
        events.map((e) => [e.type, e.data]),
        [
          ['key.created', created[0]!.data],
          ['key.revoked', { id: key.id, name: 'agent' }],
        ],
      );
      // A key whose event cannot be kept is not created.
      const other = { ...key, id: newId(), hash: 'hash-y' };
      await assert.rejects(store.insertKey(other, created));
      assert.equal(
        (await store.listKeys()).some((k) => k.id === other.id),
        false,
      );
    } finally {
      await store.close();
    }
  });
}
