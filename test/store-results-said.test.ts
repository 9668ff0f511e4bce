// The store contract for results read back with what was said about them (issue 26), on real SQLite
// files, PostgreSQL (when reachable) and the memory fake: feedback on the logId over feedback on the
// assignment, the assignment's context, commit order both ways, a metric's value (feedback first, own
// number, true/false as 1/0) to keep and to sort by, pages that continue exactly. Expected answers are
// computed here from what was written. Migration 011 fills the contexts of exposures stored before it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createExperiment } from '../src/core/experiment.js';
import type { Exposure } from '../src/core/exposure.js';
import type { JsonObject } from '../src/core/json.js';
import type { NewFeedback, NewResult } from '../src/core/writes.js';
import { toExposureBatches } from '../src/ingest/exposure-queue.js';
import { type DatabaseTarget, openDatabase, openStore } from '../src/store/index.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { loadMigrations, migrate } from '../src/store/migrate.js';
import type { Result, ResultQuery } from '../src/store/result-types.js';
import { SqlStore } from '../src/store/sql-store.js';
import type { Store } from '../src/store/store.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { seededRandom } from './helpers/random.js';

const dir = mkdtempSync(join(tmpdir(), 'agentsplit-said-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const databases: TestDatabase[] = [];
after(async () => {
  for (const d of databases) await d.drop();
});
const pgSkip = !(await postgresReachable());
const sqlBackends: Array<{ name: string; target: () => Promise<DatabaseTarget>; skip?: boolean }> = [
  { name: 'SQLite file', target: async () => ({ kind: 'sqlite', path: join(dir, `${Math.random()}.db`) }) },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    target: async () => {
      const db = await createTestDatabase('said');
      databases.push(db);
      return { kind: 'postgres', url: db.url };
    },
  },
];
const backends: Array<{ name: string; open: () => Promise<Store>; skip?: boolean }> = [
  ...sqlBackends.map((b) => ({ name: b.name, skip: b.skip, open: async () => openStore(await b.target()) })),
  { name: 'in-memory store', open: async () => new MemoryStore() },
];

const NOW = '2026-03-01T12:00:00.000Z';
/** A name SQL must not take as a path: quotes, a dot, a dollar and a colon. */
const ODD = 'q"ual.$:ity';
const uuid = (i: number) => `0197${String(i).padStart(4, '0')}-0000-7000-8000-${String(i).padStart(12, '0')}`;

interface Written {
  results: NewResult[];
  /** By target ('l:<logId>' or 'a:<uuid>'): metric → value as read back. */
  said: Map<string, Record<string, number | boolean>>;
  contexts: Map<string, Record<string, unknown>>;
}

async function writeSome(store: Store, experimentId: number): Promise<Written> {
  const random = seededRandom(7);
  const results: NewResult[] = [];
  const exposures: Exposure[] = [];
  const contexts = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < 60; i++) {
    const withAssignment = i % 3 !== 2;
    const assignmentId = withAssignment ? `${uuid(i)}.1.${i % 2}.dQ==.0000000${i % 10}` : null;
    if (withAssignment && i % 2 === 0) {
      const context = { plan: i % 4 === 0 ? 'pro' : 'free', i };
      contexts.set(uuid(i), context);
      exposures.push({
        assignmentId: assignmentId!,
        experimentId,
        version: 1,
        variantKey: 'A',
        userId: 'u',
        context,
        createdAt: NOW,
      });
    }
    const metrics: Record<string, unknown> = {};
    const r = random();
    if (r < 0.6) metrics.rating = Math.round(random() * 8) / 2;
    else if (r < 0.7) metrics.rating = random() < 0.5;
    else if (r < 0.8) metrics.rating = 'n/a';
    if (i % 5 === 0) metrics[ODD] = i;
    results.push({
      logId: `${uuid(1000 + i)}`,
      experimentId,
      version: 1,
      variantKey: i % 2 ? 'A' : 'B',
      knownVariant: true,
      userId: `u${i}`,
      assignmentId,
      input: JSON.stringify({ q: i % 4 }),
      output: null,
      metrics: JSON.stringify(metrics),
      context: null,
      timestamp: null,
      createdAt: new Date(Date.parse(NOW) + i * 1000).toISOString(),
    });
  }
  // Exposures with no context and one sent again with another context (the first stays).
  exposures.push({ ...exposures[0]!, context: { plan: 'other' } });
  await store.appendBatch({ results, exposures: toExposureBatches(exposures) });
  const said = new Map<string, Record<string, number | boolean>>();
  const feedback: NewFeedback[] = [];
  results.forEach((res, i) => {
    const give = (target: string, values: Record<string, number | boolean>) => {
      said.set(target, { ...said.get(target), ...values });
      feedback.push({
        feedbackId: `fb-${feedback.length}`,
        experimentId,
        target,
        version: 1,
        variantKey: res.variantKey,
        userId: res.userId,
        unit: false,
        values: Object.entries(values).map(([metric, v]) => ({
          metric,
          kind: typeof v === 'boolean' ? ('proportion' as const) : ('mean' as const),
          value: typeof v === 'boolean' ? (v ? 1 : 0) : v,
        })),
        comment: null,
        createdAt: NOW,
      });
    };
    if (i % 4 === 0) give(`l:${res.logId}`, { rating: (i % 7) - 1, thumbs: i % 8 === 0 });
    if (i % 6 === 1 && res.assignmentId) give(`a:${res.assignmentId.slice(0, 36)}`, { rating: 9, [ODD]: -i });
  });
  await store.appendBatch({ results: [], exposures: [], feedback });
  return { results, said, contexts };
}

