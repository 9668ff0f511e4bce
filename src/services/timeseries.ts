// An experiment over time: one metric's cumulative effect per hour or day, read from the hourly rollups
// (never from raw results), and the variant definitions of every version. Sticky experiments are read per
// user from the hourly moves of the per-user sums, so the last period is the analysis' own reading.

import { checkPoints } from '../core/answer-bounds.js';
import { pairId } from '../core/declared.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import { NAMES_IN_A_MESSAGE, someOf } from '../core/messages.js';
import { findDefinition, type MetricDefinition } from '../core/metric-definitions.js';
import type { PairRollup } from '../core/pairs.js';
import { dayOf, hourOf, minuteOf } from '../core/time.js';
import type { Variant } from '../core/variants.js';
import {
  type AnalysisMethod,
  cumulativeSeries,
  groupByMetric,
  type HourlyUnitRow,
  quantileLevel,
  type SidedOption,
  unknownVariantKeys,
} from '../stats/index.js';
import type { Timeseries } from '../stats/timeseries-schema.js';
import type { Store } from '../store/store.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';
import { minuteWindow, readMinutes } from './timeseries-minutes.js';

export type Interval = 'minute' | 'hour' | 'day';

export interface TimeseriesQuery {
  metric: string;
  interval?: Interval;
  control?: string;
  alpha?: number;
  method?: AnalysisMethod;
  sided?: SidedOption;
  nStar?: number;
}

/** What timeseries() answers, declared once as its schema (stats/timeseries-schema.ts). */
export type { Timeseries };

export interface VersionHistory {
  versions: Array<{ version: number; createdAt: string; variants: Variant[] }>;
}

export interface TimeseriesDeps {
  experiments: Pick<ExperimentCache, 'find'>;
  store: Pick<Store, 'readHourly' | 'listVersions' | 'listResults' | 'listExposures'>;
}

export class TimeseriesService {
  constructor(private readonly deps: TimeseriesDeps) {}

  async timeseries(slug: string, q: TimeseriesQuery): Promise<Timeseries> {
    return this.timeseriesOf(await this.live(slug), q);
  }

