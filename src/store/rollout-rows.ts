// Rollouts' rows (migration 027): the rollout as JSON, with its state, step and version in columns. A
// move is written only over the version it was planned from (compare and set): of two instances, or the
// monitor and a person, planning from the same version, one writes and the other is told it lost.
import type { Kysely, Selectable, Transaction } from 'kysely';
import { LIVE_STATES, liveRolloutConflict, type Rollout } from '../core/rollout.js';
import { type Database, isoTime, type RolloutsTable } from './schema.js';
import { json } from './sql-reads.js';
import type { StoredExperiment, StoredRollout } from './store.js';

function toStored(row: Selectable<RolloutsTable>): StoredRollout {
  const rollout = json<Rollout>(row.rollout);
  return {
    id: row.id,
    experimentId: Number(row.experiment_id),
    version: Number(row.version),
    rollout: {
      ...rollout,
      state: row.state as Rollout['state'],
      step: Number(row.step),
      updatedAt: isoTime(row.updated_at),
    },
  };
}

/** The newest rollout of each experiment that has one (of `experimentId` only, when given). */
export async function selectNewestRollouts(
  db: Kysely<Database> | Transaction<Database>,
  experimentId?: number,
): Promise<Map<number, StoredRollout>> {
  let query = db.selectFrom('rollouts').selectAll();
  if (experimentId !== undefined) query = query.where('experiment_id', '=', experimentId);
  const rows = await query.orderBy('created_at').orderBy('id').execute();
  const newest = new Map<number, StoredRollout>();
  for (const row of rows) newest.set(Number(row.experiment_id), toStored(row));
  return newest;
}

/** The experiments with their newest rollouts attached. */
export async function withRollouts(
  db: Kysely<Database> | Transaction<Database>,
  experiments: StoredExperiment[],
): Promise<StoredExperiment[]> {
  if (experiments.length === 0) return experiments;
  const newest = await selectNewestRollouts(db, experiments.length === 1 ? experiments[0]!.id : undefined);
  return experiments.map((e) => {
    const rollout = newest.get(e.id);
    return rollout === undefined ? e : { ...e, rollout };
  });
}

/** Inserts a new rollout; ConflictError when its experiment has a live one (the partial unique index too). */
export async function insertRolloutRow(trx: Transaction<Database>, r: StoredRollout): Promise<void> {
  const live = await trx
    .selectFrom('rollouts')
    .select('id')
    .where('experiment_id', '=', r.experimentId)
    .where('state', 'in', [...LIVE_STATES])
    .executeTakeFirst();
  if (live !== undefined) {
    throw liveRolloutConflict();
  }
  await trx
    .insertInto('rollouts')
    .values({
      id: r.id,
      experiment_id: r.experimentId,
      state: r.rollout.state,
      step: r.rollout.step,
      version: r.version,
      rollout: JSON.stringify(r.rollout),
      created_at: r.rollout.createdAt,
      updated_at: r.rollout.updatedAt,
    })
    .execute();
}

/** Writes `next` over version `from`; false when another move was written first (nothing changed). */
export async function updateRolloutRow(
  trx: Transaction<Database>,
  id: string,
  from: number,
  next: Rollout,
): Promise<boolean> {
  const result = await trx
    .updateTable('rollouts')
    .set({
      state: next.state,
      step: next.step,
      version: from + 1,
      rollout: JSON.stringify(next),
      updated_at: next.updatedAt,
    })
    .where('id', '=', id)
    .where('version', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes an experiment's rollouts (the experiment is being deleted). */
export async function deleteRolloutRows(trx: Transaction<Database>, experimentId: number): Promise<void> {
  await trx.deleteFrom('rollouts').where('experiment_id', '=', experimentId).execute();
}