function expectedOf(w: Written): Array<{
  r: NewResult;
  seq: number;
  feedback: Record<string, number | boolean>;
  context: Record<string, unknown> | null;
}> {
  return w.results.map((r, seq) => {
    const uuidPart = r.assignmentId?.slice(0, 36);
    return {
      r,
      seq,
      feedback: { ...(uuidPart ? w.said.get(`a:${uuidPart}`) : {}), ...w.said.get(`l:${r.logId}`) },
      context: (uuidPart && w.contexts.get(uuidPart)) || null,
    };
  });
}

function expectedValue(e: ReturnType<typeof expectedOf>[number], name: string): number | undefined {
  const asNumber = (v: unknown) =>
    typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : undefined;
  if (name in e.feedback) return asNumber(e.feedback[name]);
  return asNumber((JSON.parse(e.r.metrics!) as Record<string, unknown>)[name]);
}

async function walk(store: Store, q: Omit<ResultQuery, 'limit'>, limit: number): Promise<Result[]> {
  const out: Result[] = [];
  let afterSeq: number | undefined;
  let afterValue: number | undefined;
  for (;;) {
    const page = await store.listResults({ ...q, afterSeq, afterValue, limit });
    out.push(...page.results);
    if (!page.hasMore) return out;
    afterSeq = page.lastSeq!;
    afterValue = page.lastValue ?? undefined;
  }
}

