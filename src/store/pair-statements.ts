// The rows of migration 019 (ADR 0035): pair sums (core/pairs.ts), all-time and hourly, and users' bins of
// capped metrics (core/unit-bins.ts), written as multi-row upserts that add the batch's moves (in key order on PostgreSQL);
// and their reads for the analysis and the time series.
import type { Kysely } from 'kysely';
import { PAIR_SUMS, type PairMoves, type PairRollup } from '../core/pairs.js';
import type { SegmentPairRollup } from '../core/segment-pairs.js';
import type { UnitBin, UnitBinMoves } from '../core/unit-bins.js';
import type { SketchSide } from '../stats/sketch.js';
import { rowsOf } from './columns.js';
import { type RowStatement, upsertStatement } from './row-statements.js';
import type { Database } from './schema.js';

const pairRow = rowsOf<PairRollup>(['experimentId', 'version', 'variantKey', 'pair', 'unit', ...PAIR_SUMS]);
const hourlyPairRow = rowsOf<PairRollup>([
  'experimentId',
  'hour',
  'version',
  'variantKey',
  'pair',
  'unit',
  ...PAIR_SUMS,
]);
const unitBinRow = rowsOf<UnitBin>([
  'experimentId',
  'version',
  'variantKey',
  'metric',
  'side',
  'key',
  'units',
  'sumX',
  'sumX2',
  'sumY',
  'sumY2',
  'sumXY',
]);

/** The statements of a batch's (or a rebuild's) pair and bin moves; empty ones left out. */
export function pairStatements(pairs: PairMoves, bins: UnitBinMoves): RowStatement[] {
  const { all, hourly } = pairs.split();
  return [
    upsertStatement('pair_rollups', all.map(pairRow)),
    upsertStatement('bucket_pair_rollups', hourly.map(hourlyPairRow)),
    upsertStatement('unit_bins', bins.rows().map(unitBinRow)),
  ].filter((s) => s.rows.length > 0);
}

type PairRow = Omit<Database['pair_rollups'], 'experiment_id'> & { bucket?: string };

const pairOf = (experimentId: number, r: PairRow): PairRollup => ({
  experimentId,
  version: Number(r.experiment_version),
  variantKey: r.variant_key,
  pair: r.pair,
  unit: r.unit as PairRollup['unit'],
  ...(r.bucket === undefined ? {} : { hour: r.bucket }),
  n: Number(r.n),
  sumX: Number(r.sum_x),
  sumX2: Number(r.sum_x2),
  sumY: Number(r.sum_y),
  sumY2: Number(r.sum_y2),
  sumXY: Number(r.sum_xy),
  sumZ: Number(r.sum_z),
  sumZ2: Number(r.sum_z2),
  sumXZ: Number(r.sum_xz),
  sumYZ: Number(r.sum_yz),
});

/** An experiment's pair sums, all-time. */
export async function readPairRollups(db: Kysely<Database>, experimentId: number): Promise<PairRollup[]> {
  const rows = await db
    .selectFrom('pair_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .execute();
  return rows.map((r) => pairOf(experimentId, r));
}

/** An experiment's hourly pair moves (the time series cumulates them). */
export async function readHourlyPairRollups(
  db: Kysely<Database>,
  experimentId: number,
): Promise<PairRollup[]> {
  const rows = await db
    .selectFrom('bucket_pair_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .orderBy('bucket')
    .execute();
  return rows.map((r) => pairOf(experimentId, r));
}

/** An experiment's users' bins of capped metrics (empty bins left out). */
export async function readUnitBins(db: Kysely<Database>, experimentId: number): Promise<UnitBin[]> {
  const rows = await db
    .selectFrom('unit_bins')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('units', '>', 0)
    .execute();
  return rows.map((r) => ({
    experimentId,
    version: Number(r.experiment_version),
    variantKey: r.variant_key,
    metric: r.metric,
    side: Number(r.side) as SketchSide,
    key: Number(r.key),
    units: Number(r.units),
    sumX: Number(r.sum_x),
    sumX2: Number(r.sum_x2),
    sumY: Number(r.sum_y),
    sumY2: Number(r.sum_y2),
    sumXY: Number(r.sum_xy),
  }));
}

const segmentPairRow = rowsOf<SegmentPairRollup>([
  'experimentId',
  'key',
  'value',
  'version',
  'variantKey',
  'pair',
  'unit',
  ...PAIR_SUMS,
]);

/** Pair moves per segment value (core/segment-pairs.ts); the segment key's column is segment_key. */
export function segmentPairStatements(rows: SegmentPairRollup[]): RowStatement[] {
  if (rows.length === 0) return [];
  return [
    upsertStatement(
      'segment_pair_rollups',
      rows.map((r) => {
        const { key: _key, ...row } = segmentPairRow(r);
        return { ...row, segment_key: r.key };
      }),
    ),
  ];
}

/** An experiment's pair sums per value of one segment key. */
export async function readSegmentPairs(
  db: Kysely<Database>,
  experimentId: number,
  key: string,
): Promise<SegmentPairRollup[]> {
  const rows = await db
    .selectFrom('segment_pair_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('segment_key', '=', key)
    .execute();
  return rows.map((r) => {
    const { hour: _h, ...pair } = pairOf(experimentId, r);
    return { ...pair, key, value: r.value };
  });
}
