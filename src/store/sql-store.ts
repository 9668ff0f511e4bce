// The one SQL implementation of Store, over Kysely, for SQLite and PostgreSQL alike.
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { AppError, ConflictError, NotFoundError, UnavailableError, ValidationError } from '../core/errors.js';
import type { AssignmentMode, Experiment, Status, Variant } from '../core/experiment.js';
import type { Exposure } from '../core/exposure.js';
import { CommittedUsers } from '../core/exposure-users.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { JsonObject } from '../core/json.js';
import type { MetricRollup } from '../core/rollups.js';
import type { SketchRow } from '../core/sketch-rollups.js';
import type { UnitRollup } from '../core/units.js';
import type { BatchDecisions, WriteBatch } from '../core/writes.js';
import type { SketchSide } from '../stats/sketch.js';
import { plannedStatements, rolledFeedback, rolledOf } from './batch-plan.js';
import { claimClientExposures, newClientExposures } from './client-exposures.js';
import { compileRows, executeInChunks } from './compile-rows.js';
import type { SqlDatabase } from './database.js';
import {
  claimIdempotencyRow,
  deleteIdempotencyRowsBefore,
  deletePendingIdempotencyRow,
  selectIdempotencyKey,
} from './idempotency-rows.js';
import type { InstanceLock } from './instance-lock.js';
import { insertKeyRow, revokeKeyRow, selectKeyPage, selectKeys, updateKeyUse } from './key-rows.js';
import { MetricNames } from './metric-names.js';
import { exposureBatches, rebuildExperiment } from './rebuild.js';
import { idempotencyAnswerStatement, overCapOf, rowStatements } from './row-statements.js';
import {
  type Database,
  type ExperimentsTable,
  isoTime,
  type ResultsTable,
  type SketchBinsTable,
  type UnitRollupsTable,
} from './schema.js';
import type {
  Buckets,
  IdempotencyRow,
  IdempotencyStore,
  KeyStore,
  Result,
  ResultPage,
  ResultQuery,
  ResultTarget,
  Rollups,
  Store,
  StoredExperiment,
  StoredKey,
  StoredVersion,
} from './store.js';

/** Rows read per page when rollups are rebuilt from raw data. */
const _REBUILD_PAGE = 5000;
/** Exposure batches read per page (each about 4 MB of JSON at most; see row-statements.ts). */
const _EXPOSURE_BATCH_PAGE = 4;

function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function toExperiment(row: Selectable<ExperimentsTable>): StoredExperiment {
  const status = row.status as Status;
  return {
    id: Number(row.id),
    experiment: {
      slug: row.slug,
      name: row.name,
      description: row.description,
      status,
      active: status === 'running',
      assignment: row.assignment as AssignmentMode,
      seed: row.seed,
      variants: json(row.variants),
      metrics: json(row.metrics),
      version: Number(row.version),
      createdAt: isoTime(row.created_at),
      updatedAt: isoTime(row.updated_at),
    },
  };
}

function toResult(row: Selectable<ResultsTable>): Result {
  return {
    logId: row.log_id,
    variantKey: row.variant_key,
    // 0/1 on SQLite, a boolean on PostgreSQL.
    knownVariant: Boolean(row.known_variant),
    userId: row.user_id,
    assignmentId: row.assignment_id,
    assignedVariant: row.assigned_variant ?? null,
    input: json<JsonObject | null>(row.input),
    output: json<JsonObject | null>(row.output),
    metrics: json<JsonObject | null>(row.metrics),
    context: json<JsonObject | null>(row.context),
    timestamp: row.client_timestamp === null ? null : isoTime(row.client_timestamp),
    createdAt: isoTime(row.created_at),
    experimentVersion: Number(row.experiment_version),
  };
}

function toUnitRollup(u: Selectable<UnitRollupsTable>): UnitRollup {
  return {
    experimentId: Number(u.experiment_id),
    version: Number(u.experiment_version),
    variantKey: u.variant_key,
    metric: u.metric,
    kind: u.kind as MetricRollup['kind'],
    units: Number(u.units),
    sumX: Number(u.sum_x),
    sumX2: Number(u.sum_x2),
    sumY: Number(u.sum_y),
    sumY2: Number(u.sum_y2),
    sumXY: Number(u.sum_xy),
  };
}

function toSketchRow(b: Selectable<SketchBinsTable>): SketchRow {
  return {
    version: Number(b.experiment_version),
    variantKey: b.variant_key,
    metric: b.metric,
    side: Number(b.side) as SketchSide,
    key: Number(b.key),
    count: Number(b.count),
  };
}

