// Analysis of an experiment from its rollups (never from raw results): per-variant summaries, effects
// against the control, sample-ratio mismatch, optional multiple-comparison correction.
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { Variant } from '../core/experiment.js';
import type { MetricKind, MetricRollup } from '../core/rollups.js';
import {
  type ArmData,
  adjustPValues,
  bayesianCompare,
  compareMeans,
  type EffectEstimate,
  type Interval,
  type Sided,
  sequentialCompare,
  srmTest,
  summarizeArm,
} from '../stats/index.js';
import type { Store } from '../store/store.js';
import type { ExperimentService, LiveExperiment } from './experiments.js';

export type Method = 'frequentist' | 'bayesian' | 'sequential';
export type Correction = 'none' | 'holm' | 'bh';

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
  experiments: Pick<ExperimentService, 'find'>;
  store: Pick<Store, 'readRollups' | 'listVersions'>;
}

type Arm = { n: number; sum: number; sumSquares: number };

function armData(kind: MetricKind, arm: Arm): ArmData {
  return kind === 'proportion' ? { n: arm.n, successes: arm.sum } : arm;
}

function estimate(r: {
  estimate: number | null;
  ci: Interval;
  stdError: number | null;
  pValue: number | null;
}) {
  return { estimate: r.estimate, ci: r.ci, stdError: r.stdError, pValue: r.pValue };
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
    const variantKeys = new Set(keys);
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
    const inVersion = (v: number) => q.version === undefined || v === q.version;

    const [rollups, versions] = await Promise.all([
      this.deps.store.readRollups(live.id),
      this.deps.store.listVersions(live.id),
    ]);
    const exposures = Object.fromEntries(keys.map((k) => [k, 0]));
    for (const e of rollups.exposures) {
      if (inVersion(e.version) && Object.hasOwn(exposures, e.variantKey)) exposures[e.variantKey]! += e.n;
    }
    const srm = this.srm(
      rollups.exposures.filter((e) => inVersion(e.version)),
      versions.filter((v) => inVersion(v.version)),
      warnings,
    );

    const metricRollups = rollups.metrics.filter((m) => inVersion(m.version));
    // Grouped once by name: the work stays linear in the number of rollups, however many metrics.
    const byMetric = new Map<string, MetricRollup[]>();
    for (const m of metricRollups) {
      const group = byMetric.get(m.metric);
      if (group) group.push(m);
      else byMetric.set(m.metric, [m]);
    }
    const available = [...byMetric.keys()].sort();
    const names = q.metrics ?? available;
    for (const name of names) {
      if (!byMetric.has(name)) {
        const known = available.length > 0 ? available.join(', ') : 'none yet';
        throw new ValidationError(`metric '${name}' has no data in '${experiment.slug}' (metrics: ${known})`);
      }
    }
    const unknownVariants = [
      ...new Set(metricRollups.map((m) => m.variantKey).filter((k) => !variantKeys.has(k))),
    ];
    if (unknownVariants.length > 0) {
      warnings.push(
        `results for variant keys that are not variants are left out: ${unknownVariants.join(', ')}`,
      );
    }

    const metrics = names.map((name) =>
      this.metric(
        name,
        byMetric.get(name)!,
        keys,
        control,
        { method, alpha, sided, nStar: q.nStar },
        warnings,
      ),
    );
    this.correct(metrics, correction, alpha, method, warnings);
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
      metrics,
      warnings,
    };
  }

  /** Expected counts mix each version's weights by that version's exposures, so weight changes are fair. */
  private srm(
    exposures: Array<{ version: number; variantKey: string; n: number }>,
    versions: Array<{ version: number; variants: Variant[] }>,
    warnings: string[],
  ) {
    const keys = [...new Set(versions.flatMap((v) => v.variants.map((x) => x.key)))];
    const observed = keys.map(() => 0);
    const expected = keys.map(() => 0);
    for (const v of versions) {
      const inThis = exposures.filter((e) => e.version === v.version);
      const total = inThis.reduce((a, e) => a + e.n, 0);
      for (const e of inThis) {
        const i = keys.indexOf(e.variantKey);
        if (i >= 0) observed[i]! += e.n;
      }
      for (const variant of v.variants)
        expected[keys.indexOf(variant.key)]! += (total * variant.trafficPercent) / 100;
    }
    if (observed.reduce((a, b) => a + b, 0) === 0) {
      return { chiSquare: null, pValue: null, mismatch: false };
    }
    const result = srmTest(observed, expected);
    warnings.push(...result.warnings.map((w) => `srm: ${w}`));
    return { chiSquare: result.chiSquare, pValue: result.pValue, mismatch: result.mismatch === true };
  }

  /** `mine`: this metric's rollups (every variant, the selected versions). */
  private metric(
    name: string,
    mine: MetricRollup[],
    keys: string[],
    control: string,
    o: { method: Method; alpha: number; sided: Sided; nStar?: number },
    warnings: string[],
  ): MetricAnalysis {
    const count = (kind: MetricKind) => mine.filter((m) => m.kind === kind).reduce((a, m) => a + m.n, 0);
    const kind: MetricKind = count('mean') >= count('proportion') ? 'mean' : 'proportion';
    if (count('mean') > 0 && count('proportion') > 0) {
      warnings.push(
        `${name}: has both numbers and true/false values; analysed as a ${kind}, the others ignored`,
      );
    }
    const arms = new Map<string, Arm>(keys.map((k) => [k, { n: 0, sum: 0, sumSquares: 0 }]));
    for (const m of mine) {
      const arm = arms.get(m.variantKey);
      if (!arm || m.kind !== kind) continue;
      arm.n += m.n;
      arm.sum += m.sum;
      arm.sumSquares += m.sumSquares;
    }
    const c = armData(kind, arms.get(control)!);
    const variants = keys.map((key): VariantAnalysis => {
      const data = armData(kind, arms.get(key)!);
      const summary = summarizeArm(data);
      const base = { key, n: arms.get(key)!.n, mean: summary.mean, stdDev: summary.stdDev };
      if (key === control) return base;
      return { ...base, ...this.compare(c, data, o, (w) => warnings.push(`${name}/${key}: ${w}`)) };
    });
    return { name, kind, variants };
  }

  private compare(
    control: ArmData,
    treatment: ArmData,
    o: { method: Method; alpha: number; sided: Sided; nStar?: number },
    warn: (w: string) => void,
  ): Partial<VariantAnalysis> {
    const opts = { alpha: o.alpha, sided: o.sided };
    if (o.method === 'bayesian') {
      const abs = bayesianCompare(control, treatment, { alpha: o.alpha, effect: 'absolute' });
      const rel = bayesianCompare(control, treatment, { alpha: o.alpha, effect: 'relative' });
      new Set([...abs.warnings, ...rel.warnings]).forEach(warn);
      const ctw = rel.chanceToWin ?? abs.chanceToWin;
      return {
        absolute: { estimate: abs.expected, ci: abs.ci, stdError: abs.stdDev, pValue: null },
        relative: { estimate: rel.expected, ci: rel.ci, stdError: rel.stdDev, pValue: null },
        chanceToWin: ctw,
        risk: rel.chanceToWin !== null ? rel.risk : abs.risk,
        significant: ctw !== null && (ctw > 1 - o.alpha || ctw < o.alpha),
      };
    }
    const compare =
      o.method === 'sequential'
        ? (effect: 'absolute' | 'relative') =>
            sequentialCompare(control, treatment, { ...opts, effect, nStar: o.nStar })
        : (effect: 'absolute' | 'relative') => compareMeans(control, treatment, { ...opts, effect });
    const abs = compare('absolute');
    const rel = compare('relative');
    new Set([...abs.warnings, ...rel.warnings]).forEach(warn);
    return {
      absolute: estimate(abs),
      relative: estimate(rel),
      chanceToWin: null,
      risk: [null, null],
      // The absolute effect's test is exact Welch (or its confidence sequence); the lift's needs the
      // delta method and a control mean away from 0, so significance follows the absolute one.
      significant: abs.pValue !== null && abs.pValue < o.alpha,
    };
  }

  /** Adjusts the absolute-effect p-values across metrics × treatments and re-decides significance. */
  private correct(
    metrics: MetricAnalysis[],
    correction: Correction,
    alpha: number,
    method: Method,
    warnings: string[],
  ) {
    if (correction === 'none') return;
    if (method === 'bayesian') {
      warnings.push('correction applies to p-values; it is ignored for method=bayesian');
      return;
    }
    const tested = metrics.flatMap((m) => m.variants.filter((v) => v.absolute !== undefined));
    const adjusted = adjustPValues(
      tested.map((v) => v.absolute!.pValue ?? Number.NaN),
      correction,
    ).adjusted;
    tested.forEach((v, i) => {
      v.adjustedPValue = adjusted[i] ?? null;
      v.significant = v.adjustedPValue !== null && v.adjustedPValue < alpha;
    });
  }
}
