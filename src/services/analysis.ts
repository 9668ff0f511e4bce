// Analysis of an experiment from its rollups (never from raw results): fetches the rollups, checks the
// query, and assembles the answer from the pure statistics: per-metric comparisons that follow each
// metric's declared direction, per-user units for sticky experiments, guardrails, and the verdict.
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { Variant } from '../core/experiment.js';
import { NAMES_IN_A_MESSAGE, someOf } from '../core/messages.js';
import { findDefinition, type MetricDefinition } from '../core/metric-definitions.js';
import type { UnitRollup } from '../core/units.js';
import {
  type AnalysisMethod,
  type ArmData,
  type Correction,
  compareArms,
  correctSignificance,
  countExposures,
  type Direction,
  decideVerdict,
  type EffectEstimate,
  foldArms,
  groupByMetric,
  harmTest,
  type Interval,
  type MetricKind,
  type MetricRole,
  type MetricRollupRow,
  type RatioMoments,
  type Sided,
  type SidedOption,
  srmAcrossVersions,
  summarizeArm,
  toArmData,
  unitsForPower,
  unknownVariantKeys,
  type Verdict,
  type VerdictMetric,
} from '../stats/index.js';
import type { Store, StoredVersion } from '../store/store.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

export type Method = AnalysisMethod;
export type { Correction };

export interface AnalysisQuery {
  control?: string;
  metrics?: string[];
  alpha?: number;
  method?: Method;
  sided?: SidedOption;
  correction?: Correction;
  version?: number;
  nStar?: number;
}

/** What a metric is analysed per: the user (sticky experiments, ADR 0018) or the call. */
export type Unit = 'user' | 'call';

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
  /** Significantly better (worse) than the control in the metric's direction; null without a direction. */
  better?: boolean | null;
  worse?: boolean | null;
  /** Guardrails: the one-sided test for harm. */
  harm?: {
    pValue: number | null;
    chanceOfHarm: number | null;
    harmful: boolean;
    /** The effects with the harm test's one-sided interval (the bound on the harmful side). */
    absolute: EffectEstimate;
    relative: EffectEstimate;
  };
  /** With a declared minimum detectable effect: units this variant still needs at 80% power (0: enough). */
  moreUnits?: number | null;
}

export interface MetricAnalysis {
  name: string;
  kind: MetricKind;
  /** Which way is better, as declared; null: undeclared (no chance to win, no win wording). */
  direction: Direction | null;
  role: MetricRole | null;
  unit: Unit;
  /** The alternative tested for this metric (sided=better resolves per metric). */
  sided: Sided;
  minimumDetectableEffect: number | null;
  variants: VariantAnalysis[];
}

export interface Analysis {
  slug: string;
  control: string;
  method: Method;
  alpha: number;
  sided: SidedOption;
  correction: Correction;
  version: number | null;
  /** The versions whose data is analysed (one with ?version=N, else every version with data). */
  versions: number[];
  unit: Unit;
  exposures: Record<string, number>;
  /** Results per variant key in the versions analysed (keys that are not variants are not counted). */
  results: Record<string, number>;
  srm: { chiSquare: number | null; pValue: number | null; mismatch: boolean };
  verdict: Verdict;
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
  sided: SidedOption;
  nStar?: number;
}

/** One metric's arms per variant, per call or per user, with what decided the unit. */
interface Arms {
  kind: MetricKind;
  unit: Unit;
  data: Map<string, ArmData>;
  n: Map<string, number>;
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
    if (q.version !== undefined && (q.version < 1 || q.version > experiment.version)) {
      throw new ValidationError(`version must be between 1 and ${experiment.version} (got ${q.version})`);
    }
    const [rollups, versions] = await Promise.all([
      this.deps.store.readRollups(live.id),
      this.deps.store.listVersions(live.id),
    ]);
    // Version N is read with version N's variants; pooled, with the current ones.
    const variants: Variant[] =
      q.version === undefined
        ? experiment.variants
        : (versions.find((v) => v.version === q.version)?.variants ?? experiment.variants);
    const keys = variants.map((v) => v.key);
    const control = q.control ?? keys[0]!;
    if (!keys.includes(control)) {
      const which = q.version === undefined ? '' : ` in version ${q.version}`;
      throw new ValidationError(
        `control '${control}' is not a variant of '${experiment.slug}'${which} (variants: ${keys.join(', ')})`,
      );
    }
    const method = q.method ?? 'frequentist';
    const alpha = q.alpha ?? 0.05;
    const sided = q.sided ?? 'two';
    const correction = q.correction ?? 'none';
    const warnings: string[] = [];
    const inVersion = (v: { version: number }) => q.version === undefined || v.version === q.version;

