// The memory store's rollup tables (memory-store.ts), kept as the SQL store's rollup rows: added to by
// every append and rebuild, read per experiment.
import type { DeclaredSums } from '../core/declared.js';
import { decodeExposureBatch } from '../core/exposure.js';
import {
  type ExposureUser,
  exposureUserKey,
  exposureUsersOf,
  newExposureUsers,
} from '../core/exposure-users.js';
import {
  addCallPairs,
  addSums,
  addUserPairs,
  PairMoves,
  type PairRollup,
  pairRollupKey,
  partnerKeys,
} from '../core/pairs.js';
import {
  type ExposureRollup,
  extremesAfter,
  type HourlyRollup,
  hourlyRollupKey,
  type MetricRollup,
  metricRollupKey,
  type RolledResult,
  rollUpExposures,
  rollUpHours,
  rollUpResults,
} from '../core/rollups.js';
import {
  addSketchValues,
  hourlySketchKey,
  type SketchMove,
  SketchMoves,
  sketchKey,
} from '../core/sketch-rollups.js';
import { hourOf } from '../core/time.js';
import { addUserBins, type UnitBin, UnitBinMoves, unitBinKey } from '../core/unit-bins.js';
import {
  addUnitRollup,
  applyUnitDeltasByHour,
  type HourlyUnitRollup,
  hourlyUnitRollupKey,
  unitDeltasByHour,
} from '../core/unit-hours.js';
import {
  rollUpUnits,
  type UnitDelta,
  type UnitRollup,
  type UnitSum,
  unitDeltasOfResults,
  unitKey,
} from '../core/units.js';
import type { ExposureBatch } from '../core/writes.js';
import type { HourlyData, HourlyExposure, Rollups } from './rollup-types.js';

/** A bucket_exposures row. */
export interface HourlyExposures extends HourlyExposure {
  experimentId: number;
}

const exposureKey = (r: Omit<ExposureRollup, 'n'>) =>
  `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}`;

const hourlyKey = (r: Omit<HourlyExposures, 'n'>) =>
  `${r.experimentId}\u0000${r.hour}\u0000${r.version}\u0000${r.variantKey}`;

const _unitRollupKey = (r: UnitRollup) =>
  `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.metric}\u0000${r.kind}`;

/** Adds a sketch move's count to its bin. */
function bump(rows: Map<string, SketchMove>, key: string, m: SketchMove): void {
  const total = rows.get(key);
  if (total) total.count += m.count;
  else rows.set(key, { ...m });
}

export function addCounts(rows: Map<string, ExposureRollup>, counts: ExposureRollup[]): void {
  for (const c of counts) {
    const total = rows.get(exposureKey(c));
    if (total) total.n += c.n;
    else rows.set(exposureKey(c), { ...c });
  }
}

/** Removes the rows of one experiment from a Map of rows keyed by anything. */
export function forget<T extends { experimentId: number }>(rows: Map<string, T>, experimentId: number): void {
  for (const [key, r] of rows) if (r.experimentId === experimentId) rows.delete(key);
}

const byHour = (a: { hour: string }, b: { hour: string }) => (a.hour < b.hour ? -1 : a.hour > b.hour ? 1 : 0);

/** The rollup rows of every experiment, keyed as the SQL tables' primary keys. */
export class MemoryRollups {
  /** Users' running sums (unit_sums) and exposed users (exposure_users), kept with the rollups they feed. */
  readonly unitSums = new Map<string, UnitSum>();
  readonly exposureUsers = new Map<string, ExposureUser>();
  readonly metricRollups = new Map<string, MetricRollup>();
  readonly exposureRollups = new Map<string, ExposureRollup>();
  readonly hourlyRollups = new Map<string, HourlyRollup>();
  readonly hourlyExposures = new Map<string, HourlyExposures>();
  readonly unitRollups = new Map<string, UnitRollup>();
  readonly exposureUserRollups = new Map<string, ExposureRollup>();
  readonly hourlyUnitRollups = new Map<string, HourlyUnitRollup>();
  readonly pairRollups = new Map<string, PairRollup>();
  readonly unitBins = new Map<string, UnitBin>();
  readonly sketchBins = new Map<string, SketchMove>();
  readonly hourlySketchBins = new Map<string, SketchMove>();