function experimentColumns(e: Experiment) {
  return {
    slug: e.slug,
    name: e.name,
    description: e.description,
    status: e.status,
    assignment: e.assignment,
    seed: e.seed,
    variants: JSON.stringify(e.variants),
    metrics: JSON.stringify(e.metrics),
    version: e.version,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

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

  /**
   * Domain errors pass through; an unreachable database becomes UnavailableError (503 + Retry-After), a
   * reference to a row that is gone NotFoundError (404), a value the database refuses ValidationError (400).
   */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (this.db.isUnavailable(err)) {
        // The driver's message names the database's host and port: it goes to the log as the cause,
        // never to the client.
        throw new UnavailableError('the database is unavailable; retry shortly', 1, { cause: err });
      }
      if (this.db.isForeignKeyViolation(err)) {
        throw new NotFoundError('the experiment this write refers to no longer exists');
      }
      if (this.db.isInvalidData(err)) {
        throw new ValidationError(
          `the database cannot store a value of this request: ${(err as Error).message}`,
        );
      }
      throw err;
    }
  }

  listExperiments(): Promise<StoredExperiment[]> {
    return this.run(async () => {
      const rows = await this.readOnly.selectFrom('experiments').selectAll().orderBy('id').execute();
      return rows.map(toExperiment);
    });
  }

  findExperiment(slug: string): Promise<StoredExperiment | undefined> {
    return this.run(async () => {
      const row = await this.readOnly
        .selectFrom('experiments')
        .selectAll()
        .where('slug', '=', slug)
        .executeTakeFirst();
      return row && toExperiment(row);
    });
  }

  experimentsRevision(): Promise<number> {
    return this.run(async () => {
      const row = await this.readOnly.selectFrom('experiment_revision').select('revision').executeTakeFirst();
      return Number(row?.revision ?? 0);
    });
  }

  insertExperiment(experiment: Experiment, answer?: IdempotencyRecord): Promise<StoredExperiment> {
    return this.run(() => this.insert(experiment, answer));
  }

  private async insert(experiment: Experiment, answer?: IdempotencyRecord): Promise<StoredExperiment> {
    try {
      return await this.readWrite.transaction().execute(async (trx) => {
        const { id } = await trx
          .insertInto('experiments')
          .values(experimentColumns(experiment))
          .returning('id')
          .executeTakeFirstOrThrow();
        await this.recordVersion(trx, Number(id), experiment);
        if (answer !== undefined) await executeInChunks(trx, idempotencyAnswerStatement([answer]));
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
        if (next.version !== current.experiment.version) await this.recordVersion(trx, current.id, next);
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
        await trx.deleteFrom('exposure_rollups').where('experiment_id', '=', current.id).execute();
        await trx.deleteFrom('exposure_users').where('experiment_id', '=', current.id).execute();
        await trx.deleteFrom('exposure_ids').where('experiment_id', '=', current.id).execute();
        await trx.deleteFrom('exposure_user_rollups').where('experiment_id', '=', current.id).execute();
        this.committedUsers.forgetAll();
        await trx.deleteFrom('experiment_versions').where('experiment_id', '=', current.id).execute();
        await trx.deleteFrom('experiments').where('id', '=', current.id).execute();
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
            await this.metricNames.decideAsOnlyWriter(capped, (ids) =>
              this.readMetricNames(this.readOnly, ids),
            );
          }
          const overCap = overCapOf(rolled);
          const planned = await plannedStatements(
            this.readOnly,
            batch,
            rolled,
            feedbackOverCap,
            this.committedUsers,
          );
          const statements = [...rowStatements(batch, overCap), ...client.statements, ...planned.statements];
          await writeBatch(statements.flatMap((st) => compileRows(this.readWrite, st)));
          this.committedUsers.remember(planned.userKeys);
          return { metricsOverCap: overCap };
        }),
      );
    }
    // Sticky exposures' distinct users are read and inserted under the experiment's lock too: two
    // instances inserting the same new user must not both count it.
    const unitExposures = [
      ...sent.exposures.filter((b) => b.unit === true).map((b) => b.experimentId),
      ...(sent.clientExposures ?? []).filter((e) => e.unit === true).map((e) => e.experimentId),
    ];
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
          decided = await this.metricNames.decideUnderLock(capped, (ids) => this.readMetricNames(trx, ids));
        }
        const overCap = overCapOf(rolled);
        for (const st of rowStatements(batch, overCap)) await executeInChunks(trx, st);
        const planned = await plannedStatements(trx, batch, rolled, feedbackOverCap, this.committedUsers);
        for (const st of planned.statements) await executeInChunks(trx, st);
        return { decision: decided, userKeys: planned.userKeys, overCap };
      });
      decision?.committed();
      this.committedUsers.remember(userKeys);
      return { metricsOverCap: overCap };
    });
  }

  /** The metric names each experiment rolls up, as committed. */
  private async readMetricNames(db: Kysely<Database>, ids: number[]): Promise<Map<number, Set<string>>> {
    const rows = await db
      .selectFrom('metric_rollups')
      .select(['experiment_id', 'metric'])
      .where('experiment_id', 'in', ids)
      .groupBy(['experiment_id', 'metric'])
      .execute();
    const names = new Map<number, Set<string>>();
    for (const r of rows) {
      const id = Number(r.experiment_id);
      let set = names.get(id);
      if (!set) {
        set = new Set();
        names.set(id, set);
      }
      set.add(r.metric);
    }
    return names;
  }

  readRollups(experimentId: number): Promise<Rollups> {
    return this.run(async () => {
      const metrics = await this.readOnly
        .selectFrom('metric_rollups')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .execute();
      const exposures = await this.readOnly
        .selectFrom('exposure_rollups')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .execute();
      const results = await this.readOnly
        .selectFrom('result_rollups')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .execute();
      const units = await this.readOnly
        .selectFrom('unit_rollups')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .execute();
      const users = await this.readOnly
        .selectFrom('exposure_user_rollups')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .execute();
      const bins = await this.readOnly
        .selectFrom('sketch_bins')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .where('count', '<>', 0)
        .execute();
      return {
        exposureUsers: users.map((r) => ({
          experimentId: Number(r.experiment_id),
          version: Number(r.experiment_version),
          variantKey: r.variant_key,
          n: Number(r.n),
        })),
        sketches: bins.map(toSketchRow),
        results: results.map((r) => ({
          experimentId: Number(r.experiment_id),
          version: Number(r.experiment_version),
          variantKey: r.variant_key,
          n: Number(r.n),
        })),
        units: units.map(toUnitRollup),
        metrics: metrics.map((m) => ({
          experimentId: Number(m.experiment_id),
          version: Number(m.experiment_version),
          variantKey: m.variant_key,
          metric: m.metric,
          kind: m.kind as MetricRollup['kind'],
          n: Number(m.n),
          sum: Number(m.sum),
          sumSquares: Number(m.sum_squares),
        })),
        exposures: exposures.map((e) => ({
          experimentId: Number(e.experiment_id),
          version: Number(e.experiment_version),
          variantKey: e.variant_key,
          n: Number(e.n),
        })),
      };
    });
  }

  listVersions(experimentId: number): Promise<StoredVersion[]> {
    return this.run(async () => {
      const rows = await this.readOnly
        .selectFrom('experiment_versions')
        .select(['version', 'variants', 'created_at'])
        .where('experiment_id', '=', experimentId)
        .orderBy('version')
        .execute();
      return rows.map((r) => ({
        version: Number(r.version),
        variants: json<Variant[]>(r.variants),
        createdAt: isoTime(r.created_at),
      }));
    });
  }

  readBuckets(experimentId: number): Promise<Buckets> {
    return this.run(async () => {
      const units = await this.readOnly
        .selectFrom('bucket_unit_rollups')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .orderBy('bucket')
        .execute();
      const bins = await this.readOnly
        .selectFrom('bucket_sketch_bins')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .where('count', '<>', 0)
        .orderBy('bucket')
        .execute();
      const metrics = await this.readOnly
        .selectFrom('bucket_rollups')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .orderBy('bucket')
        .execute();
      const exposures = await this.readOnly
        .selectFrom('bucket_exposures')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .orderBy('bucket')
        .execute();
      return {
        metrics: metrics.map((m) => ({
          experimentId,
          bucket: m.bucket,
          version: Number(m.experiment_version),
          variantKey: m.variant_key,
          metric: m.metric,
          kind: m.kind as MetricRollup['kind'],
          n: Number(m.n),
          sum: Number(m.sum),
          sumSquares: Number(m.sum_squares),
        })),
        exposures: exposures.map((e) => ({
          bucket: e.bucket,
          version: Number(e.experiment_version),
          variantKey: e.variant_key,
          n: Number(e.n),
        })),
        units: units.map((u) => ({ ...toUnitRollup(u), bucket: u.bucket })),
        sketches: bins.map((b) => ({ ...toSketchRow(b), bucket: b.bucket })),
      };
    });
  }

  findResult(experimentId: number, logId: string): Promise<ResultTarget | undefined> {
    return this.run(async () => {
      const row = await this.readOnly
        .selectFrom('results')
        .select(['experiment_version', 'variant_key', 'user_id'])
        .where('log_id', '=', logId)
        .where('experiment_id', '=', experimentId)
        .executeTakeFirst();
      return (
        row && { version: Number(row.experiment_version), variantKey: row.variant_key, userId: row.user_id }
      );
    });
  }

  rebuildRollups(experimentId?: number): Promise<{ results: number; exposures: number }> {
    return this.inTurn(() =>
      this.run(() =>
        this.readWrite.transaction().execute(async (trx) => {
          const ids =
            experimentId === undefined
              ? (await trx.selectFrom('experiments').select('id').execute()).map((r) => Number(r.id))
              : [experimentId];
          // Appends to these experiments wait until the rebuilt rollups are committed.
          await this.db.lockExperimentsForAppend(trx, ids);
          let results = 0;
          let exposures = 0;
          // Rebuilt from the stored exposures: the same users, but forgotten rather than trusted.
          this.committedUsers.forgetAll();
          for (const id of ids) {
            const counts = await rebuildExperiment(trx, id);
            results += counts.results;
            exposures += counts.exposures;
          }
          return { results, exposures };
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
    return this.run(async () => {
      const out: Exposure[] = [];
      // Rows written one by one before migration 003 (or by an older instance during a rolling deploy).
      const legacy = await this.readOnly
        .selectFrom('exposures')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .orderBy('seq')
        .execute();
      for (const r of legacy) {
        out.push({
          assignmentId: r.assignment_id,
          experimentId,
          version: Number(r.experiment_version),
          variantKey: r.variant_key,
          userId: r.user_id,
          context: r.context === null ? null : json<JsonObject>(r.context),
          createdAt: isoTime(r.created_at),
        });
      }
      const mixed = out.length > 0;
      for await (const exposures of exposureBatches(this.readOnly, experimentId)) {
        for (const e of exposures) out.push(e);
      }
      // Both kinds: in time order (a stable sort keeps each kind's own order within a millisecond).
      if (mixed) out.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
      return out;
    });
  }

  listResults(q: ResultQuery): Promise<ResultPage> {
    return this.run(() => this.readResults(q));
  }

  private async readResults(q: ResultQuery): Promise<ResultPage> {
    let query = this.readOnly.selectFrom('results').selectAll().where('experiment_id', '=', q.experimentId);
    if (q.afterSeq !== undefined) query = query.where('seq', '>', q.afterSeq);
    if (q.uptoSeq !== undefined) query = query.where('seq', '<=', q.uptoSeq);
    if (q.variantKey !== undefined) query = query.where('variant_key', '=', q.variantKey);
    if (q.since !== undefined) query = query.where('created_at', '>=', q.since);
    if (q.until !== undefined) query = query.where('created_at', '<', q.until);
    const rows = await query
      .orderBy('seq')
      .limit(q.limit + 1)
      .execute();
    const hasMore = rows.length > q.limit;
    const page = hasMore ? rows.slice(0, q.limit) : rows;
    const last = page[page.length - 1];
    return { results: page.map(toResult), lastSeq: last ? Number(last.seq) : null, hasMore };
  }

  lastResultSeq(experimentId: number): Promise<number> {
    return this.run(async () => {
      const row = await this.readOnly
        .selectFrom('results')
        .select((eb) => eb.fn.max('seq').as('last'))
        .where('experiment_id', '=', experimentId)
        .executeTakeFirst();
      return Number(row?.last ?? 0);
    });
  }

  countExposures(experimentId: number): Promise<number> {
    return this.run(async () => {
      const batches = await this.readOnly
        .selectFrom('exposure_batches')
        .select((eb) => eb.fn.sum<number>('count').as('n'))
        .where('experiment_id', '=', experimentId)
        .executeTakeFirst();
      const legacy = await this.readOnly
        .selectFrom('exposures')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('experiment_id', '=', experimentId)
        .executeTakeFirst();
      return Number(batches?.n ?? 0) + Number(legacy?.n ?? 0);
    });
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

  private async lockExperiment(trx: Transaction<Database>, slug: string): Promise<StoredExperiment> {
    let query = trx.selectFrom('experiments').selectAll().where('slug', '=', slug);
    if (this.db.dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return toExperiment(row);
  }

  /** Every change bumps the revision and is announced to other instances (delivered at commit). */
  private async changed(trx: Transaction<Database>): Promise<void> {
    await trx
      .updateTable('experiment_revision')
      .set((eb) => ({ revision: eb('revision', '+', 1) }))
      .where('id', '=', 1)
      .execute();
    await this.db.announceExperimentChange(trx);
  }

  private async recordVersion(trx: Transaction<Database>, id: number, e: Experiment): Promise<void> {
    await trx
      .insertInto('experiment_versions')
      .values({
        experiment_id: id,
        version: e.version,
        variants: JSON.stringify(e.variants),
        created_at: e.updatedAt,
      })
      .execute();
  }
}
