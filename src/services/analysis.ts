// Analysis of an experiment from its rollups (never from raw results): fetches the rollups, checks the
// query, and assembles the answer from the pure statistics (summaries, effects, SRM, corrections).
import { NotFoundError, ValidationError } from '../core/errors.js';
import { NAMES_IN_A_MESSAGE, someOf } from '../core/messages.js';
import {
  type AnalysisMethod,
  type Correction,
  compareArms,
  correctSignificance,
  countExposures,
  type EffectEstimate,
  foldArms,
  groupByMetric,
  type Interval,
  type MetricKind,
  type MetricRollupRow,
  type Sided,
  srmAcrossVersions,
  summarizeArm,
  toArmData,
  unknownVariantKeys,
} from '../stats/index.js';
import type { Store } from '../store/store.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

export type Method = AnalysisMethod;
export type { Correction };

export interface AnalysisQuery {
  control?: string;
  metrics?: string[];
  alpha?: number;
  method?: Method;
  sided?: Sided;
  correction?: Correction;
  version?: number;
  nStar?: number;
}

export interface VariantAnalysis {
  key: string;
  n: number;
  mean: number | null;
  stdDev: number | null;
  absolute?: EffectEstimate;
  relative?: EffectEstimate;
  /** p-value after the requested correction (absent with correction=none). */
  adjustedPValue?: number | null;
  chanceToWin?: number | null;
  risk?: Interval;
  significant?: boolean;
}

export interface MetricAnalysis {
  name: string;
  kind: MetricKind;
  variants: VariantAnalysis[];
}

export interface Analysis {
  slug: string;
  control: string;
  method: Method;
  alpha: number;
  sided: Sided;
  correction: Correction;
  version: number | null;
  exposures: Record<string, number>;
  srm: { chiSquare: number | null; pValue: number | null; mismatch: boolean };
  metrics: MetricAnalysis[];
  warnings: string[];
}

export interface AnalysisDeps {
  experiments: Pick<ExperimentCache, 'find'>;
  store: Pick<Store, 'readRollups' | 'listVersions'>;
}

interface Options {
  method: Method;
  alpha: number;
  sided: Sided;
  nStar?: number;
}

export class AnalysisService {
  constructor(private readonly deps: AnalysisDeps) {}

  async analyze(slug: string, q: AnalysisQuery): Promise<Analysis> {
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return this.run(live, q);
  }

  private async run(live: LiveExperiment, q: AnalysisQuery): Promise<Analysis> {
    const { experiment } = live;
    const keys = experiment.variants.map((v) => v.key);
    const control = q.control ?? keys[0]!;
    if (!keys.includes(control)) {
      throw new ValidationError(
        `control '${control}' is not a variant of '${experiment.slug}' (variants: ${keys.join(', ')})`,
      );
    }
    if (q.version !== undefined && (q.version < 1 || q.version > experiment.version)) {
      throw new ValidationError(`version must be between 1 and ${experiment.version} (got ${q.version})`);
    }
    const method = q.method ?? 'frequentist';
    const alpha = q.alpha ?? 0.05;
    const sided = q.sided ?? 'two';
    const correction = q.correction ?? 'none';
    const warnings: string[] = [];
    const inVersion = (v: { version: number }) => q.version === undefined || v.version === q.version;

    const [rollups, versions] = await Promise.all([
      this.deps.store.readRollups(live.id),
      this.deps.store.listVersions(live.id),
    ]);
    const exposureRows = rollups.exposures.filter(inVersion);
    const exposures = countExposures(exposureRows, keys);
    const { warnings: srmWarnings, ...srm } = srmAcrossVersions(exposureRows, versions.filter(inVersion));
    warnings.push(...srmWarnings.map((w) => `srm: ${w}`));

    const metricRollups = rollups.metrics.filter(inVersion);
    const byMetric = groupByMetric(metricRollups);
    const available = [...byMetric.keys()].sort();
    const names = q.metrics ?? available;
    for (const name of names) {
      if (!byMetric.has(name)) {
        const known = available.length > 0 ? someOf(available, NAMES_IN_A_MESSAGE, false) : 'none yet';
        throw new ValidationError(`metric '${name}' has no data in '${experiment.slug}' (metrics: ${known})`);
      }
    }
    const unknownVariants = unknownVariantKeys(metricRollups, keys);
    if (unknownVariants.length > 0) {
      warnings.push(
        `results for variant keys that are not variants are left out: ${someOf(unknownVariants, NAMES_IN_A_MESSAGE, false)}`,
      );
    }

    const options = { method, alpha, sided, nStar: q.nStar };
    const analysed = names.map((name) => metric(name, byMetric.get(name)!, keys, control, options, warnings));
    const corrected = correctSignificance(analysed, { correction, alpha, method });
    warnings.push(...corrected.warnings);
    if (srm.mismatch) {
      warnings.push(
        `sample-ratio mismatch: exposures do not match trafficPercent (p = ${srm.pValue}); check assignment before trusting effects`,
      );
    }
    return {
      slug: experiment.slug,
      control,
      method,
      alpha,
      sided,
      correction,
      version: q.version ?? null,
      exposures,
      srm,
      metrics: corrected.metrics,
      warnings,
    };
  }
}

/** One metric: `rows` are its rollups (every variant, the selected versions); warnings say where from. */
function metric(
  name: string,
  rows: MetricRollupRow[],
  keys: string[],
  control: string,
  o: Options,
  warnings: string[],
): MetricAnalysis {
  const { kind, arms, warnings: foldWarnings } = foldArms(rows, keys);
  warnings.push(...foldWarnings.map((w) => `${name}: ${w}`));
  const controlData = toArmData(kind, arms.get(control)!);
  const variants = keys.map((key): VariantAnalysis => {
    const arm = arms.get(key)!;
    const data = toArmData(kind, arm);
    const summary = summarizeArm(data);
    const base = { key, n: arm.n, mean: summary.mean, stdDev: summary.stdDev };
    if (key === control) return base;
    const { warnings: compareWarnings, ...comparison } = compareArms(controlData, data, o);
    warnings.push(...compareWarnings.map((w) => `${name}/${key}: ${w}`));
    return { ...base, ...comparison };
  });
  return { name, kind, variants };
}
