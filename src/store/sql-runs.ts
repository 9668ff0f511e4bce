// The store of offline runs (issue 40, ADR 0047) for both databases: a run's row (migration 031), and its
// results read for a comparison with the feedback on them (each metric's latest value on the result over
// the result's own). The SQL store only (the runtime's store).
import type { ChangeEvent } from '../core/events.js';
import type { JsonObject } from '../core/json.js';
import type { OfflineRun } from '../core/offline-runs.js';
import type { RunRow } from '../core/run-comparison.js';
import type { SqlDatabase } from './database.js';
import { insertEventRows } from './event-rows.js';
import { isoTime } from './schema.js';
import { translatingErrors } from './sql-errors.js';

export interface RunStore {
  /** Inserts the run with its events, in one transaction. */
  insertRun(run: OfflineRun, events: readonly ChangeEvent[]): Promise<void>;
  findRun(id: string): Promise<OfflineRun | undefined>;
  /** An experiment's runs, newest first. */
  /** Newest first, at most `limit`; `before`: only runs older than the run with this id. */
  listRuns(experimentId: number, limit: number, before?: string): Promise<OfflineRun[]>;
  /** Every result of a run with its values (feedback on it over its own metrics), in commit order. */
  runRows(run: OfflineRun): Promise<RunRow[]>;
}

/** Results read per page of a run (a comparison of 10,000 items × 3 variants × 3 trials reads 90,000). */
const PAGE = 5000;

const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

export class SqlRuns implements RunStore {
  constructor(private readonly db: SqlDatabase) {}

  private run<T>(work: () => Promise<T>): Promise<T> {
    return translatingErrors(this.db, work);
  }

  insertRun(r: OfflineRun, events: readonly ChangeEvent[]): Promise<void> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        await trx
          .insertInto('runs')
          .values({
            id: r.id,
            experiment_id: r.experimentId,
            dataset_id: r.datasetId,
            dataset_name: r.dataset,
            dataset_version: r.version,
            variants: JSON.stringify(r.variants),
            trials: r.trials,
            items: r.items,
            created_at: r.createdAt,
          })
          .execute();
        await insertEventRows(trx, events);
      }),
    );
  }

  findRun(id: string): Promise<OfflineRun | undefined> {
    return this.run(async () => {
      const row = await this.db.readOnly
        .selectFrom('runs')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : toRun(row);
    });
  }

  listRuns(experimentId: number, limit: number, before?: string): Promise<OfflineRun[]> {
    return this.run(async () => {
      // Run ids are UUIDv7: newest first is id order, and the page after a run is the ids below it.
      let q = this.db.readOnly.selectFrom('runs').selectAll().where('experiment_id', '=', experimentId);
      if (before !== undefined) q = q.where('id', '<', before);
      const rows = await q.orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toRun);
    });
  }

  runRows(r: OfflineRun): Promise<RunRow[]> {
    return this.run(async () => {
      const out: RunRow[] = [];
      const byLog = new Map<string, RunRow>();
      let after = 0;
      for (;;) {
        const rows = await this.db.readOnly
          .selectFrom('results')
          .select(['seq', 'log_id', 'variant_key', 'item_id', 'trial', 'metrics', 'output'])
          .where('run_id', '=', r.id)
          .where('seq', '>', after)
          .orderBy('seq')
          .limit(PAGE)
          .execute();
        for (const row of rows) {
          const metrics = row.metrics === null ? {} : json<JsonObject>(row.metrics);
          const values: RunRow['values'] = {};
          for (const [k, v] of Object.entries(metrics)) {
            if (typeof v === 'number' || typeof v === 'boolean') values[k] = v;
          }
          const item: RunRow = {
            variantKey: row.variant_key,
            itemId: row.item_id ?? '',
            trial: Number(row.trial ?? 1),
            values,
            output: row.output === null ? null : json(row.output),
          };
          out.push(item);
          byLog.set(row.log_id, item);
        }
        if (rows.length < PAGE) break;
        after = Number(rows.at(-1)!.seq);
      }
      // The feedback on the run's results: each metric's latest value replaces the result's own.
      const ids = [...byLog.keys()];
      for (let i = 0; i < ids.length; i += 1000) {
        const targets = ids.slice(i, i + 1000).map((id) => `l:${id}`);
        const feedback = await this.db.readOnly
          .selectFrom('feedback')
          .select(['target', 'metric', 'kind', 'value'])
          .where('experiment_id', '=', r.experimentId)
          .where('target', 'in', targets)
          .execute();
        for (const f of feedback) {
          const row = byLog.get(f.target.slice(2));
          if (row !== undefined)
            row.values[f.metric] = f.kind === 'proportion' ? Number(f.value) === 1 : Number(f.value);
        }
      }
      return out;
    });
  }
}

function toRun(row: {
  id: string;
  experiment_id: number | string;
  dataset_id: string;
  dataset_name: string;
  dataset_version: number | string;
  variants: string;
  trials: number | string;
  items: number | string;
  created_at: unknown;
}): OfflineRun {
  return {
    id: row.id,
    experimentId: Number(row.experiment_id),
    datasetId: row.dataset_id,
    dataset: row.dataset_name,
    version: Number(row.dataset_version),
    variants: json<string[]>(row.variants),
    trials: Number(row.trials),
    items: Number(row.items),
    createdAt: isoTime(row.created_at as string),
  };
}
