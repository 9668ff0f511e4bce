// The SQL store's experiments and their rollouts: read, inserted and changed each in one transaction with
// its events (experiment-rows.ts, rollout-rows.ts). SqlStore (sql-store.ts) extends it with results,
// exposures and rollups, and with deleting an experiment (which reads its results).
import type { Transaction } from 'kysely';
import { ConflictError } from '../core/errors.js';
import type { ChangeEvent } from '../core/events.js';
import type { Experiment } from '../core/experiment.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import { liveRolloutConflict, type Rollout } from '../core/rollout.js';
import { idempotencyRecordStatement } from './batch-rows.js';
import { executeInChunks } from './compile-rows.js';
import { insertEventRows } from './event-rows.js';
import {
  insertExperimentRows,
  lockExperimentRow,
  selectExperiment,
  selectExperiments,
  selectRevision,
  selectVersions,
  updateExperimentRows,
} from './experiment-rows.js';
import { insertRolloutRow, updateRolloutRow, withRollouts } from './rollout-rows.js';
import type { Database } from './schema.js';
import { SqlRecords } from './sql-records.js';
import type {
  ExperimentChange,
  RolloutStore,
  StoredExperiment,
  StoredRollout,
  StoredVersion,
} from './store.js';

export class SqlExperiments extends SqlRecords implements RolloutStore {
  listExperiments(): Promise<StoredExperiment[]> {
    return this.run(async () => withRollouts(this.readOnly, await selectExperiments(this.readOnly)));
  }

  findExperiment(slug: string): Promise<StoredExperiment | undefined> {
    return this.run(async () => {
      const found = await selectExperiment(this.readOnly, slug);
      return found && (await withRollouts(this.readOnly, [found]))[0];
    });
  }

  experimentsRevision(): Promise<number> {
    return this.run(() => selectRevision(this.readOnly));
  }

  insertExperiment(
    experiment: Experiment,
    record?: IdempotencyRecord,
    events?: readonly ChangeEvent[],
  ): Promise<StoredExperiment> {
    return this.run(async () => {
      try {
        return await this.readWrite.transaction().execute(async (trx) => {
          const id = await insertExperimentRows(trx, experiment);
          if (record !== undefined) await executeInChunks(trx, idempotencyRecordStatement([record]));
          await insertEventRows(trx, events);
          await this.changed(trx);
          return { id, experiment };
        });
      } catch (err) {
        if (!this.db.isUniqueViolation(err)) throw err;
        throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
      }
    });
  }

  updateExperiment(
    slug: string,
    change: (current: Experiment) => Experiment,
    events?: (before: Experiment, after: Experiment) => readonly ChangeEvent[],
  ): Promise<StoredExperiment> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        const current = await this.lockExperiment(trx, slug);
        const next = change(current.experiment);
        await updateExperimentRows(trx, current, next);
        await insertEventRows(trx, events?.(current.experiment, next));
        await this.changed(trx);
        return { ...current, experiment: next };
      }),
    );
  }

  insertRollout(
    slug: string,
    build: (current: StoredExperiment) => { rollout: StoredRollout; events: readonly ChangeEvent[] },
  ): Promise<StoredExperiment> {
    return this.run(async () => {
      try {
        return await this.readWrite.transaction().execute(async (trx) => {
          const current = await this.lockExperiment(trx, slug);
          const { rollout, events } = build(current);
          await insertRolloutRow(trx, rollout);
          await insertEventRows(trx, events);
          await this.changed(trx);
          return { ...current, rollout };
        });
      } catch (err) {
        if (!this.db.isUniqueViolation(err)) throw err;
        throw liveRolloutConflict();
      }
    });
  }

  moveRollout(
    slug: string,
    id: string,
    from: number,
    next: Rollout,
    events: readonly ChangeEvent[],
    change?: ExperimentChange,
  ): Promise<StoredExperiment | undefined> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        const current = await this.lockExperiment(trx, slug);
        if (!(await updateRolloutRow(trx, id, from, next))) return undefined;
        let experiment = current.experiment;
        let changeEvents: readonly ChangeEvent[] = [];
        if (change !== undefined) {
          ({ next: experiment, events: changeEvents } = change(current.experiment));
          await updateExperimentRows(trx, current, experiment);
        }
        await insertEventRows(trx, [...events, ...changeEvents]);
        await this.changed(trx);
        return {
          id: current.id,
          experiment,
          rollout: { id, experimentId: current.id, version: from + 1, rollout: next },
        };
      }),
    );
  }

  listVersions(experimentId: number): Promise<StoredVersion[]> {
    return this.run(() => selectVersions(this.readOnly, experimentId));
  }

  protected lockExperiment(trx: Transaction<Database>, slug: string): Promise<StoredExperiment> {
    return lockExperimentRow(trx, slug, this.db.dialect === 'postgres');
  }
}
