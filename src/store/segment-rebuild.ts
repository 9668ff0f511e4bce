// Rebuilding one experiment's segment rows (metric sums, result counts, users' sums and sketch bins per
// segment value) from raw rows, as the writes built them: each result in the values it recorded when it
// was committed (results.segments; a key that waited for a client's exposure counts under the value that
// exposure stored, as it did live once it came), each feedback row's latest value in the segments it
// records (feedback.segments). Results written before migration 018 recorded nothing: they count in the
// values their own context, else their assignment's, has for the keys declared now (the rows they fill
// in did not exist; where a key was declared after such a result, the rebuild counts it and live did not).
// Runs inside the caller's transaction, under its locks (rebuild.ts).

import type { Transaction } from 'kysely';
import { keptOut } from '../core/assignment-id.js';
import { declaredSums } from '../core/declared.js';
import type { MetricDefinition } from '../core/metric-definitions.js';
import { mergeRollups, metricRollupKey } from '../core/rollups.js';
import { addSegmentCallPairs, addSegmentUserPairs, SegmentPairMoves } from '../core/segment-pairs.js';
import {
  addSegmentValue,
  addToSegmentSums,
  noSegmentMoves,
  rollUpSegmentUnits,
  type SegmentUnitSum,
} from '../core/segment-units.js';
import {
  resultSegments,
  rollUpSegments,
  type SegmentCount,
  type SegmentedResult,
  type SegmentRollup,
} from '../core/segments.js';
import type { MetricKind } from '../stats/arms.js';
import { rolledResultRow } from './batch-rows.js';
import { executeInChunks } from './compile-rows.js';
import { segmentPairStatements } from './pair-statements.js';
import type { Database } from './schema.js';
import type { SegmentRecord } from './segment-plan.js';
import { segmentLookups, segmentResultStatement, segmentRollupStatement } from './segment-rows.js';
import { SEGMENT_SUM_TABLES, segmentSumStatements } from './segment-sums.js';

/** Rows read per page. */
const PAGE = 5000;

const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;
const segmentKey = (r: SegmentRollup) => `${metricRollupKey(r)}\u0000${r.key}\u0000${r.value}`;
const countKey = (c: SegmentCount) =>
  `${c.key}\u0000${c.value}\u0000${c.version}\u0000${c.variantKey}\u0000${c.experimentId}`;

/** A result's values to count under: those it knows, and keys whose value is its assignment's. */
interface Pending {
  row: SegmentedResult;
  assignmentId: string | null;
  lookup: string[];
}