    const exposureRows = rollups.exposures.filter(inVersion);
    const exposures = countExposures(exposureRows, keys);
    const results = countExposures(rollups.results.filter(inVersion), keys);
    const { warnings: srmWarnings, ...srm } = srmAcrossVersions(exposureRows, versions.filter(inVersion));
    warnings.push(...srmWarnings.map((w) => `srm: ${w}`));

    const metricRollups = rollups.metrics.filter(inVersion);
    const analysedVersions = [...new Set([...exposureRows, ...metricRollups].map((r) => r.version))].sort(
      (a, b) => a - b,
    );
    if (q.version === undefined) warnings.push(...payloadChanges(versions, analysedVersions, keys));
    const byMetric = groupByMetric(metricRollups);
    const unitsByMetric = groupByMetric(rollups.units.filter(inVersion));
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
    const undeclared = names.filter((n) => !findDefinition(experiment.metrics, n));
    if (undeclared.length > 0 && experiment.metrics.length > 0) {
      warnings.push(
        `no direction declared for ${someOf(undeclared, NAMES_IN_A_MESSAGE, false)}: effects and intervals only, no chance to win`,
      );
    }

    const sticky = experiment.assignment === 'sticky';
    const options = { method, alpha, sided, nStar: q.nStar };
    const analysed = names.map((name) => {
      const definition = findDefinition(experiment.metrics, name);
      const arms = armsOf(name, byMetric.get(name)!, unitsByMetric.get(name) ?? [], keys, sticky, warnings);
      return analyseMetric(name, definition, arms, keys, control, options, warnings);
    });
    const corrected = correctSignificance(analysed, { correction, alpha, method });
    warnings.push(...corrected.warnings);
    if (srm.mismatch) {
      warnings.push(
        `sample-ratio mismatch: exposures do not match trafficPercent (p = ${srm.pValue}); check assignment before trusting effects`,
      );
    }
    const verdictMetrics = verdictInput(experiment.metrics, corrected.metrics, keys, control);
    const primary = verdictMetrics.find((m) => m.role === 'primary');
    const unit: Unit = sticky
      ? corrected.metrics.every((m) => m.unit === 'user')
        ? 'user'
        : 'call'
      : 'call';
    const primaryUnit = corrected.metrics.find((m) => m.name === primary?.name)?.unit ?? unit;
    const verdict = decideVerdict({
      metrics: verdictMetrics,
      srm,
      method,
      unit: primaryUnit === 'user' ? { one: 'user', other: 'users' } : { one: 'call', other: 'calls' },
    });
    return {
      slug: experiment.slug,
      control,
      method,
      alpha,
      sided,
      correction,
      version: q.version ?? null,
      versions: q.version === undefined ? analysedVersions : [q.version],
      unit,
      exposures,
      results,
      srm,
      verdict,
      metrics: corrected.metrics,
      warnings,
    };
  }
}

/**
 * Per user when the experiment is sticky and every value of the metric belongs to a user's unit (the
 * users' Σy equals the values counted per call); otherwise per call, with a warning when sticky.
 */
function armsOf(
  name: string,
  rows: MetricRollupRow[],
  unitRows: UnitRollup[],
  keys: string[],
  sticky: boolean,
  warnings: string[],
): Arms {
  const { kind, arms, warnings: foldWarnings } = foldArms(rows, keys);
  warnings.push(...foldWarnings.map((w) => `${name}: ${w}`));
  const perCall: Arms = {
    kind,
    unit: 'call',
    data: new Map(keys.map((k) => [k, toArmData(kind, arms.get(k)!)])),
    n: new Map(keys.map((k) => [k, arms.get(k)!.n])),
  };
  if (!sticky) return perCall;
  const ratios = new Map<string, RatioMoments>(
    keys.map((k) => [k, { n: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 }]),
  );
  for (const u of unitRows) {
    const r = ratios.get(u.variantKey);
    if (!r || u.kind !== kind) continue;
    r.n += u.units;
    r.sumX += u.sumX;
    r.sumX2 += u.sumX2;
    r.sumY += u.sumY;
    r.sumY2 += u.sumY2;
    r.sumXY += u.sumXY;
  }
  const values = keys.reduce((a, k) => a + arms.get(k)!.n, 0);
  const withUser = keys.reduce((a, k) => a + ratios.get(k)!.sumY, 0);
  if (values === 0 || withUser !== values) {
    if (values > 0) {
      warnings.push(
        `${name}: ${values - withUser} of ${values} values have no user's unit (results without a userId, or logged before per-user sums: run npm run rollups:rebuild); analysed per call`,
      );
    }
    return perCall;
  }
  return {
    kind,
    unit: 'user',
    data: new Map(keys.map((k) => [k, ratios.get(k)!])),
    n: new Map(keys.map((k) => [k, ratios.get(k)!.n])),
  };
}

