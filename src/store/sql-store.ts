// The one SQL implementation of Store, over Kysely, for SQLite and PostgreSQL alike.
import { type Kysely, sql, type Transaction } from 'kysely';
import { ConflictError, UnavailableError } from '../core/errors.js';
import type { Experiment } from '../core/experiment.js';
import type { Exposure } from '../core/exposure.js';
import { CommittedUsers } from '../core/exposure-users.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { BatchDecisions, WriteBatch } from '../core/writes.js';
import { exposureLocks, overCapOf, rolledFeedback, rolledOf } from './batch-plan.js';
import { plannedStatements } from './batch-statements.js';
import { claimClientExposures, newClientExposures } from './client-exposures.js';
import { compileRows, executeInChunks } from './compile-rows.js';
import type { SqlDatabase } from './database.js';
import {
  bumpRevision,
  deleteExperimentRows,
  experimentColumns,
  insertVersionRow,
  lockExperimentRow,
  selectExperiment,
  selectExperiments,
  selectRevision,
  selectVersions,
} from './experiment-rows.js';
import {
  claimIdempotencyRow,
  deleteIdempotencyRowsBefore,
  deletePendingIdempotencyRow,
  selectIdempotencyKey,
} from './idempotency-rows.js';
import type { InstanceLock } from './instance-lock.js';
import { insertKeyRow, revokeKeyRow, selectKeyPage, selectKeys, updateKeyUse } from './key-rows.js';
import { MetricNames } from './metric-names.js';
import { experimentIds, rebuildExperiments } from './rebuild.js';
import { readResults } from './result-reads.js';
import { idempotencyRecordStatement, rowStatements } from './row-statements.js';
import type { Database } from './schema.js';
import { readSegments, segmentWrites } from './segment-rows.js';
import { translatingErrors } from './sql-errors.js';
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
import type {
  HourlyData,
  IdempotencyRow,
  IdempotencyStore,
  KeyStore,
  ResultPage,
  ResultQuery,
  ResultTarget,
  Rollups,
  SegmentRows,
  Store,
  StoredExperiment,
  StoredKey,
  StoredVersion,
} from './store.js';

export class SqlStore implements Store, KeyStore, IdempotencyStore {
  private readonly readWrite: Kysely<Database>;
  private readonly readOnly: Kysely<Database>;
  private readonly metricNames = new MetricNames();
  /** Sticky experiments' users this process saw committed: repeat users cost no read (core/exposure-users.ts). */
  private readonly committedUsers = new CommittedUsers();
  /** The end of the last SQLite batch or rebuild in turn (inTurn). */
  private turn: Promise<void> = Promise.resolve();
  /** This process's liveness to other instances (PostgreSQL, once startInstance ran). */
  private instance: InstanceLock | undefined;

  readonly watchExperiments?: (onChange: () => void) => Promise<() => Promise<void>>;

  constructor(private readonly db: SqlDatabase) {
    this.readWrite = db.readWrite;
    this.readOnly = db.readOnly;
    if (db.watchExperimentChanges) this.watchExperiments = db.watchExperimentChanges.bind(db);
  }

  /** Runs `work`, its database errors said as the domain's (sql-errors.ts). */
  private run<T>(work: () => Promise<T>): Promise<T> {
    return translatingErrors(this.db, work);
  }

  listExperiments(): Promise<StoredExperiment[]> {
    return this.run(() => selectExperiments(this.readOnly));
  }

  findExperiment(slug: string): Promise<StoredExperiment | undefined> {
    return this.run(() => selectExperiment(this.readOnly, slug));
  }

  experimentsRevision(): Promise<number> {
    return this.run(() => selectRevision(this.readOnly));
  }

  insertExperiment(experiment: Experiment, record?: IdempotencyRecord): Promise<StoredExperiment> {
    return this.run(() => this.insert(experiment, record));
  }

  private async insert(experiment: Experiment, record?: IdempotencyRecord): Promise<StoredExperiment> {
    try {
      return await this.readWrite.transaction().execute(async (trx) => {
        const { id } = await trx
          .insertInto('experiments')
          .values(experimentColumns(experiment))
          .returning('id')
          .executeTakeFirstOrThrow();
        await insertVersionRow(trx, Number(id), experiment);
        if (record !== undefined) await executeInChunks(trx, idempotencyRecordStatement([record]));
        await this.changed(trx);
        return { id: Number(id), experiment };
      });
    } catch (err) {
      if (this.db.isUniqueViolation(err)) {
        throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
      }
      throw err;
    }
  }