for (const backend of backends) {
  describe(`results with what was said: ${backend.name}`, { skip: backend.skip }, () => {
    test('contexts found in the exposures: between reads, over more than one indexing step, the first kept', async () => {
      const store = await backend.open();
      try {
        const { id } = await store.insertExperiment(
          createExperiment({ slug: 'ctx', variants: [{ key: 'A', payload: {}, trafficPercent: 100 }] }, NOW),
        );
        const idOf = (i: number) => `${uuid(i)}.1.0.dQ==.00000000`;
        const exposure = (i: number, context: JsonObject | null): Exposure => ({
          assignmentId: idOf(i),
          experimentId: id,
          version: 1,
          variantKey: 'A',
          userId: `u${i}`,
          context,
          createdAt: NOW,
        });
        const result = (i: number): NewResult => ({
          logId: uuid(900_000 + i),
          experimentId: id,
          version: 1,
          variantKey: 'A',
          knownVariant: true,
          userId: `u${i}`,
          assignmentId: idOf(i),
          input: null,
          output: null,
          metrics: null,
          context: null,
          timestamp: null,
          createdAt: NOW,
        });
        const contextOf = async (logIds: number[]) => {
          const page = await store.listResults({ experimentId: id, limit: 1000, order: 'desc' });
          const byLog = new Map(page.results.map((r) => [r.logId, r.assignmentContext]));
          return logIds.map((i) => byLog.get(uuid(900_000 + i)));
        };
        // Round 1: a few, read at once.
        await store.appendBatch({
          results: [result(1)],
          exposures: toExposureBatches([exposure(1, { round: 1 })]),
        });
        assert.deepEqual(await contextOf([1]), [{ round: 1 }]);
        // Round 2: 25,000 exposures in 25 batches (more than one indexing step), some without a context,
        // and assignment 1 sent again with another context (the first is kept).
        for (let b = 0; b < 25; b++) {
          const batch: Exposure[] = [];
          for (let i = 0; i < 1000; i++) {
            const n = 10_000 + b * 1000 + i;
            batch.push(exposure(n, n % 3 === 0 ? null : { n }));
          }
          if (b === 3) batch.push(exposure(1, { round: 2 }));
          await store.appendBatch({ results: [], exposures: toExposureBatches(batch) });
        }
        await store.appendBatch({
          results: [10_001, 10_003, 34_998, 34_999].map(result),
          exposures: [],
        });
        assert.deepEqual(await contextOf([1, 10_001, 10_003, 34_998, 34_999]), [
          { round: 1 },
          { n: 10_001 },
          { n: 10_003 },
          null,
          { n: 34_999 },
        ]);
      } finally {
        await store.close();
      }
    });

    test('feedback, contexts, order, metric filters and sort agree with what was written', async () => {
      const store = await backend.open();
      try {
        const { id } = await store.insertExperiment(
          createExperiment(
            {
              slug: 'said',
              variants: [
                { key: 'A', payload: {}, trafficPercent: 50 },
                { key: 'B', payload: {}, trafficPercent: 50 },
              ],
            },
            NOW,
          ),
        );
        const written = await writeSome(store, id);
        const expected = expectedOf(written);
        const all = await walk(store, { experimentId: id }, 7);
        assert.deepEqual(
          all.map((r) => r.logId),
          written.results.map((r) => r.logId),
        );
        for (const [i, r] of all.entries()) {
          assert.deepEqual(r.feedback, expected[i]!.feedback, `feedback of result ${i}`);
          assert.deepEqual(r.assignmentContext, expected[i]!.context, `context of result ${i}`);
        }
        assert.ok(
          all.some((r) => Object.keys(r.feedback).length > 0) &&
            all.some((r) => r.assignmentContext !== null),
        );
        const ids = (rs: Result[]) => rs.map((r) => r.logId);
        assert.deepEqual(ids(await walk(store, { experimentId: id, order: 'desc' }, 8)), ids(all).reverse());
        assert.deepEqual(
          ids(await walk(store, { experimentId: id, order: 'desc', variantKey: 'A' }, 4)),
          written.results
            .filter((r) => r.variantKey === 'A')
            .map((r) => r.logId)
            .reverse(),
        );
        for (const name of ['rating', ODD, 'thumbs', 'absent']) {
          for (const [min, max] of [
            [undefined, undefined],
            [undefined, 1],
            [0.5, 3],
            [9, 9],
          ] as const) {
            const kept = expected.filter((e) => {
              const v = expectedValue(e, name);
              return v !== undefined && (min === undefined || v >= min) && (max === undefined || v <= max);
            });
            const what = `${name} in [${min}, ${max}]`;
            for (const order of ['asc', 'desc'] as const) {
              const byTime = order === 'asc' ? kept : [...kept].reverse();
              assert.deepEqual(
                ids(await walk(store, { experimentId: id, order, metric: { name, min, max } }, 5)),
                byTime.map((e) => e.r.logId),
                `${what} ${order}`,
              );
              const sign = order === 'asc' ? 1 : -1;
              const byValue = [...kept].sort(
                (a, b) => sign * (expectedValue(a, name)! - expectedValue(b, name)! || a.seq - b.seq),
              );
              assert.deepEqual(
                ids(
                  await walk(
                    store,
                    { experimentId: id, order, metric: { name, min, max, byValue: true } },
                    3,
                  ),
                ),
                byValue.map((e) => e.r.logId),
                `${what} sorted ${order}`,
              );
            }
          }
        }
      } finally {
        await store.close();
      }
    });

    test('listCompared: one variant newest first, with its score (feedback first, then its own)', async () => {
      const store = await backend.open();
      try {
        const { id } = await store.insertExperiment(
          createExperiment(
            {
              slug: 'compared',
              variants: [
                { key: 'A', payload: {}, trafficPercent: 50 },
                { key: 'B', payload: {}, trafficPercent: 50 },
              ],
            },
            NOW,
          ),
        );
        const expected = expectedOf(await writeSome(store, id))
          .filter((e) => e.r.variantKey === 'A')
          .reverse();
        for (const metric of ['rating', ODD]) {
          const rows = await store.listCompared({ experimentId: id, variantKey: 'A', metric, limit: 1000 });
          assert.deepEqual(
            rows.map((r) => [r.logId, r.input, r.output, r.createdAt, r.score]),
            expected.map((e) => [
              e.r.logId,
              JSON.parse(e.r.input!),
              null,
              e.r.createdAt,
              expectedValue(e, metric) ?? null,
            ]),
            metric,
          );
        }
        const all = await store.listCompared({ experimentId: id, variantKey: 'A', limit: 1000 });
        assert.ok(all.every((r) => r.score === null));
        // Pages: before a position, up to a position, a time range.
        const seqs = all.map((r) => r.seq);
        const before = await store.listCompared({
          experimentId: id,
          variantKey: 'A',
          beforeSeq: seqs[4],
          limit: 3,
        });
        assert.deepEqual(
          before.map((r) => r.seq),
          seqs.slice(5, 8),
        );
        const upto = await store.listCompared({
          experimentId: id,
          variantKey: 'A',
          uptoSeq: seqs[10],
          limit: 1000,
        });
        assert.deepEqual(
          upto.map((r) => r.seq),
          seqs.slice(10),
        );
        const since = expected[2]!.r.createdAt;
        const until = expected[0]!.r.createdAt;
        const timed = await store.listCompared({
          experimentId: id,
          variantKey: 'A',
          since,
          until,
          limit: 1000,
        });
        assert.deepEqual(
          timed.map((r) => r.logId),
          [expected[1]!.r.logId, expected[2]!.r.logId],
        );
      } finally {
        await store.close();
      }
    });
  });
}