function analyseMetric(
  name: string,
  definition: MetricDefinition | undefined,
  arms: Arms,
  keys: string[],
  control: string,
  o: Options,
  warnings: string[],
): MetricAnalysis {
  const direction = definition?.direction ?? null;
  const role = definition?.role ?? null;
  const mde = definition?.minimumDetectableEffect ?? null;
  if (definition?.kind !== undefined && definition.kind !== arms.kind) {
    warnings.push(`${name}: declared as a ${definition.kind} but its values are analysed as a ${arms.kind}`);
  }
  const controlData = arms.data.get(control)!;
  const controlSummary = summarizeArm(controlData);
  let metricSided: Sided = o.sided === 'better' ? 'two' : o.sided;
  const variants = keys.map((key): VariantAnalysis => {
    const data = arms.data.get(key)!;
    const summary = summarizeArm(data);
    const base = { key, n: arms.n.get(key)!, mean: summary.mean, stdDev: summary.stdDev };
    if (key === control) return base;
    const {
      warnings: compareWarnings,
      sided,
      direction: _d,
      ...comparison
    } = compareArms(controlData, data, {
      ...o,
      direction,
    });
    metricSided = sided;
    warnings.push(...compareWarnings.map((w) => `${name}/${key}: ${w}`));
    const out: VariantAnalysis = { ...base, ...comparison };
    if (role === 'guardrail') {
      const harm = harmTest(controlData, data, {
        method: o.method,
        alpha: o.alpha,
        direction,
        nStar: o.nStar,
      });
      warnings.push(...harm.warnings.map((w) => `${name}/${key}: ${w}`));
      out.harm = {
        pValue: harm.pValue,
        chanceOfHarm: harm.chanceOfHarm,
        harmful: harm.harmful,
        absolute: harm.absolute,
        relative: harm.relative,
      };
    }
    // Not yet significant: roughly how many more units the declared effect needs at 80% power.
    if (mde !== null && !comparison.significant) {
      const needed = unitsForPower({
        variance: controlSummary.variance,
        controlMean: controlSummary.mean,
        mde,
        alpha: o.alpha,
        sided: metricSided,
      });
      out.moreUnits = needed === null ? null : Math.max(0, needed - Math.min(base.n, arms.n.get(control)!));
    }
    return out;
  });
  return {
    name,
    kind: arms.kind,
    direction,
    role,
    unit: arms.unit,
    sided: metricSided,
    minimumDetectableEffect: mde,
    variants,
  };
}

/** The declared metrics as the verdict reads them; a declared metric without data has n = 0 everywhere. */
function verdictInput(
  definitions: readonly MetricDefinition[],
  metrics: readonly MetricAnalysis[],
  keys: string[],
  control: string,
): VerdictMetric[] {
  return definitions.map((d): VerdictMetric => {
    const m = metrics.find((x) => x.name === d.name);
    return {
      name: d.name,
      role: d.role,
      direction: d.direction,
      kind: m?.kind ?? d.kind ?? 'mean',
      control,
      mde: d.minimumDetectableEffect ?? null,
      variants: m
        ? m.variants.map((v) => ({
            key: v.key,
            n: v.n,
            comparison:
              v.absolute && v.relative
                ? {
                    absolute: v.absolute,
                    relative: v.relative,
                    chanceToWin: v.chanceToWin ?? null,
                    better: v.better ?? null,
                    worse: v.worse ?? null,
                    adjustedPValue: v.adjustedPValue,
                  }
                : null,
            harm: v.harm ?? null,
            moreUnits: v.moreUnits ?? null,
          }))
        : keys.map((key) => ({ key, n: 0 })),
    };
  });
}

/** A warning per variant whose payload changed between the versions pooled together. */
function payloadChanges(
  versions: readonly StoredVersion[],
  pooled: readonly number[],
  keys: string[],
): string[] {
  const out: string[] = [];
  const inPool = versions.filter((v) => pooled.includes(v.version));
  for (const key of keys) {
    const payloads = inPool.flatMap((v) => {
      const variant = v.variants.find((x) => x.key === key);
      return variant ? [{ version: v.version, payload: JSON.stringify(variant.payload) }] : [];
    });
    const changedAt = payloads.filter((p, i) => i > 0 && p.payload !== payloads[i - 1]!.payload);
    if (changedAt.length > 0) {
      out.push(
        `variant '${key}' changed its payload in version ${changedAt.map((c) => c.version).join(', ')}: versions ${pooled.join(', ')} are pooled; pass ?version=N to analyse one version alone`,
      );
    }
  }
  return out;
}