  /** readRollups but for `results` (the store counts its committed results). */
  read(experimentId: number): Omit<Rollups, 'results'> {
    const of = <T extends { experimentId: number }>(rows: Map<string, T>) =>
      [...rows.values()].filter((r) => r.experimentId === experimentId).map((r) => ({ ...r }));
    return {
      metrics: of(this.metricRollups),
      exposures: of(this.exposureRollups),
      units: of(this.unitRollups),
      exposureUsers: of(this.exposureUserRollups),
      pairs: of(this.pairRollups).filter((r) => r.hour === undefined),
      unitBins: of(this.unitBins).filter((b) => b.units !== 0),
      sketches: of(this.sketchBins)
        .filter((b) => b.count !== 0)
        .map(({ version, variantKey, metric, side, key, count }) => ({
          version,
          variantKey,
          metric,
          side,
          key,
          count,
        })),
    };
  }

  /** readHourly: the hourly rows of one experiment, in hour order. */
  hourly(experimentId: number): HourlyData {
    const metrics = [...this.hourlyRollups.values()]
      .filter((r) => r.experimentId === experimentId)
      .map((r) => ({ ...r }))
      .sort(byHour);
    const exposures = [...this.hourlyExposures.values()]
      .filter((r) => r.experimentId === experimentId)
      .map(({ hour, version, variantKey, n }) => ({ hour, version, variantKey, n }))
      .sort(byHour);
    const units = [...this.hourlyUnitRollups.values()]
      .filter((r) => r.experimentId === experimentId)
      .map((r) => ({ ...r }))
      .sort(byHour);
    const sketches = [...this.hourlySketchBins.values()]
      .filter((b) => b.experimentId === experimentId && b.count !== 0)
      .map(({ hour, version, variantKey, metric, side, key, count }) => ({
        hour: hour!,
        version,
        variantKey,
        metric,
        side,
        key,
        count,
      }))
      .sort(byHour);
    const pairs = [...this.pairRollups.values()]
      .filter((r) => r.experimentId === experimentId && r.hour !== undefined)
      .map((r) => ({ ...r }))
      .sort((a, b) => (a.hour! < b.hour! ? -1 : a.hour! > b.hour! ? 1 : 0));
    return { metrics, exposures, units, sketches, pairs };
  }

  addMetrics(rollups: MetricRollup[]): void {
    for (const r of rollups) addMoments(this.metricRollups, r, metricRollupKey);
  }

  addHourly(rollups: HourlyRollup[]): void {
    for (const r of rollups) addMoments(this.hourlyRollups, r, hourlyRollupKey);
  }

  addUnits(rollups: UnitRollup[]): void {
    for (const r of rollups) addUnitRollup(this.unitRollups, r);
  }

  /** Adds a batch's (or a rebuild's) pair and bin moves. */
  addDeclared(pairs: PairMoves, bins: UnitBinMoves): void {
    const { all, hourly } = pairs.split();
    for (const r of [...all, ...hourly]) {
      const k = pairRollupKey(r);
      const total = this.pairRollups.get(k);
      if (total) addSums(total, r);
      else this.pairRollups.set(k, { ...r });
    }
    for (const b of bins.rows()) {
      const k = unitBinKey(b);
      const total = this.unitBins.get(k);
      if (!total) this.unitBins.set(k, { ...b });
      else for (const c of ['units', 'sumX', 'sumX2', 'sumY', 'sumY2', 'sumXY'] as const) total[c] += b[c];
    }
  }

  addSketches(moves: SketchMoves): void {
    const { all, hourly } = moves.rows();
    for (const m of all) bump(this.sketchBins, sketchKey(m), m);
    for (const m of hourly) bump(this.hourlySketchBins, hourlySketchKey(m), m);
  }

  addExposures(rollups: ExposureRollup[]): void {
    for (const r of rollups) {
      const total = this.exposureRollups.get(exposureKey(r));
      if (!total) this.exposureRollups.set(exposureKey(r), { ...r });
      else total.n += r.n;
    }
  }

  addHourlyExposures(counts: HourlyExposures[]): void {
    for (const c of counts) {
      const total = this.hourlyExposures.get(hourlyKey(c));
      if (!total) this.hourlyExposures.set(hourlyKey(c), { ...c });
      else total.n += c.n;
    }
  }

