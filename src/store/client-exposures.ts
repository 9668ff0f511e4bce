// Exposures clients sent (POST /exposures) are stored once per assignment id, however often they are
// sent: each id's UUID is recorded in exposure_ids in the transaction that stores its exposure, and an
// id recorded before adds nothing (migration 009). Assign's own exposures never come through here.
import type { Kysely } from 'kysely';
import type { Exposure } from '../core/exposure.js';
import type { WriteBatch } from '../core/writes.js';
import { toExposureBatches } from '../ingest/exposure-queue.js';
import type { RowStatement } from './row-statements.js';
import type { Database, ExposureIdsTable } from './schema.js';

/** The UUID that names an assignment (its FNV and CRC-32 forms are one assignment). */
function uuidOf(assignmentId: string): string {
  return assignmentId.slice(0, 36);
}

/** The key of an exposure_ids row: experiment and UUID. */
export function exposureIdKey(row: ExposureIdsTable): string {
  return `${row.experiment_id}\n${row.assignment_uuid}`;
}

/** One row per assignment, first sent first (a batch naming one twice keeps the first). */
export function exposureIdRows(exposures: Exposure[]): { rows: ExposureIdsTable[]; firsts: Exposure[] } {
  const seen = new Set<string>();
  const rows: ExposureIdsTable[] = [];
  const firsts: Exposure[] = [];
  for (const e of exposures) {
    const row = { experiment_id: e.experimentId, assignment_uuid: uuidOf(e.assignmentId) };
    const key = exposureIdKey(row);
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push(row);
    firsts.push(e);
  }
  return { rows, firsts };
}

/** Of `rows`, the keys already stored (read where no other batch writes in between: SQLite's writer turn). */
async function storedExposureIds(db: Kysely<Database>, rows: ExposureIdsTable[]): Promise<Set<string>> {
  const stored = new Set<string>();
  const byExperiment = new Map<number, string[]>();
  for (const r of rows) {
    const uuids = byExperiment.get(r.experiment_id) ?? [];
    uuids.push(r.assignment_uuid);
    byExperiment.set(r.experiment_id, uuids);
  }
  for (const [experimentId, uuids] of byExperiment) {
    for (let i = 0; i < uuids.length; i += 500) {
      const found = await db
        .selectFrom('exposure_ids')
        .select('assignment_uuid')
        .where('experiment_id', '=', experimentId)
        .where('assignment_uuid', 'in', uuids.slice(i, i + 500))
        .execute();
      for (const f of found)
        stored.add(exposureIdKey({ experiment_id: experimentId, assignment_uuid: f.assignment_uuid }));
    }
  }
  return stored;
}

/**
 * Records `rows` inside transaction `trx`, returning the keys it recorded now: a row another transaction
 * recorded (committed, or committing: the insert waits for it) is left out. PostgreSQL, many writers.
 */
async function claimExposureIds(trx: Kysely<Database>, rows: ExposureIdsTable[]): Promise<Set<string>> {
  const claimed = new Set<string>();
  // In key order: two transactions claiming overlapping ids wait for each other, never in a cycle.
  rows = [...rows].sort(
    (a, b) => a.experiment_id - b.experiment_id || (a.assignment_uuid < b.assignment_uuid ? -1 : 1),
  );
  for (let i = 0; i < rows.length; i += 1000) {
    const inserted = await trx
      .insertInto('exposure_ids')
      .values(rows.slice(i, i + 1000))
      .onConflict((oc) => oc.doNothing())
      .returning(['experiment_id', 'assignment_uuid'])
      .execute();
    for (const r of inserted)
      claimed.add(
        exposureIdKey({ experiment_id: Number(r.experiment_id), assignment_uuid: r.assignment_uuid }),
      );
  }
  return claimed;
}

/** The insert of the new rows (SQLite, after `storedExposureIds` left the stored ones out). */
function exposureIdStatement(rows: ExposureIdsTable[]): RowStatement {
  return {
    name: 'exposure_ids',
    rows,
    chunk: 1000,
    build: (db, chunk) => db.insertInto('exposure_ids').values(chunk as ExposureIdsTable[]),
  };
}

/** `batch` with the client exposures whose ids are `fresh` added as exposure batches of their own. */
export function withClientExposures(
  batch: WriteBatch,
  firsts: Exposure[],
  fresh: (key: string) => boolean,
): WriteBatch {
  const kept = firsts.filter((e) =>
    fresh(exposureIdKey({ experiment_id: e.experimentId, assignment_uuid: uuidOf(e.assignmentId) })),
  );
  const { clientExposures: _sent, ...rest } = batch;
  return kept.length === 0 ? rest : { ...rest, exposures: batch.exposures.concat(toExposureBatches(kept)) };
}

/**
 * SQLite (this process is the only writer, and the batch reads in its turn): the batch with the client
 * exposures never stored before, and the insert of their ids.
 */
export async function newClientExposures(
  db: Kysely<Database>,
  batch: WriteBatch,
): Promise<{ batch: WriteBatch; statements: RowStatement[] }> {
  if (!batch.clientExposures?.length) return { batch, statements: [] };
  const { rows, firsts } = exposureIdRows(batch.clientExposures);
  const stored = await storedExposureIds(db, rows);
  const fresh = rows.filter((r) => !stored.has(exposureIdKey(r)));
  return {
    batch: withClientExposures(batch, firsts, (key) => !stored.has(key)),
    statements: fresh.length > 0 ? [exposureIdStatement(fresh)] : [],
  };
}

/** PostgreSQL, inside the batch's transaction: the batch with the client exposures this transaction claimed. */
export async function claimClientExposures(trx: Kysely<Database>, batch: WriteBatch): Promise<WriteBatch> {
  if (!batch.clientExposures?.length) return batch;
  const { rows, firsts } = exposureIdRows(batch.clientExposures);
  const claimed = await claimExposureIds(trx, rows);
  return withClientExposures(batch, firsts, (key) => claimed.has(key));
}