for (const backend of sqlBackends) {
  test(`${backend.name}: migration 012 fills the contexts of exposures stored before it (both stored forms, legacy rows)`, {
    skip: backend.skip,
  }, async () => {
    const db = await openDatabase(await backend.target());
    try {
      await db.runScript(
        'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
      );
      for (const m of loadMigrations(db.dialect).filter((m) => m.version <= 11)) {
        await db.runScript(m.sql);
        await db.runScript(`INSERT INTO schema_migrations VALUES (${m.version}, '${m.name}', '${NOW}')`);
      }
      // The experiment as the schema of migration 011 holds it (the store writes today's columns).
      const made = createExperiment(
        { slug: 'before-012', variants: [{ key: 'A', payload: {}, trafficPercent: 100 }] },
        NOW,
      );
      const inserted = await db.readWrite
        .insertInto('experiments')
        .values({
          slug: made.slug,
          name: made.name,
          description: made.description,
          status: made.status,
          assignment: made.assignment,
          seed: made.seed,
          variants: JSON.stringify(made.variants),
          version: made.version,
          created_at: NOW,
          updated_at: NOW,
        } as never)
        .returning('id')
        .executeTakeFirstOrThrow();
      const id = Number(inserted.id);
      const forms = [
        [`${uuid(1)}.1.0.dQ==.00000001`, 'A', 'u', { plan: 'pro', deep: { a: [1, 'é'] } }, NOW],
        [`${uuid(2)}.1.0.dQ==.00000002`, 'A', 'u', null, NOW],
        [`${uuid(3)}.1.0.dQ==.00000003`, 'A', NOW, { userId: 'u', context: { plan: 'free' } }],
        [`${uuid(4)}.1.0.dQ==.00000004`, 'A', NOW, { userId: 'u' }],
      ];
      await db.readWrite
        .insertInto('exposure_batches')
        .values({
          experiment_id: id,
          experiment_version: 1,
          count: 4,
          exposures: JSON.stringify(forms),
        } as never)
        .execute();
      await db.readWrite
        .insertInto('exposures')
        .values({
          assignment_id: `${uuid(5)}.1.0.dQ==.00000005`,
          experiment_id: id,
          experiment_version: 1,
          variant_key: 'A',
          user_id: 'u',
          context: JSON.stringify({ plan: 'legacy' }),
          created_at: NOW,
        } as never)
        .execute();
      const results: NewResult[] = [1, 2, 3, 4, 5, 6].map((i) => ({
        logId: uuid(100 + i),
        experimentId: id,
        version: 1,
        variantKey: 'A',
        knownVariant: true,
        userId: 'u',
        assignmentId: `${uuid(i)}.1.0.dQ==.0000000${i}`,
        input: null,
        output: null,
        metrics: null,
        context: null,
        timestamp: null,
        createdAt: NOW,
      }));
      await db.readWrite
        .insertInto('results')
        .values(
          results.map((r) => ({
            log_id: r.logId,
            experiment_id: id,
            experiment_version: 1,
            variant_key: 'A',
            known_variant: 1,
            user_id: 'u',
            assignment_id: r.assignmentId,
            input: null,
            output: null,
            metrics: null,
            context: null,
            client_timestamp: null,
            created_at: NOW,
            metrics_over_cap: null,
            assigned_variant: null,
          })) as never,
        )
        .execute();
      // Every migration after 011 runs now (012 and whatever came after it).
      const later = loadMigrations(db.dialect)
        .map((m) => m.version)
        .filter((v) => v > 11);
      assert.deepEqual(await migrate(db), later);
      const store = new SqlStore(db);
      const page = await store.listResults({ experimentId: id, limit: 10 });
      assert.deepEqual(
        page.results.map((r) => r.assignmentContext),
        [{ plan: 'pro', deep: { a: [1, 'é'] } }, null, { plan: 'free' }, null, { plan: 'legacy' }, null],
      );
    } finally {
      await db.close();
    }
  });
}
