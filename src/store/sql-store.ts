// The one SQL implementation of Store, over Kysely, for SQLite and PostgreSQL alike: batches, results,
// exposures and rollups here, on top of experiments and rollouts (sql-experiments.ts) and the smaller
// tables (sql-records.ts).
import { sql } from 'kysely';
import type { ComparedRow } from '../core/compare.js';
import type { ChangeEvent } from '../core/events.js';
import type { Experiment } from '../core/experiment.js';
import type { Exposure } from '../core/exposure.js';
import type { BatchDecisions, WriteBatch } from '../core/writes.js';
import { exposureLocks, overCapOf, rolledFeedback, rolledOf } from './batch-plan.js';
import { rowStatements } from './batch-rows.js';
import { plannedStatements } from './batch-statements.js';
import { claimClientExposures, newClientExposures } from './client-exposures.js';
import { type CompiledRows, compileRows, executeInChunks } from './compile-rows.js';
import { contextStatements, contextStep, runCompiled } from './context-index.js';
import type { SqlDatabase } from './database.js';
import { insertEventRows } from './event-rows.js';
import { deleteExperimentRows } from './experiment-rows.js';
import { insertUsers, sqliteUserStatements } from './exposure-user-statements.js';
import { MetricNames } from './metric-names.js';
import { executeAsFew } from './postgres-batch.js';
import { experimentIds, rebuildExperiments } from './rebuild.js';
import { readCompared, readResults } from './result-reads.js';
import { indexResults } from './result-search.js';
import type { ComparedQuery, ResultPage, ResultQuery, ResultTarget } from './result-types.js';
import type { HourlyData, Rollups, SegmentRows } from './rollup-types.js';
import { readSegments, segmentWrites } from './segment-rows.js';
import { SqlExperiments } from './sql-experiments.js';
import {
  countExposures,
  findResult,
  findResults,
  lastResultSeq,
  listExposures,
  readHourly,
  readMetricNames,
  readRollups,
} from './sql-reads.js';
import type { RolloutStore, Store } from './store.js';

export class SqlStore extends SqlExperiments implements Store, RolloutStore {
  private readonly metricNames = new MetricNames();
  /** Sticky experiments' users this process saw committed: repeat users cost no read (core/exposure-users.ts). */
  /** The end of the last SQLite batch or rebuild in turn (inTurn). */
  private turn: Promise<void> = Promise.resolve();

  readonly watchExperiments?: (onChange: () => void) => Promise<() => Promise<void>>;

  /**
   * Batches worth writing at once (GroupCommit's concurrency): PostgreSQL commits one while planning the
   * next; SQLite's one writer takes them in turn anyway.
   */
  readonly writeConcurrency: number;

  constructor(db: SqlDatabase) {
    super(db);
    this.writeConcurrency = db.dialect === 'postgres' ? 2 : 1;
    if (db.watchExperimentChanges) this.watchExperiments = db.watchExperimentChanges.bind(db);
  }

