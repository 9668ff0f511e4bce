// Analysis of an experiment from its rollups (never from raw results): fetches the rollups and the versions,
// checks the query (version, control, metric names), and hands them to the pure analyzeRollups (stats/).

import { checkFigures } from '../core/answer-bounds.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import { NAMES_IN_A_MESSAGE, someOf } from '../core/messages.js';
import { SEGMENT_NOTE } from '../core/segments.js';
import { topSegments } from '../core/top-segments.js';
import type { Variant } from '../core/variants.js';
import {
  type Analysis,
  type AnalysisMethod,
  analyzeRollups,
  type Correction,
  groupByMetric,
  type SidedOption,
} from '../stats/index.js';
import type { Store, StoredVersion } from '../store/store.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

export type Method = AnalysisMethod;
export type { Analysis, Correction };

export interface AnalysisQuery {
  control?: string;
  metrics?: string[];
  alpha?: number;
  method?: Method;
  sided?: SidedOption;
  correction?: Correction;
  version?: number;
  nStar?: number;
  /** A declared segment key: the analysis per value of it too (exploratory). */
  segment?: string;
  /** With `segment`: how many values are shown one by one (the rest merged as "(other)"); default TOP_SEGMENTS. */
  segmentValues?: number;
}

export interface AnalysisDeps {
  experiments: Pick<ExperimentCache, 'find'>;
  store: Pick<Store, 'readRollups' | 'listVersions' | 'readSegments'>;
}

/** What an analysis needs of an experiment: its store id and definition (a worker gets them by message). */
export type AnalysedExperiment = Pick<LiveExperiment, 'id' | 'experiment'>;

export class AnalysisService {
  constructor(private readonly deps: AnalysisDeps) {}

  async analyze(slug: string, q: AnalysisQuery): Promise<Analysis> {
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return this.analyzeExperiment(live, q);
  }

  async analyzeExperiment(live: AnalysedExperiment, q: AnalysisQuery): Promise<Analysis> {
    const { experiment } = live;
    if (q.version !== undefined && (q.version < 1 || q.version > experiment.version)) {
      throw new ValidationError(`version must be between 1 and ${experiment.version} (got ${q.version})`);
    }
    const segment = q.segment;
    if (segment !== undefined && !experiment.segments.includes(segment)) {
      const declared = experiment.segments.length > 0 ? experiment.segments.join(', ') : 'none';
      throw new ValidationError(
        `segment '${segment}' is not declared by '${experiment.slug}' (segments: ${declared}); declare it with PATCH /experiment/${experiment.slug} {"segments": [...]}`,
      );
    }
    const [rollups, versions, segmentRows] = await Promise.all([
      this.deps.store.readRollups(live.id),
      this.deps.store.listVersions(live.id),
      segment === undefined ? undefined : this.deps.store.readSegments(live.id, segment),
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
    const inVersion = (v: { version: number }) => q.version === undefined || v.version === q.version;
    const metrics = rollups.metrics.filter(inVersion);
    const ratios = experiment.metrics.filter((m) => m.numerator !== undefined).map((m) => m.name);
    const available = [...new Set([...groupByMetric(metrics).keys(), ...ratios])].sort();
    for (const name of q.metrics ?? []) {
      if (!available.includes(name)) {
        const known = available.length > 0 ? someOf(available, NAMES_IN_A_MESSAGE, false) : 'none yet';
        throw new ValidationError(`metric '${name}' has no data in '${experiment.slug}' (metrics: ${known})`);
      }
    }
    // Refused before any work when the answer would pass its bound (core/answer-bounds.ts).
    const shown =
      segmentRows === undefined
        ? []
        : topSegments(
            segmentRows.metrics.filter(inVersion),
            segmentRows.counts.filter(inVersion),
            {
              units: segmentRows.units.filter(inVersion),
              sketches: segmentRows.sketches.filter(inVersion),
              pairs: segmentRows.pairs.filter(inVersion),
            },
            q.segmentValues,
          );
    checkFigures({
      metrics: q.metrics?.length ?? available.length,
      variants: keys.length,
      segments: shown.length,
    });
    const exposures = rollups.exposures.filter(inVersion);
    const declaration = {
      slug: experiment.slug,
      assignment: experiment.assignment,
      variants,
      metrics: experiment.metrics,
    };
    const options = {
      control,
      method: q.method ?? 'frequentist',
      alpha: q.alpha ?? 0.05,
      sided: q.sided ?? 'two',
      correction: q.correction,
      version: q.version ?? null,
      nStar: q.nStar,
      metrics: q.metrics,
    } as const;
    const analysis = analyzeRollups({
      experiment: declaration,
      versions: versions.filter(inVersion),
      rollups: {
        exposures,
        exposureUsers: rollups.exposureUsers.filter(inVersion),
        results: rollups.results.filter(inVersion),
        metrics,
        units: rollups.units.filter(inVersion),
        sketches: rollups.sketches.filter(inVersion),
        pairs: rollups.pairs.filter(inVersion),
        unitBins: rollups.unitBins.filter(inVersion),
      },
      options,
    });
    if (q.version === undefined) {
      analysis.warnings.unshift(...payloadChanges(versions, analysis.versions, keys));
    }
    if (segment === undefined || segmentRows === undefined) return analysis;
    // Each value through the same assembly, with the whole analysis' unit and estimator (a sticky
    // experiment's users' sums within the value; quantiles from the value's sketch bins), and the metrics of
    // the whole analysis in its order; no exposures per value, so no sample-ratio check; no verdict kept.
    const names = analysis.metrics.map((m) => m.name);
    const counts = segmentRows.counts.filter(inVersion);
    const segmented = counts.reduce((a, c) => a + (keys.includes(c.variantKey) ? c.n : 0), 0);
    const total = Object.values(analysis.results).reduce((a, n) => a + n, 0);
    const segments = shown.map((s) => {
      const part = analyzeRollups({
        experiment: declaration,
        versions: [],
        rollups: {
          exposures: [],
          results: s.counts,
          metrics: s.metrics,
          units: s.units,
          sketches: s.sketches.map((b) => ({ ...b, key: b.bin })),
          pairs: s.pairs,
        },
        options: { ...options, metrics: names },
      });
      return {
        value: s.value,
        ...(s.mergedValues === undefined ? {} : { mergedValues: s.mergedValues }),
        unit: part.unit,
        results: part.results,
        metrics: part.metrics,
        warnings: part.warnings.filter((w) => !w.startsWith('srm') && !w.startsWith('sample-ratio')),
      };
    });
    return {
      ...analysis,
      segment,
      segmentNote: SEGMENT_NOTE,
      withoutSegment: Math.max(0, total - segmented),
      segments,
    };
  }
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
