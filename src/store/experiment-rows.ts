// The experiments' rows (store/sql-store.ts): read, locked, versioned, and the revision every change bumps.
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { NotFoundError } from '../core/errors.js';
import {
  type AssignmentMode,
  type Experiment,
  type GuardrailAction,
  isActive,
  type Status,
} from '../core/experiment.js';
import type { Variant } from '../core/variants.js';
import { deleteRolloutRows, withRollouts } from './rollout-rows.js';
import { type Database, type ExperimentsTable, isoTime } from './schema.js';
import { json } from './sql-reads.js';
import type { StoredExperiment, StoredVersion } from './store.js';

export function toExperiment(row: Selectable<ExperimentsTable>): StoredExperiment {
  const status = row.status as Status;
  return {
    id: Number(row.id),
    experiment: {
      slug: row.slug,
      name: row.name,
      description: row.description,
      status,
      active: isActive(status),
      assignment: row.assignment as AssignmentMode,
      seed: row.seed,
      variants: json(row.variants),
      metrics: json(row.metrics),
      segments: json(row.segments),
      guardrailAction: row.guardrail_action as GuardrailAction,
      minimumUnits: Number(row.minimum_units),
      targeting: row.targeting === null ? null : json(row.targeting),
      coverage: Number(row.coverage),
      layer: row.layer === null ? null : json(row.layer),
      overrides: json(row.overrides),
      defaultVariant: row.default_variant,
      decision: row.decision === null ? null : json(row.decision),
      releasedVariant: row.released_variant ?? null,
      version: Number(row.version),
      createdAt: isoTime(row.created_at),
      updatedAt: isoTime(row.updated_at),
    },
  };
}

export function experimentColumns(e: Experiment) {
  return {
    slug: e.slug,
    name: e.name,
    description: e.description,
    status: e.status,
    assignment: e.assignment,
    seed: e.seed,
    variants: JSON.stringify(e.variants),
    metrics: JSON.stringify(e.metrics),
    segments: JSON.stringify(e.segments),
    guardrail_action: e.guardrailAction,
    minimum_units: e.minimumUnits,
    targeting: e.targeting === null ? null : JSON.stringify(e.targeting),
    coverage: e.coverage,
    layer: e.layer === null ? null : JSON.stringify(e.layer),
    overrides: JSON.stringify(e.overrides),
    default_variant: e.defaultVariant,
    decision: e.decision === null ? null : JSON.stringify(e.decision),
    released_variant: e.releasedVariant,
    version: e.version,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

export async function selectExperiments(db: Kysely<Database>): Promise<StoredExperiment[]> {
  const rows = await db.selectFrom('experiments').selectAll().orderBy('id').execute();
  return rows.map(toExperiment);
}

export async function selectExperiment(
  db: Kysely<Database>,
  slug: string,
): Promise<StoredExperiment | undefined> {
  const row = await db.selectFrom('experiments').selectAll().where('slug', '=', slug).executeTakeFirst();
  return row && toExperiment(row);
}

export async function selectRevision(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('experiment_revision').select('revision').executeTakeFirst();
  return Number(row?.revision ?? 0);
}

export async function selectVersions(db: Kysely<Database>, experimentId: number): Promise<StoredVersion[]> {
  const rows = await db
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
}

/** The experiment `slug`, its row locked FOR UPDATE where rows are locked (PostgreSQL); NotFoundError if none. */
export async function lockExperimentRow(
  trx: Transaction<Database>,
  slug: string,
  forUpdate: boolean,
): Promise<StoredExperiment> {
  let query = trx.selectFrom('experiments').selectAll().where('slug', '=', slug);
  if (forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`no experiment with slug '${slug}'`);
  return (await withRollouts(trx, [toExperiment(row)]))[0]!;
}

/** Inserts the experiment and its first version; returns its id. */
export async function insertExperimentRows(
  trx: Transaction<Database>,
  experiment: Experiment,
): Promise<number> {
  const { id } = await trx
    .insertInto('experiments')
    .values(experimentColumns(experiment))
    .returning('id')
    .executeTakeFirstOrThrow();
  await insertVersionRow(trx, Number(id), experiment);
  return Number(id);
}

/** Writes `next` over the stored experiment, and a version row when its variants changed. */
export async function updateExperimentRows(
  trx: Transaction<Database>,
  current: StoredExperiment,
  next: Experiment,
): Promise<void> {
  await trx.updateTable('experiments').set(experimentColumns(next)).where('id', '=', current.id).execute();
  if (next.version !== current.experiment.version) await insertVersionRow(trx, current.id, next);
}

export async function insertVersionRow(trx: Transaction<Database>, id: number, e: Experiment): Promise<void> {
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

/** Every change bumps the revision (other instances are told by the caller). */
export async function bumpRevision(trx: Transaction<Database>): Promise<void> {
  await trx
    .updateTable('experiment_revision')
    .set((eb) => ({ revision: eb('revision', '+', 1) }))
    .where('id', '=', 1)
    .execute();
}

/** Deletes an experiment (one without results: the guard saw to it) with its versions and exposures' rows. */
export async function deleteExperimentRows(trx: Transaction<Database>, id: number): Promise<void> {
  await trx.deleteFrom('exposure_rollups').where('experiment_id', '=', id).execute();
  await trx.deleteFrom('exposure_users').where('experiment_id', '=', id).execute();
  await trx.deleteFrom('exposure_ids').where('experiment_id', '=', id).execute();
  await trx.deleteFrom('assignment_contexts').where('experiment_id', '=', id).execute();
  await sql`DELETE FROM context_marks WHERE experiment_id = ${id}`.execute(trx);
  await trx.deleteFrom('exposure_user_rollups').where('experiment_id', '=', id).execute();
  for (const table of [
    'assignment_segments',
    'segment_pending',
    'segment_rollups',
    'segment_results',
    'segment_unit_sums',
    'segment_unit_rollups',
    'segment_sketch_bins',
  ] as const) {
    await trx.deleteFrom(table).where('experiment_id', '=', id).execute();
  }
  await deleteRolloutRows(trx, id);
  await trx.deleteFrom('trace_runs').where('experiment_id', '=', id).execute();
  await trx.deleteFrom('experiment_versions').where('experiment_id', '=', id).execute();
  await trx.deleteFrom('experiments').where('id', '=', id).execute();
}