/** Replaces the experiment's segment rows with sums of its raw rows. */
export async function rebuildSegments(trx: Transaction<Database>, experimentId: number): Promise<void> {
  for (const table of [
    'segment_rollups',
    'segment_results',
    'segment_pair_rollups',
    ...SEGMENT_SUM_TABLES,
  ] as const) {
    await trx.deleteFrom(table).where('experiment_id', '=', experimentId).execute();
  }
  const experiment = await trx
    .selectFrom('experiments')
    .select(['assignment', 'segments', 'metrics'])
    .where('id', '=', experimentId)
    .executeTakeFirst();
  if (!experiment) return;
  const perUser = experiment.assignment === 'sticky';
  const keys = json<string[]>(experiment.segments);
  const declared = declaredSums(json<MetricDefinition[]>(experiment.metrics));
  const pairs = new SegmentPairMoves();
  const recordedAfter = await trx
    .selectFrom('segments_recorded')
    .select((eb) => eb.fn.max('after_seq').as('after'))
    .executeTakeFirst();
  const after = Number(recordedAfter?.after ?? 0);

  let metrics: SegmentRollup[] = [];
  let counts: SegmentCount[] = [];
  // Summed as it goes, so memory holds the totals, not every page's parts.
  const moves = noSegmentMoves();
  const sums = new Map<string, SegmentUnitSum>();
  const add = (results: SegmentedResult[]) => {
    const rolledUp = rollUpSegments(results, { units: [], sketches: moves.sketches });
    metrics = mergeRollups([...metrics, ...rolledUp.metrics], segmentKey);
    counts = mergeCounts([...counts, ...rolledUp.counts]);
    addToSegmentSums(sums, rolledUp.units);
    addSegmentCallPairs(pairs, results);
  };

  let seq = 0;
  for (;;) {
    const rows = await trx
      .selectFrom('results')
      .select([
        'seq',
        'experiment_id',
        'experiment_version',
        'variant_key',
        'metrics',
        'metrics_over_cap',
        'user_id',
        'assignment_id',
        'context',
        'segments',
        'run_id',
      ])
      .where('experiment_id', '=', experimentId)
      .where('seq', '>', seq)
      .orderBy('seq')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    seq = Number(rows.at(-1)!.seq);
    const page: Pending[] = [];
    for (const r of rows) {
      // Stored, never counted: a unit that did not enter (ADR 0038), an offline run's result (issue 40).
      if (keptOut(r.assignment_id, experimentId) || r.run_id !== null) continue;
      const rolled = { ...rolledResultRow(r), unitUserId: perUser ? r.user_id : null, declared };
      let values: Record<string, string> = {};
      let lookup: string[] = [];
      if (Number(r.seq) > after) {
        for (const [key, value] of Object.entries(json<SegmentRecord | null>(r.segments) ?? {})) {
          if (value === null) lookup.push(key);
          else values[key] = value;
        }
      } else {
        const found = resultSegments(
          json(r.context),
          keys,
          r.assignment_id === null ? undefined : { id: r.assignment_id, clientMade: false },
        );
        if (found) ({ values, lookup } = found);
      }
      if (Object.keys(values).length > 0 || lookup.length > 0) {
        page.push({ row: { rolled, segments: values }, assignmentId: r.assignment_id, lookup });
      }
    }
    add(await withAssignmentValues(trx, experimentId, page));
  }

  // Feedback: each row's latest value, in the segments it records.
  let last: { target: string; metric: string } | undefined;
  for (;;) {
    const rows = await trx
      .selectFrom('feedback')
      .selectAll()
      .where('experiment_id', '=', experimentId)
      .where('over_cap', '=', 0)
      .where('segments', 'is not', null)
      .where((eb) =>
        last === undefined
          ? eb.lit(true)
          : eb.or([
              eb('target', '>', last.target),
              eb.and([eb('target', '=', last.target), eb('metric', '>', last.metric)]),
            ]),
      )
      .orderBy('target')
      .orderBy('metric')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    last = { target: rows.at(-1)!.target, metric: rows.at(-1)!.metric };
    for (const f of rows) {
      const at = { experimentId, version: Number(f.experiment_version), variantKey: f.variant_key };
      const segments = json<Record<string, string>>(f.segments);
      const userId = perUser ? f.user_id : null;
      addSegmentValue(moves, at, segments, f.metric, f.kind as MetricKind, Number(f.value), 1, userId);
    }
  }
  metrics = mergeRollups([...metrics, ...moves.metrics], segmentKey);
  addToSegmentSums(sums, moves.units);

  await executeInChunks(trx, segmentRollupStatement(metrics.filter((m) => m.n !== 0)));
  await executeInChunks(trx, segmentResultStatement(counts));
  const users = [...sums.values()].filter((s) => s.n > 0);
  addSegmentUserPairs(pairs, new Map(), users, () => declared);
  for (const st of segmentPairStatements(pairs.all())) await executeInChunks(trx, st);
  for (const st of segmentSumStatements(users, rollUpSegmentUnits(users), moves.sketches.rows())) {
    await executeInChunks(trx, st);
  }
}

/** The page's results with the values their assignments stored for the keys they look up. */
async function withAssignmentValues(
  trx: Transaction<Database>,
  experimentId: number,
  page: Pending[],
): Promise<SegmentedResult[]> {
  const ids = [
    ...new Set(page.flatMap((p) => (p.lookup.length > 0 && p.assignmentId ? [p.assignmentId] : []))),
  ];
  const stored = new Map<string, Map<string, string>>();
  if (ids.length > 0) {
    for (const a of await segmentLookups(trx).assignments(experimentId, ids)) {
      const values = stored.get(a.assignmentId) ?? new Map<string, string>();
      values.set(a.key, a.value);
      stored.set(a.assignmentId, values);
    }
  }
  return page.map(({ row, assignmentId, lookup }) => {
    const found = assignmentId === null ? undefined : stored.get(assignmentId);
    for (const key of lookup) {
      const value = found?.get(key);
      if (value !== undefined) row.segments[key] = value;
    }
    return row;
  });
}

/** Result counts summed per segment value, version and variant. */
function mergeCounts(counts: SegmentCount[]): SegmentCount[] {
  const byKey = new Map<string, SegmentCount>();
  for (const c of counts) {
    const k = countKey(c);
    const acc = byKey.get(k);
    if (acc) acc.n += c.n;
    else byKey.set(k, { ...c });
  }
  return [...byKey.values()];
}
