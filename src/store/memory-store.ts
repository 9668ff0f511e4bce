// A Store in plain Maps and arrays, with the SQL store's semantics: for unit tests of the services.

import { ConflictError, NotFoundError } from '../core/errors.js';
import type { Experiment, Variant } from '../core/experiment.js';
import { decodeExposureBatch, type Exposure } from '../core/exposure.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { JsonObject } from '../core/json.js';
import { applyMetricCap } from '../core/metric-cap.js';
import { type ExposureRollup, type MetricRollup, rollUpExposures, rollUpResults } from '../core/rollups.js';
import type { ExposureBatch, NewResult, WriteBatch } from '../ingest/write-batch.js';
import { rolledOf as rolledResult } from './batch-plan.js';
import { recordOverCap } from './row-statements.js';
import type { Result, ResultPage, ResultQuery, Rollups, Store, StoredExperiment } from './store.js';

/** A committed result and its position (the SQL store's `seq`: commit order, across experiments). */
interface Committed {
  seq: number;
  result: NewResult;
}

const metricKey = (r: Omit<MetricRollup, 'n' | 'sum' | 'sumSquares'>) =>
  `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.metric}\u0000${r.kind}`;
const exposureKey = (r: Omit<ExposureRollup, 'n'>) =>
  `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}`;

function parse(text: string | null): JsonObject | null {
  return text === null ? null : (JSON.parse(text) as JsonObject);
}

function toResult({ result: r }: Committed): Result {
  return {
    logId: r.logId,
    variantKey: r.variantKey,
    knownVariant: r.knownVariant,
    userId: r.userId,
    assignmentId: r.assignmentId,
    input: parse(r.input),
    output: parse(r.output),
    metrics: parse(r.metrics),
    context: parse(r.context),
    timestamp: r.timestamp,
    createdAt: r.createdAt,
    experimentVersion: r.version,
  };
}

/**
 * Everything the SQL store keeps, kept the same way: experiments with their version history, results in
 * commit order, exposure batches as their stored text, and rollups updated by every append. Values are
 * copied in and out, so a caller never shares an object with the store. Every call completes in one
 * step, so a change is atomic as a transaction is.
 */
export class MemoryStore implements Store {
  private readonly experiments = new Map<number, Experiment>();
  private readonly idsBySlug = new Map<string, number>();
  private readonly versions = new Map<number, Array<{ version: number; variants: Variant[] }>>();
  private readonly results: Committed[] = [];
  private readonly logIds = new Set<string>();
  private readonly exposureBatches: ExposureBatch[] = [];
  private readonly metricRollups = new Map<string, MetricRollup>();
  private readonly exposureRollups = new Map<string, ExposureRollup>();
  private lastExperimentId = 0;
  private lastSeq = 0;
  private revision = 0;

  async listExperiments(): Promise<StoredExperiment[]> {
    return [...this.experiments.keys()].sort((a, b) => a - b).map((id) => this.stored(id));
  }

  async findExperiment(slug: string): Promise<StoredExperiment | undefined> {
    const id = this.idsBySlug.get(slug);
    return id === undefined ? undefined : this.stored(id);
  }

  async insertExperiment(experiment: Experiment, _answer?: IdempotencyRecord): Promise<StoredExperiment> {
    if (this.idsBySlug.has(experiment.slug)) {
      throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
    }
    const id = ++this.lastExperimentId;
    this.save(id, experiment);
    this.versions.set(id, []);
    this.recordVersion(id, experiment);
    return { id, experiment };
  }

  async updateExperiment(
    slug: string,
    change: (current: Experiment) => Experiment,
  ): Promise<StoredExperiment> {
    const current = this.current(slug);
    const next = change(current.experiment);
    this.save(current.id, next);
    if (next.version !== current.experiment.version) this.recordVersion(current.id, next);
    return { id: current.id, experiment: next };
  }

  async deleteExperiment(
    slug: string,
    guard: (current: Experiment, hasResults: boolean) => void,
  ): Promise<void> {
    const current = this.current(slug);
    const hasResults = this.results.some((c) => c.result.experimentId === current.id);
    guard(current.experiment, hasResults);
    // The SQL store's foreign keys refuse this too: results would point at nothing.
    if (hasResults) throw new Error(`experiment '${slug}' has results and cannot be deleted`);
    for (const [key, r] of this.exposureRollups) {
      if (r.experimentId === current.id) this.exposureRollups.delete(key);
    }
    this.versions.delete(current.id);
    this.experiments.delete(current.id);
    this.idsBySlug.delete(slug);
    this.revision++;
  }

  async appendBatch(batch: WriteBatch): Promise<void> {
    // Checked before anything is kept: a batch commits whole or not at all.
    const logIds = new Set<string>();
    for (const r of batch.results) {
      if (!this.experiments.has(r.experimentId)) {
        throw new NotFoundError('the experiment this write refers to no longer exists');
      }
      if (this.logIds.has(r.logId) || logIds.has(r.logId)) throw new Error(`duplicate logId '${r.logId}'`);
      logIds.add(r.logId);
    }
    // The cap (ADR 0014), decided from the names the rollups hold, as the SQL store does under its lock.
    const rolled = batch.results.map(rolledResult);
    const names = new Map<number, Set<string>>();
    applyMetricCap(rolled, (id) => {
      let set = names.get(id);
      if (!set) {
        set = this.metricNamesOf(id);
        names.set(id, set);
      }
      return set;
    });
    recordOverCap(batch.results, rolled);
    for (const r of batch.results) {
      const metricsOverCap = r.metricsOverCap && [...r.metricsOverCap];
      this.results.push({ seq: ++this.lastSeq, result: { ...r, metricsOverCap } });
      this.logIds.add(r.logId);
    }
    for (const b of batch.exposures) this.exposureBatches.push({ ...b, variants: [...b.variants] });
    this.addMetrics(rollUpResults(rolled));
    this.addExposures(
      rollUpExposures(
        batch.exposures.flatMap((b) =>
          b.variants.map((v) => ({ experimentId: b.experimentId, version: b.version, ...v })),
        ),
      ),
    );
  }