  /** The series of an experiment already found (a worker gets its id and definition by message). */
  async timeseriesOf(
    live: Pick<LiveExperiment, 'id' | 'experiment'>,
    q: TimeseriesQuery,
  ): Promise<Timeseries> {
    const { experiment } = live;
    const keys = experiment.variants.map((v) => v.key);
    const control = q.control ?? keys[0]!;
    if (!keys.includes(control)) {
      throw new ValidationError(
        `control '${control}' is not a variant of '${experiment.slug}' (variants: ${keys.join(', ')})`,
      );
    }
    const hourly = await this.deps.store.readHourly(live.id);
    const byMetric = groupByMetric(hourly.metrics);
    const definition = findDefinition(experiment.metrics, q.metric);
    const sticky = experiment.assignment === 'sticky';
    const ratio = ratioRows(definition, hourly.pairs, sticky);
    let rows = ratio ? [] : byMetric.get(q.metric);
    if (!rows) {
      const available = [...byMetric.keys()].sort();
      const known = available.length > 0 ? someOf(available, NAMES_IN_A_MESSAGE, false) : 'none yet';
      throw new ValidationError(
        `metric '${q.metric}' has no data in '${experiment.slug}' (metrics: ${known})`,
      );
    }
    const direction = definition?.direction ?? null;
    const interval = q.interval ?? 'day';
    let exposures = hourly.exposures;
    let units: readonly HourlyUnitRow[] = hourly.units;
    if (interval === 'minute') {
      if (ratio || quantileLevel(definition?.statistic ?? 'mean') !== null) {
        throw new ValidationError(
          `interval=minute reads mean and proportion metrics only; read '${q.metric}' with interval=hour`,
        );
      }
      const window = minuteWindow([...rows, ...hourly.exposures].map((r) => r.hour));
      ({ rows, exposures, units } = await readMinutes(this.deps.store, live.id, q.metric, window, sticky));
    }
    const method = q.method ?? 'frequentist';
    const alpha = q.alpha ?? 0.05;
    const statistic = definition?.statistic ?? 'mean';
    const level = quantileLevel(statistic);
    const periodOf = interval === 'day' ? dayOf : interval === 'minute' ? minuteOf : hourOf;
    const periods = new Set([...rows, ...exposures, ...(ratio?.rows ?? [])].map((r) => periodOf(r.hour)));
    checkPoints({ periods: periods.size, variants: keys.length, interval });
    const series = cumulativeSeries(rows, exposures, {
      variantKeys: keys,
      control,
      method,
      alpha,
      sided: q.sided ?? 'two',
      nStar: q.nStar,
      direction,
      periodOf,
      ...(sticky ? { units: units.filter((u) => u.metric === q.metric) } : {}),
      ...(level !== null
        ? { quantile: { level, sketches: hourly.sketches.filter((b) => b.metric === q.metric) } }
        : {}),
      ...(ratio ? { ratio } : {}),
    });
    // Worded as the analysis words them, so one reading explains both answers.
    const warnings = [
      ...series.warnings.map((w) => `${q.metric}: ${w}`),
      ...[...series.variantWarnings].flatMap(([key, ws]) => ws.map((w) => `${q.metric}/${key}: ${w}`)),
    ];
    const unknown = unknownVariantKeys(rows, keys);
    if (unknown.length > 0) {
      warnings.push(
        `results for variant keys that are not variants are left out: ${someOf(unknown, NAMES_IN_A_MESSAGE, false)}`,
      );
    }
    if (definition?.cap !== undefined || definition?.covariate !== undefined) {
      warnings.push(
        `${q.metric}: the series reads the values as logged; the ${definition.cap !== undefined ? 'cap' : 'adjustment'} applies in the analysis only`,
      );
    }
    if (definition?.kind !== undefined && definition.kind !== series.kind) {
      warnings.push(
        `${q.metric}: declared as a ${definition.kind} but its values are analysed as a ${series.kind}`,
      );
    }
    return {
      slug: experiment.slug,
      metric: q.metric,
      kind: series.kind,
      direction,
      unit: series.unit,
      statistic: level !== null && series.kind === 'mean' ? statistic : 'mean',
      interval,
      control,
      method,
      alpha,
      sided: series.sided,
      periods: series.periods,
      warnings,
    };
  }

  /** Every variant definition the experiment has had, oldest first: what each version's data ran. */
  async versions(slug: string): Promise<VersionHistory> {
    const live = await this.live(slug);
    const versions = await this.deps.store.listVersions(live.id);
    return {
      versions: versions.map((v) => ({ version: v.version, createdAt: v.createdAt, variants: v.variants })),
    };
  }

  private async live(slug: string): Promise<LiveExperiment> {
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return live;
  }
}

/** A ratio metric's hourly sums in its unit (users in sticky experiments), as the series reads per-unit sums. */
function ratioRows(
  definition: MetricDefinition | undefined,
  pairs: readonly PairRollup[],
  sticky: boolean,
): { unit: 'user' | 'call'; rows: HourlyUnitRow[] } | undefined {
  if (definition?.numerator === undefined || definition.denominator === undefined) return undefined;
  const id = pairId({ role: 'ratio', first: definition.numerator, second: definition.denominator });
  const unit = sticky ? 'user' : 'call';
  const rows = pairs
    .filter((p) => p.pair === id && p.unit === unit && p.hour !== undefined)
    .map((p) => ({
      hour: p.hour!,
      version: p.version,
      variantKey: p.variantKey,
      metric: definition.name,
      kind: 'mean' as const,
      units: p.n,
      sumX: p.sumX,
      sumX2: p.sumX2,
      sumY: p.sumY,
      sumY2: p.sumY2,
      sumXY: p.sumXY,
    }));
  return { unit, rows };
}
