// Rebuilding one experiment's rollups from raw rows (results, feedback, exposures), exactly as the writes
// built them: per-call, hourly and per-user sums with their min and max, distinct users, sketch bins, and the
// segment rows (segment-rebuild.ts). Runs inside the caller's transaction, under its locks.
//
// What it cannot reproduce: the hourly unit moves (bucket_unit_rollups) of feedback corrections. Live, a
// correction moves the users' sums in the hour it is written; the feedback row keeps only its latest value
// and the hour of its first, so the rebuild counts the latest value in that first hour. Totals over all
// hours (= unit_rollups) agree; the hours between the first value and its correction differ. Nor the min
// and max (migration 017) of a metric whose extreme value a feedback correction replaced: live they are
// those of every value ever counted (an extreme cannot be taken back out), rebuilt those of the values
// counted now, a range inside the live one. Rows from before migration 017 (NULL) get theirs here.
// Everything else is replayed in the hour it was written in (a result's created_at hour, the hour its
// bucket rollups use) and comes back the same (float sums up to rounding order; integer-valued metrics
// exactly).

import type { Kysely, Transaction } from 'kysely';
import { keptOut } from '../core/assignment-id.js';
import { declaredSums } from '../core/declared.js';
import { decodeExposureBatch, type Exposure } from '../core/exposure.js';
import { type ExposureUser, exposureUserKey } from '../core/exposure-users.js';
import type { MetricDefinition } from '../core/metric-definitions.js';
import { addCallPairs, addUserPairs, PairMoves } from '../core/pairs.js';
import {
  type HourlyRollup,
  hourlyRollupKey,
  type MetricRollup,
  mergeRollups,
  metricRollupKey,
  type RolledResult,
  rollUpExposures,
  rollUpHours,
  rollUpResults,
} from '../core/rollups.js';
import { addSketchValues, SketchMoves } from '../core/sketch-rollups.js';
import { hourOf } from '../core/time.js';
import { addUserBins, UnitBinMoves } from '../core/unit-bins.js';
import { applyUnitDeltasByHour, type HourlyUnitDelta, unitDeltasByHour } from '../core/unit-hours.js';
import { rollUpUnits, type UnitSum, unitDeltasOfResults, unitKey } from '../core/units.js';
import type { ExposureBatch } from '../core/writes.js';
import type { MetricKind } from '../stats/arms.js';
import { rolledResultRow } from './batch-rows.js';
import { executeInChunks } from './compile-rows.js';
import { pairStatements } from './pair-statements.js';
import {
  countStatement,
  exposureRollupStatement,
  hourlyExposureStatement,
  hourlyRollupStatement,
  metricRollupStatement,
  unitRollupStatement,
  unitSumStatement,
} from './row-statements.js';
import { type Database, isoTime } from './schema.js';
import { rebuildSegments } from './segment-rebuild.js';
import {
  exposureUserRollupStatement,
  exposureUsersStatement,
  hourlySketchBinStatement,
  hourlyUnitRollupStatement,
  sketchBinStatement,
} from './sum-statements.js';

/** Rows read per page when rollups are rebuilt from raw data. */
const REBUILD_PAGE = 5000;
/** Exposure batches read per page (each about 4 MB of JSON at most; see ingest/exposure-queue.ts). */
const EXPOSURE_BATCH_PAGE = 4;

const ROLLUP_TABLES = [
  'metric_rollups',
  'result_rollups',
  'exposure_rollups',
  'bucket_rollups',
  'bucket_exposures',
  'unit_sums',
  'unit_rollups',
  'exposure_users',
  'exposure_user_rollups',
  'bucket_unit_rollups',
  'sketch_bins',
  'bucket_sketch_bins',
  'pair_rollups',
  'bucket_pair_rollups',
  'unit_bins',
] as const;

/** The exposures of each batch row of an experiment, in commit order, read a page of rows at a time. */
export async function* exposureBatches(
  db: Kysely<Database>,
  experimentId: number,
): AsyncGenerator<Exposure[]> {
  let after = 0;
  for (;;) {
    const page = await db
      .selectFrom('exposure_batches')
      .select(['seq', 'experiment_version', 'exposures'])
      .where('experiment_id', '=', experimentId)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(EXPOSURE_BATCH_PAGE)
      .execute();
    for (const row of page) {
      yield decodeExposureBatch(row.exposures, experimentId, Number(row.experiment_version));
    }
    if (page.length < EXPOSURE_BATCH_PAGE) return;
    after = Number(page.at(-1)!.seq);
  }
}