  updateExperiment(slug: string, change: (current: Experiment) => Experiment): Promise<StoredExperiment> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        const current = await this.lockExperiment(trx, slug);
        const next = change(current.experiment);
        await trx
          .updateTable('experiments')
          .set(experimentColumns(next))
          .where('id', '=', current.id)
          .execute();
        if (next.version !== current.experiment.version) await insertVersionRow(trx, current.id, next);
        await this.changed(trx);
        return { id: current.id, experiment: next };
      }),
    );
  }

  deleteExperiment(slug: string, guard: (current: Experiment, hasResults: boolean) => void): Promise<void> {
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
        this.committedUsers.forgetAll();
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
          const planned = await plannedStatements(
            this.readOnly,
            batch,
            rolled,
            feedbackOverCap,
            this.committedUsers,
          );
          const segments = await segmentWrites(this.readOnly, batch, rolled);
          const statements = [
            ...rowStatements(batch, overCap),
            ...client.statements,
            ...planned.statements,
            ...segments,
          ];
          await writeBatch(statements.flatMap((st) => compileRows(this.readWrite, st)));
          this.committedUsers.remember(planned.userKeys);
          return { metricsOverCap: overCap };
        }),
      );
    }
    const unitExposures = exposureLocks(sent);
    return this.run(async () => {
      const { decision, userKeys, overCap } = await this.readWrite.transaction().execute(async (trx) => {
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
        for (const st of rowStatements(batch, overCap)) await executeInChunks(trx, st);
        const planned = await plannedStatements(trx, batch, rolled, feedbackOverCap, this.committedUsers);
        for (const st of planned.statements) await executeInChunks(trx, st);
        for (const st of await segmentWrites(trx, batch, rolled)) await executeInChunks(trx, st);
        return { decision: decided, userKeys: planned.userKeys, overCap };
      });
      decision?.committed();
      this.committedUsers.remember(userKeys);
      return { metricsOverCap: overCap };
    });
  }

  readRollups(experimentId: number): Promise<Rollups> {
    return this.run(() => readRollups(this.readOnly, experimentId));
  }

  readSegments(experimentId: number, key: string): Promise<SegmentRows> {
    return this.run(() => readSegments(this.readOnly, experimentId, key));
  }

  listVersions(experimentId: number): Promise<StoredVersion[]> {
    return this.run(() => selectVersions(this.readOnly, experimentId));
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
        this.readWrite.transaction().execute(async (trx) => {
          const ids = await experimentIds(trx, experimentId);
          // Appends to these experiments wait until the rebuilt rollups are committed.
          await this.db.lockExperimentsForAppend(trx, ids);
          // Rebuilt from the stored exposures: the same users, but forgotten rather than trusted.
          this.committedUsers.forgetAll();
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

  listResults(q: ResultQuery): Promise<ResultPage> {
    return this.run(() => readResults(this.readOnly, this.db.dialect, q));
  }

  lastResultSeq(experimentId: number): Promise<number> {
    return this.run(() => lastResultSeq(this.readOnly, experimentId));
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

  listKeys(): Promise<StoredKey[]> {
    return this.run(() => selectKeys(this.readOnly));
  }

  listKeyPage(after: { createdAt: string; id: string } | undefined, limit: number): Promise<StoredKey[]> {
    return this.run(() => selectKeyPage(this.readOnly, after, limit));
  }

  insertKey(key: StoredKey): Promise<void> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        await insertKeyRow(trx, key);
        await this.changed(trx);
      }),
    );
  }

  revokeKey(id: string, at: string): Promise<boolean> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        const revoked = await revokeKeyRow(trx, id, at);
        if (revoked) await this.changed(trx);
        return revoked;
      }),
    );
  }

  recordKeyUse(uses: Array<{ id: string; at: string }>): Promise<void> {
    return this.run(() => updateKeyUse(this.readWrite, uses));
  }

  findIdempotencyKey(owner: string, key: string, since: string): Promise<IdempotencyRow | undefined> {
    return this.run(() => selectIdempotencyKey(this.readOnly, owner, key, since));
  }

  /**
   * Where several processes write (PostgreSQL): takes the lock that tells other instances this one is
   * alive, so its Idempotency-Key claims hold while it runs and no longer once it is gone (ADR 0016).
   * Released by close(). Nothing on SQLite.
   */
  async startInstance(): Promise<void> {
    if (this.instance !== undefined || this.db.holdInstanceLock === undefined) return;
    this.instance = await this.run(() => this.db.holdInstanceLock!());
  }

  claimIdempotencyKey(
    owner: string,
    key: string,
    fingerprint: string,
    now: string,
    since: string,
    staleBefore: string,
  ): Promise<boolean> {
    const instance = this.instance;
    // Without its lock this instance is not alive to the others, which may take its claims over: it
    // claims nothing until the lock is back.
    if (instance !== undefined && !instance.held) {
      return Promise.reject(
        new UnavailableError('this instance lost its lock on the database; retry shortly', 1),
      );
    }
    return this.run(() =>
      claimIdempotencyRow(this.readWrite, { owner, key, fingerprint, now, since, staleBefore, instance }),
    );
  }

  releaseIdempotencyKey(owner: string, key: string): Promise<void> {
    return this.run(() => deletePendingIdempotencyRow(this.readWrite, owner, key));
  }

  pruneIdempotencyKeys(before: string): Promise<number> {
    return this.run(() => deleteIdempotencyRowsBefore(this.readWrite, before));
  }

  /** True when one process owns the data (SQLite): claims need not be written for other instances. */
  get singleProcess(): boolean {
    return this.db.dialect === 'sqlite';
  }

  private lockExperiment(trx: Transaction<Database>, slug: string): Promise<StoredExperiment> {
    return lockExperimentRow(trx, slug, this.db.dialect === 'postgres');
  }

  /** Every change bumps the revision and is announced to other instances (delivered at commit). */
  private async changed(trx: Transaction<Database>): Promise<void> {
    await bumpRevision(trx);
    await this.db.announceExperimentChange(trx);
  }
}