  deleteExperiment(
    slug: string,
    guard: (current: Experiment, hasResults: boolean) => void,
    events?: (deleted: Experiment) => readonly ChangeEvent[],
  ): Promise<void> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        const current = await this.lockExperiment(trx, slug);
        const any = await trx
          .selectFrom('results')
          .select('seq')
          .where('experiment_id', '=', current.id)
          .limit(1)
          .executeTakeFirst();
        guard(current.experiment, any !== undefined);
        await deleteExperimentRows(trx, current.id);
        await insertEventRows(trx, events?.(current.experiment));
        await this.changed(trx);
        this.metricNames.forget(current.id);
      }),
    );
  }

  /**
   * Also decides which metric names each result and feedback rolls up (the cap, ADR 0014) and answers
   * what it left out of each result; rollups that depend on stored values (feedback, users' sums) are planned from reads
   * made where no other batch can write in between (batch-plan.ts).
   */
  appendBatch(sent: WriteBatch): Promise<BatchDecisions> {
    const rolled = sent.results.map(rolledOf);
    const feedback = (sent.feedback ?? []).map(rolledFeedback);
    const capped = feedback.length > 0 ? [...rolled, ...feedback] : rolled;
    const feedbackOverCap = (experimentId: number, metric: string) =>
      feedback.some((f) => f.experimentId === experimentId && f.overCap?.has(metric) === true);
    const { writeBatch } = this.db;
    if (writeBatch) {
      // One call, one transaction, prepared multi-row statements (SQLite's writer thread). This process
      // is the only writer, and its batches (and rebuilds) take turns from the first read to the commit,
      // so what the read connection sees is current when the batch is planned.
      return this.inTurn(() =>
        this.run(async () => {
          const client = await newClientExposures(this.readOnly, sent);
          const batch = client.batch;
          if (capped.length > 0) {
            await this.metricNames.decideAsOnlyWriter(capped, (ids) => readMetricNames(this.readOnly, ids));
          }
          const overCap = overCapOf(rolled);
          const planned = await plannedStatements(this.readOnly, batch, rolled, feedbackOverCap);
          const segments = await segmentWrites(this.readOnly, batch, rolled, planned.segments);
          const statements = [
            ...rowStatements(batch, overCap, segments.records),
            ...client.statements,
            ...planned.statements,
            ...segments.statements,
          ];
          await writeBatch([
            ...statements.flatMap((st) => compileRows(this.readWrite, st)),
            ...sqliteUserStatements(batch.exposures),
          ]);
          return { metricsOverCap: overCap };
        }),
      );
    }
    const unitExposures = exposureLocks(sent);
    return this.run(async () => {
      const { decision, overCap } = await this.readWrite.transaction().execute(async (trx) => {
        const batch = await claimClientExposures(trx, sent);
        let decided: { committed(): void } | undefined;
        if (capped.length > 0 || unitExposures.length > 0) {
          await this.db.lockExperimentsForAppend(trx, [
            ...capped.map((r) => r.experimentId),
            ...unitExposures,
          ]);
        }
        if (capped.length > 0) {
          decided = await this.metricNames.decideUnderLock(capped, (ids) => readMetricNames(trx, ids));
        }
        const overCap = overCapOf(rolled);
        // Planned (read) first: the results' rows record the segment values their plan found. None of
        // these reads sees this batch's own rows.
        const planned = await plannedStatements(trx, batch, rolled, feedbackOverCap);
        const segments = await segmentWrites(trx, batch, rolled, planned.segments);
        const statements = [
          ...rowStatements(batch, overCap, segments.records),
          ...planned.statements,
          ...segments.statements,
        ];
        if (this.db.dialect === 'postgres') await executeAsFew(trx, statements);
        else for (const st of statements) await executeInChunks(trx, st);
        await insertUsers(trx, this.db.dialect, batch.exposures);
        return { decision: decided, overCap };
      });
      decision?.committed();
      return { metricsOverCap: overCap };
    });
  }

  readRollups(experimentId: number): Promise<Rollups> {
    return this.run(() => readRollups(this.readOnly, experimentId));
  }

  readSegments(experimentId: number, key: string): Promise<SegmentRows> {
    return this.run(() => readSegments(this.readOnly, experimentId, key));
  }

  readHourly(experimentId: number): Promise<HourlyData> {
    return this.run(() => readHourly(this.readOnly, experimentId));
  }

  findResult(experimentId: number, logId: string): Promise<ResultTarget | undefined> {
    return this.run(() => findResult(this.readOnly, experimentId, logId));
  }

  findResults(experimentId: number, logIds: readonly string[]): Promise<Map<string, ResultTarget>> {
    return this.run(() => findResults(this.readOnly, experimentId, logIds));
  }

  rebuildRollups(experimentId?: number): Promise<{ results: number; exposures: number }> {
    return this.inTurn(() =>
      this.run(() =>
        (this.db.longWork ?? this.readWrite).transaction().execute(async (trx) => {
          const ids = await experimentIds(trx, experimentId);
          // Appends to these experiments wait until the rebuilt rollups are committed.
          await this.db.lockExperimentsForAppend(trx, ids);
          return rebuildExperiments(trx, ids);
        }),
      ),
    );
  }

  /** SQLite: one batch or rebuild at a time, from its first read to its commit (PostgreSQL locks rows). */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    if (!this.db.writeBatch) return work();
    const turn = this.turn.then(work);
    this.turn = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  listExposures(experimentId: number): Promise<Exposure[]> {
    return this.run(() => listExposures(this.readOnly, experimentId));
  }

  async listResults(q: ResultQuery): Promise<ResultPage> {
    // The page shows each result's assignment context: the experiment's newest contexts are indexed
    // first. A read does not fail for want of the index (a full disk, a read-only replica): the contexts
    // not indexed yet read as null until a later read indexes them.
    await this.indexContexts(q.experimentId).catch(() => undefined);
    if (q.search !== undefined) {
      const write = (statements: CompiledRows[]) => this.writeSearchIndex(statements);
      await this.run(() => indexResults(this.readOnly, this.db.dialect, q.experimentId, write));
    }
    return this.run(() => readResults(this.readOnly, this.db.dialect, q));
  }

  listCompared(q: ComparedQuery): Promise<ComparedRow[]> {
    return this.run(() => readCompared(this.readOnly, this.db.dialect, q));
  }

  /** context-index.ts, step by step: SQLite on the writer thread in turn; else under the append lock. */
  private async indexContexts(experimentId: number): Promise<void> {
    const { writeBatch, dialect } = this.db;
    for (;;) {
      if (writeBatch) {
        const upto = await contextStep(this.readOnly, experimentId);
        if (upto === null) return;
        await this.inTurn(() => writeBatch(contextStatements(dialect, experimentId, upto)));
        continue;
      }
      const done = await this.readWrite.transaction().execute(async (trx) => {
        await this.db.lockExperimentsForAppend(trx, [experimentId]);
        const upto = await contextStep(trx, experimentId);
        if (upto !== null) await runCompiled(trx, contextStatements(dialect, experimentId, upto));
        return upto === null;
      });
      if (done) return;
    }
  }

  /** Search index rows in one transaction (SQLite: the writer thread, in turn with batches). */
  private writeSearchIndex(statements: CompiledRows[]): Promise<void> {
    const { writeBatch } = this.db;
    if (writeBatch) return this.inTurn(() => writeBatch(statements));
    return this.readWrite.transaction().execute((trx) => runCompiled(trx, statements));
  }

  lastResultSeq(experimentId: number): Promise<number> {
    return this.run(() => lastResultSeq(this.readOnly, experimentId));
  }

  statementsSent(): number {
    return this.db.statementsSent?.() ?? 0;
  }

  countExposures(experimentId: number): Promise<number> {
    return this.run(() => countExposures(this.readOnly, experimentId));
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.readOnly);
    await sql`select 1`.execute(this.readWrite);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