  /** Forgets every rollup row (and users' sums) of one experiment, before a rebuild. */
  forgetExperiment(experimentId: number): void {
    for (const rows of [
      this.metricRollups,
      this.exposureRollups,
      this.hourlyRollups,
      this.hourlyExposures,
      this.unitSums,
      this.unitRollups,
      this.exposureUsers,
      this.exposureUserRollups,
      this.hourlyUnitRollups,
      this.sketchBins,
      this.hourlySketchBins,
      this.pairRollups,
      this.unitBins,
    ] as Array<Map<string, { experimentId: number }>>) {
      forget(rows, experimentId);
    }
  }

  /**
   * As rebuild.ts, once forgotten: adds the rollups of `rolled` (results, then feedback) and of the
   * exposure `batches`; answers the exposures counted.
   */
  rebuild(
    id: number,
    rolled: RolledResult[],
    batches: ExposureBatch[],
    perUser: boolean,
    declared: DeclaredSums | null,
    results: number,
  ): number {
    // Calls' pairs from the results (the first `results` rows; feedback follows them), as live writes.
    const pairs = new PairMoves();
    addCallPairs(
      pairs,
      rolled.slice(0, results).map((r) => ({ ...r, declared })),
    );
    const bins = new UnitBinMoves();
    this.addMetrics(rollUpResults(rolled));
    this.addHourly(rollUpHours(rolled));
    const sums = unitDeltasOfResults(rolled).map((d): UnitSum => {
      const { dn, dsum, ...key } = d;
      return { ...key, n: dn, sum: dsum };
    });
    for (const s of sums) this.unitSums.set(unitKey(s), s);
    this.addUnits(rollUpUnits(sums));
    // Hour by hour, feedback at its first hour (what rebuild.ts can and cannot reproduce).
    const hours = applyUnitDeltasByHour(unitDeltasByHour(rolled), new Map(), (hour, before, after) => {
      addUserPairs(pairs, hour, before, after, () => declared);
      addUserBins(bins, before, after, () => declared);
    });
    this.addDeclared(pairs, bins);
    for (const r of hours.hourly) addUnitRollup(this.hourlyUnitRollups, r, hourlyUnitRollupKey);
    const sketches = new SketchMoves();
    addSketchValues(sketches, rolled);
    this.addSketches(sketches);

    const assigned = batches.flatMap((b) => decodeExposureBatch(b.json, id, b.version));
    const counted = rollUpExposures(assigned);
    if (perUser) {
      const users = newExposureUsers(exposureUsersOf(batches.map((b) => ({ ...b, unit: true }))), new Set());
      for (const u of users.rows) this.exposureUsers.set(exposureUserKey(u), { ...u });
      addCounts(this.exposureUserRollups, users.counts);
    }
    this.addExposures(counted);
    this.addHourlyExposures(
      assigned.map((e) => ({
        experimentId: id,
        hour: hourOf(e.createdAt),
        version: e.version,
        variantKey: e.variantKey,
        n: 1,
      })),
    );
    return counted.reduce((n, r) => n + r.n, 0);
  }

  /** The users' sums the deltas move (what batch-plan.ts reads), copied. */
  storedSums(
    deltas: UnitDelta[],
    declared: (experimentId: number) => DeclaredSums | null | undefined = () => null,
  ): Map<string, UnitSum> {
    const current = new Map<string, UnitSum>();
    for (const d of [...deltas, ...partnerKeys(deltas, declared)]) {
      const sum = this.unitSums.get(unitKey(d));
      if (sum) current.set(unitKey(d), { ...sum });
    }
    return current;
  }
}

/**
 * Adds a rollup's n, sum and sum of squares to the total under its key (a copy when it is the first), and
 * moves its min and max as the SQL upsert does (core/rollups.ts extremesAfter).
 */
function addMoments<T extends MetricRollup>(totals: Map<string, T>, r: T, key: (r: T) => string): void {
  const k = key(r);
  const total = totals.get(k);
  if (!total) {
    totals.set(k, { ...r, minValue: r.minValue ?? null, maxValue: r.maxValue ?? null });
    return;
  }
  total.n += r.n;
  total.sum += r.sum;
  total.sumSquares += r.sumSquares;
  Object.assign(total, extremesAfter(total, r));
}