  async listResults(q: ResultQuery): Promise<ResultPage> {
    const matching: Committed[] = [];
    for (const c of this.results) {
      const r = c.result;
      if (r.experimentId !== q.experimentId) continue;
      if (q.afterSeq !== undefined && c.seq <= q.afterSeq) continue;
      if (q.uptoSeq !== undefined && c.seq > q.uptoSeq) continue;
      if (q.variantKey !== undefined && r.variantKey !== q.variantKey) continue;
      if (q.since !== undefined && r.createdAt < q.since) continue;
      if (q.until !== undefined && r.createdAt >= q.until) continue;
      matching.push(c);
      if (matching.length > q.limit) break;
    }
    const hasMore = matching.length > q.limit;
    const page = hasMore ? matching.slice(0, q.limit) : matching;
    return { results: page.map(toResult), lastSeq: page.at(-1)?.seq ?? null, hasMore };
  }

  async lastResultSeq(experimentId: number): Promise<number> {
    let last = 0;
    for (const c of this.results) if (c.result.experimentId === experimentId) last = c.seq;
    return last;
  }

  async countExposures(experimentId: number): Promise<number> {
    return this.batchesOf(experimentId).reduce((n, b) => n + b.count, 0);
  }

  async listExposures(experimentId: number): Promise<Exposure[]> {
    return this.batchesOf(experimentId).flatMap((b) => decodeExposureBatch(b.json, experimentId, b.version));
  }

  async readRollups(experimentId: number): Promise<Rollups> {
    return {
      metrics: [...this.metricRollups.values()]
        .filter((r) => r.experimentId === experimentId)
        .map((r) => ({ ...r })),
      exposures: [...this.exposureRollups.values()]
        .filter((r) => r.experimentId === experimentId)
        .map((r) => ({ ...r })),
    };
  }

  async listVersions(experimentId: number): Promise<Array<{ version: number; variants: Variant[] }>> {
    return structuredClone(this.versions.get(experimentId) ?? []);
  }

  async rebuildRollups(experimentId?: number): Promise<{ results: number; exposures: number }> {
    const ids = experimentId === undefined ? [...this.experiments.keys()] : [experimentId];
    let results = 0;
    let exposures = 0;
    for (const id of ids) {
      for (const rollups of [this.metricRollups, this.exposureRollups]) {
        for (const [key, r] of rollups) if (r.experimentId === id) rollups.delete(key);
      }
      const rows = this.results.filter((c) => c.result.experimentId === id).map((c) => c.result);
      this.addMetrics(rollUpResults(rows.map(rolledResult)));
      results += rows.length;
      const counted = rollUpExposures(
        this.batchesOf(id).flatMap((b) =>
          b.variants.map((v) => ({ experimentId: id, version: b.version, ...v })),
        ),
      );
      this.addExposures(counted);
      exposures += counted.reduce((n, r) => n + r.n, 0);
    }
    return { results, exposures };
  }

  async experimentsRevision(): Promise<number> {
    return this.revision;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private stored(id: number): StoredExperiment {
    return { id, experiment: structuredClone(this.experiments.get(id)!) };
  }

  private current(slug: string): StoredExperiment {
    const id = this.idsBySlug.get(slug);
    if (id === undefined) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return this.stored(id);
  }

  /** Keeps a copy of `experiment` under `id`; every change bumps the revision. */
  private save(id: number, experiment: Experiment): void {
    const previous = this.experiments.get(id);
    if (previous && previous.slug !== experiment.slug) {
      if (this.idsBySlug.has(experiment.slug)) {
        throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
      }
      this.idsBySlug.delete(previous.slug);
    }
    this.experiments.set(id, structuredClone(experiment));
    this.idsBySlug.set(experiment.slug, id);
    this.revision++;
  }

  private recordVersion(id: number, e: Experiment): void {
    this.versions.get(id)!.push({ version: e.version, variants: structuredClone(e.variants) });
  }

  private metricNamesOf(experimentId: number): Set<string> {
    const names = new Set<string>();
    for (const r of this.metricRollups.values()) if (r.experimentId === experimentId) names.add(r.metric);
    return names;
  }

  private batchesOf(experimentId: number): ExposureBatch[] {
    return this.exposureBatches.filter((b) => b.experimentId === experimentId);
  }

  private addMetrics(rollups: MetricRollup[]): void {
    for (const r of rollups) {
      const total = this.metricRollups.get(metricKey(r));
      if (!total) this.metricRollups.set(metricKey(r), { ...r });
      else {
        total.n += r.n;
        total.sum += r.sum;
        total.sumSquares += r.sumSquares;
      }
    }
  }

  private addExposures(rollups: ExposureRollup[]): void {
    for (const r of rollups) {
      const total = this.exposureRollups.get(exposureKey(r));
      if (!total) this.exposureRollups.set(exposureKey(r), { ...r });
      else total.n += r.n;
    }
  }
}