/** Replaces every rollup of the experiment with sums of its raw rows; returns the rows it read. */
export async function rebuildExperiment(
  trx: Transaction<Database>,
  experimentId: number,
): Promise<{ results: number; exposures: number }> {
  for (const table of ROLLUP_TABLES) {
    await trx.deleteFrom(table).where('experiment_id', '=', experimentId).execute();
  }
  const experiment = await trx
    .selectFrom('experiments')
    .select(['assignment', 'metrics'])
    .where('id', '=', experimentId)
    .executeTakeFirst();
  const perUser = experiment?.assignment === 'sticky';
  // What the definitions declare now (ratios, covariates, caps) is rebuilt over every stored row.
  const declared = experiment ? declaredSums(JSON.parse(experiment.metrics) as MetricDefinition[]) : null;
  const pairs = new PairMoves();
  const users = new Map<string, UnitSum>();
  const addUnits = (rolled: RolledResult[]) => {
    for (const d of unitDeltasOfResults(rolled)) {
      const key = unitKey(d);
      const sum = users.get(key);
      if (sum) {
        sum.n += d.dn;
        sum.sum += d.dsum;
      } else {
        users.set(key, {
          experimentId: d.experimentId,
          userId: d.userId,
          version: d.version,
          variantKey: d.variantKey,
          metric: d.metric,
          kind: d.kind,
          n: d.dn,
          sum: d.dsum,
        });
      }
    }
  };
  // Users' deltas per hour, summed as they come: the hours are replayed oldest first at the end.
  const hourly = new Map<string, HourlyUnitDelta>();
  const addHourly = (rolled: RolledResult[]) => {
    for (const d of unitDeltasByHour(rolled)) {
      const key = `${d.hour}\u0000${unitKey(d)}`;
      const acc = hourly.get(key);
      if (acc) {
        acc.dn += d.dn;
        acc.dsum += d.dsum;
      } else hourly.set(key, d);
    }
  };
  const sketches = new SketchMoves();
  let metrics: MetricRollup[] = [];
  let metricHours: HourlyRollup[] = [];
  const add = (rolled: RolledResult[]) => {
    // Summed as it goes, so memory holds the totals, not every page's parts.
    metrics = mergeRollups([...metrics, ...rollUpResults(rolled)], metricRollupKey);
    metricHours = mergeRollups([...metricHours, ...rollUpHours(rolled)], hourlyRollupKey);
    addSketchValues(sketches, rolled);
    if (perUser) {
      addUnits(rolled);
      addHourly(rolled);
    }
  };

  let results = 0;
  let counts: Array<{ experimentId: number; version: number; variantKey: string; n: number }> = [];
  let after = 0;
  for (;;) {
    const page = await trx
      .selectFrom('results')
      .select([
        'seq',
        'experiment_id',
        'experiment_version',
        'variant_key',
        'metrics',
        'metrics_over_cap',
        'user_id',
        'created_at',
        'assignment_id',
        'run_id',
      ])
      .where('experiment_id', '=', experimentId)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(REBUILD_PAGE)
      .execute();
    if (page.length === 0) break;
    results += page.length;
    after = Number(page.at(-1)!.seq);
    // Results of units that did not enter (ADR 0038) and of offline runs (issue 40) are stored, never counted.
    const rows = page.filter((r) => !keptOut(r.assignment_id, experimentId) && r.run_id === null);
    counts = rollUpExposures([
      ...counts,
      ...rows.map((r) => ({
        experimentId,
        version: Number(r.experiment_version),
        variantKey: r.variant_key,
      })),
    ]);
    const rolled = rows.map((r) => ({
      ...rolledResultRow(r),
      unitUserId: perUser ? r.user_id : null,
      hour: hourOf(isoTime(r.created_at)),
      declared,
    }));
    add(rolled);
    // Calls' pairs from results only: feedback joins pairs through users' sums (as live writes do).
    addCallPairs(pairs, rolled);
  }

  // Feedback counts once per target and metric, with its latest value, in the hour it first came.
  let last: { target: string; metric: string } | undefined;
  for (;;) {
    const rows = await trx
      .selectFrom('feedback')
      .selectAll()
      .where('experiment_id', '=', experimentId)
      .where('over_cap', '=', 0)
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
      .limit(REBUILD_PAGE)
      .execute();
    if (rows.length === 0) break;
    last = { target: rows.at(-1)!.target, metric: rows.at(-1)!.metric };
    add(
      rows.map((f) => ({
        experimentId,
        version: Number(f.experiment_version),
        variantKey: f.variant_key,
        metrics: {
          [f.metric]: (f.kind as MetricKind) === 'proportion' ? Number(f.value) === 1 : Number(f.value),
        },
        unitUserId: perUser ? f.user_id : null,
        hour: hourOf(isoTime(f.created_at)),
      })),
    );
  }

  await executeInChunks(trx, countStatement('result_rollups', counts));
  await executeInChunks(trx, metricRollupStatement(metrics));
  await executeInChunks(trx, hourlyRollupStatement(metricHours));
  const sums = [...users.values()];
  await executeInChunks(trx, unitSumStatement(sums));
  await executeInChunks(trx, unitRollupStatement(rollUpUnits(sums)));
  const bins = new UnitBinMoves();
  const hours = applyUnitDeltasByHour([...hourly.values()], new Map(), (hour, before, after) => {
    addUserPairs(pairs, hour, before, after, () => declared);
    addUserBins(bins, before, after, () => declared);
  });
  await executeInChunks(trx, hourlyUnitRollupStatement(hours.hourly));
  for (const s of pairStatements(pairs, bins)) await executeInChunks(trx, s);
  const sketchRows = sketches.rows();
  await executeInChunks(trx, sketchBinStatement(sketchRows.all));
  await executeInChunks(trx, hourlySketchBinStatement(sketchRows.hourly));
  await rebuildSegments(trx, experimentId);
  return { results, exposures: await rebuildExposures(trx, experimentId, perUser) };
}

