// The contexts assignments were made with (issue 26), kept by assignment so a page of results reads its
// assignments' contexts in one query (result-reads.ts): written with the exposures of each group commit
// (row-statements.ts), only for exposures that had a context; a UUID stored before keeps its first.
import type { Kysely } from 'kysely';
import type { ExposureBatch } from '../core/writes.js';
import type { AssignmentContextsTable, Database } from './schema.js';

export function assignmentContextRows(batches: ExposureBatch[]): AssignmentContextsTable[] {
  return batches.flatMap((b) =>
    (b.contexts ?? []).map((c) => ({
      experiment_id: b.experimentId,
      assignment_uuid: c.assignmentUuid,
      context: c.context,
    })),
  );
}

export function insertAssignmentContexts(db: Kysely<Database>, rows: object[]) {
  return db
    .insertInto('assignment_contexts')
    .values(rows as AssignmentContextsTable[])
    .onConflict((oc) => oc.doNothing());
}