async function rebuildExposures(
  trx: Transaction<Database>,
  experimentId: number,
  perUser: boolean,
): Promise<number> {
  // Sticky: each user's first exposure per version, in commit order (as the live inserts kept it).
  const users = new Map<string, ExposureUser>();
  // Rows written one by one before migration 003 (counted in SQL), then the batches.
  const legacy = await trx
    .selectFrom('exposures')
    .select(['experiment_version', 'variant_key', 'user_id', 'created_at'])
    .where('experiment_id', '=', experimentId)
    .execute();
  const counted: Array<{ experimentId: number; version: number; variantKey: string; n?: number }> = [];
  const hourly: ExposureBatch[] = [];
  const count = (
    exposures: Array<{ version: number; variantKey: string; userId: string; createdAt: string }>,
  ) => {
    for (const e of exposures) {
      counted.push({ experimentId, version: e.version, variantKey: e.variantKey });
      if (perUser) {
        const user = { experimentId, version: e.version, userId: e.userId, variantKey: e.variantKey };
        const key = exposureUserKey(user);
        if (!users.has(key)) users.set(key, user);
      }
      hourly.push({
        experimentId,
        version: e.version,
        hour: hourOf(e.createdAt),
        count: 1,
        variants: [{ variantKey: e.variantKey, n: 1 }],
        json: '',
      });
    }
    // Folded as it goes: memory holds counts, not exposures.
    const folded = rollUpExposures(counted);
    counted.splice(0, counted.length, ...folded);
  };
  count(
    legacy.map((r) => ({
      version: Number(r.experiment_version),
      variantKey: r.variant_key,
      userId: r.user_id,
      createdAt: isoTime(r.created_at),
    })),
  );
  const hours = new Map<string, ExposureBatch>();
  const foldHours = () => {
    for (const h of hourly) {
      const key = `${h.version}\u0000${h.hour}\u0000${h.variants[0]!.variantKey}`;
      const acc = hours.get(key);
      if (acc) acc.variants[0]!.n += 1;
      else hours.set(key, h);
    }
    hourly.length = 0;
  };
  foldHours();
  for await (const exposures of exposureBatches(trx, experimentId)) {
    count(exposures);
    foldHours();
  }
  const rollups = rollUpExposures(counted);
  await executeInChunks(trx, exposureRollupStatement(rollups));
  await executeInChunks(trx, hourlyExposureStatement([...hours.values()]));
  const distinct = [...users.values()];
  await executeInChunks(trx, exposureUsersStatement(distinct));
  await executeInChunks(trx, exposureUserRollupStatement(rollUpExposures(distinct)));
  return rollups.reduce((a, r) => a + r.n, 0);
}

/** The ids of `experimentId`, or of every experiment when it is undefined. */
export async function experimentIds(trx: Transaction<Database>, experimentId?: number): Promise<number[]> {
  if (experimentId !== undefined) return [experimentId];
  return (await trx.selectFrom('experiments').select('id').execute()).map((r) => Number(r.id));
}

/** Rebuilds the rollups of these experiments (locked against appends by the caller): the rows read. */
export async function rebuildExperiments(
  trx: Transaction<Database>,
  ids: number[],
): Promise<{ results: number; exposures: number }> {
  let results = 0;
  let exposures = 0;
  for (const id of ids) {
    const counts = await rebuildExperiment(trx, id);
    results += counts.results;
    exposures += counts.exposures;
  }
  return { results, exposures };
}
