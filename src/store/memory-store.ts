// A Store in plain Maps and arrays, with the SQL store's semantics: for unit tests of the services.
// Experiments, rollouts, groups and the history are in memory-experiments.ts, which MemoryStore extends.
// Rollups are planned by the same pure core as the SQL store's (batch-plan.ts, rebuild.ts); only where
// they are kept differs.

import type { ComparedRow } from '../core/compare.js';
import { declaredSums } from '../core/declared.js';
import { NotFoundError } from '../core/errors.js';
import type { ChangeEvent } from '../core/events.js';
import type { Experiment } from '../core/experiment.js';
import { decodeExposureBatch, type Exposure } from '../core/exposure.js';
import { exposureUserKey, exposureUsersOf, newExposureUsers } from '../core/exposure-users.js';
import { type FeedbackRow, feedbackKey } from '../core/feedback.js';
import { applyMetricCap } from '../core/metric-cap.js';
import {
  hourlyRollupKey,
  mergeRollups,
  metricRollupKey,
  type RolledResult,
  rollUpExposures,
} from '../core/rollups.js';
import { hourOf } from '../core/time.js';
import { declaredWatcher, UnitBinMoves } from '../core/unit-bins.js';
import { addUnitRollup, applyUnitDeltasByHour, hourlyUnitRollupKey } from '../core/unit-hours.js';
import { unitKey } from '../core/units.js';
import {
  type BatchDecisions,
  declaredOf,
  type ExposureBatch,
  type NewResult,
  type WriteBatch,
} from '../core/writes.js';
import { overCapOf, planRollups, rolledFeedback, rolledOf } from './batch-plan.js';
import { exposureIdKey, exposureIdRows, withClientExposures } from './client-exposures.js';
import { MemoryExperiments } from './memory-experiments.js';
import {
  listMemoryCompared,
  listMemoryResults,
  type MemoryResult,
  readable,
  saidFrom,
} from './memory-results.js';
import { addCounts, forget, MemoryRollups } from './memory-rollups.js';
import { MemorySegments, type RatedSegments } from './memory-segments.js';
import {
  type ComparedQuery,
  type ResultPage,
  type ResultQuery,
  type ResultTarget,
  resultTarget,
} from './result-types.js';
import type { HourlyData, Rollups, SegmentRows } from './rollup-types.js';
import type { SegmentRecord } from './segment-plan.js';
import type { EventStore, Store } from './store.js';

/** A committed result and its position (the SQL store's `seq`: commit order, across experiments). */
interface Committed {
  seq: number;
  result: NewResult;
  /** Its metric names the cap left out (ADR 0014), as the SQL store's `metrics_over_cap`. */
  metricsOverCap: string[] | null;
  /** The segment values that counted it, as the SQL store's `segments` (segment-plan.ts SegmentRecord). */
  segments: SegmentRecord | null;
}

/**
 * Everything the SQL store keeps, kept the same way: experiments with their version history, results in
 * commit order, exposure batches as their stored text, feedback rows, users' running sums, and rollups
 * updated by every append. Values are copied in and out, so a caller never shares an object with the
 * store. Every call completes in one step, so a change is atomic as a transaction is.
 */
export class MemoryStore extends MemoryExperiments implements Store, EventStore {
  private readonly results: Committed[] = [];
  private readonly byLogId = new Map<string, Committed>();
  private readonly exposureBatches: ExposureBatch[] = [];
  private readonly feedback = new Map<string, FeedbackRow>();
  private readonly rollups = new MemoryRollups();
  private readonly segments = new MemorySegments();
  /** exposure_ids: the assignment ids of client exposures stored (client-exposures.ts). */
  private readonly exposureIds = new Set<string>();
  /** assignment_contexts: the context of each assignment made with one, by experiment and UUID. */
  private readonly contexts = new Map<string, string>();
  private lastSeq = 0;

  async deleteExperiment(
    slug: string,
    guard: (current: Experiment, hasResults: boolean) => void,
    events?: (deleted: Experiment) => readonly ChangeEvent[],
  ): Promise<void> {
    const current = this.current(slug);
    const hasResults = this.results.some((c) => c.result.experimentId === current.id);
    guard(current.experiment, hasResults);
    // The SQL store's foreign keys refuse this too: results would point at nothing.
    if (hasResults) throw new Error(`experiment '${slug}' has results and cannot be deleted`);
    this.events.add(events?.(current.experiment));
    forget(this.rollups.exposureRollups, current.id);
    this.segments.forget(current.id);
    forget(this.rollups.exposureUsers, current.id);
    forget(this.rollups.exposureUserRollups, current.id);
    for (const key of this.exposureIds) if (key.startsWith(`${current.id}\n`)) this.exposureIds.delete(key);
    for (const key of this.contexts.keys()) if (key.startsWith(`${current.id}\n`)) this.contexts.delete(key);
    this.forgetExperiment(current.id, slug);
  }

  /** Planned whole before anything is kept (as batch-plan.ts plans it), so a batch commits whole or not at all. */
  async appendBatch(sent: WriteBatch): Promise<BatchDecisions> {
    // Client exposures whose assignment id was stored before add nothing (client-exposures.ts).
    const client = exposureIdRows(sent.clientExposures ?? []);
    const batch = withClientExposures(sent, client.firsts, (key) => !this.exposureIds.has(key));
    const feedback = batch.feedback ?? [];
    const logIds = new Set<string>();
    for (const r of batch.results) {
      if (!this.experiments.has(r.experimentId)) {
        throw new NotFoundError('the experiment this write refers to no longer exists');
      }
      if (this.byLogId.has(r.logId) || logIds.has(r.logId)) throw new Error(`duplicate logId '${r.logId}'`);
      logIds.add(r.logId);
    }
    // The SQL store's rollup rows reference the experiment: feedback on a missing one fails the batch there.
    for (const f of feedback) {
      if (!this.experiments.has(f.experimentId)) {
        throw new NotFoundError('the experiment this write refers to no longer exists');
      }
    }
    // The cap (ADR 0014) over results and feedback, decided from the names the rollups hold, as the SQL
    // store does under its lock.
    const rolled = batch.results.map(rolledOf);
    const rolledFb = feedback.map(rolledFeedback);
    const names = new Map<number, Set<string>>();
    applyMetricCap([...rolled, ...rolledFb], (id) => {
      let set = names.get(id);
      if (!set) {
        set = this.metricNamesOf(id);
        names.set(id, set);
      }
      return set;
    });
    const overCap = overCapOf(rolled);
    const feedbackOverCap = (experimentId: number, metric: string) =>
      rolledFb.some((f) => f.experimentId === experimentId && f.overCap?.has(metric) === true);

    const stored = feedback.length > 0 ? this.storedFeedback(batch) : new Map<string, FeedbackRow>();
    const fbSegments = this.segments.feedbackSegments(batch);
    const plan = planRollups(feedback, stored, rolled, feedbackOverCap, fbSegments);
    const bins = new UnitBinMoves();
    const units = applyUnitDeltasByHour(
      plan.units,
      this.rollups.storedSums(plan.units, declaredOf(batch) ?? (() => undefined)),
      declaredWatcher(declaredOf(batch), plan.pairs, bins),
    );
    const users = newExposureUsers(exposureUsersOf(batch.exposures), this.rollups.exposureUsers);
    const segments = this.segments.plan(batch, rolled, this.byLogId, plan.segments);

    // Kept: nothing below can fail.
    for (const [i, r] of batch.results.entries()) {
      const committed = {
        seq: ++this.lastSeq,
        result: { ...r, assignedVariant: r.assignedVariant ?? null },
        metricsOverCap: overCap[i] ?? null,
        segments: segments?.plan.records[i] ?? null,
      };
      this.results.push(committed);
      this.byLogId.set(r.logId, committed);
    }
    for (const b of batch.exposures) {
      this.exposureBatches.push({ ...b, variants: [...b.variants] });
      if (b.withContext !== true) continue;
      for (const e of decodeExposureBatch(b.json, b.experimentId, b.version)) {
        const key = `${b.experimentId}\n${e.assignmentId.slice(0, 36)}`;
        if (e.context !== null && !this.contexts.has(key)) this.contexts.set(key, JSON.stringify(e.context));
      }
    }
    for (const row of client.rows) this.exposureIds.add(exposureIdKey(row));
    for (const row of plan.feedbackRows ?? []) this.feedback.set(feedbackKey(row), { ...row });
    for (const s of units.sums) this.rollups.unitSums.set(unitKey(s), { ...s });
    this.rollups.addMetrics(mergeRollups(plan.metrics, metricRollupKey));
    this.rollups.addHourly(mergeRollups(plan.hourly, hourlyRollupKey));
    this.rollups.addUnits(units.rollups);
    this.rollups.addDeclared(plan.pairs, bins);
    this.segments.apply(segments);
    for (const r of units.hourly) addUnitRollup(this.rollups.hourlyUnitRollups, r, hourlyUnitRollupKey);
    this.rollups.addSketches(plan.sketches);
    for (const u of users.rows) this.rollups.exposureUsers.set(exposureUserKey(u), { ...u });
    addCounts(this.rollups.exposureUserRollups, users.counts);
    this.rollups.addExposures(
      rollUpExposures(
        batch.exposures.flatMap((b) =>
          b.variants.map((v) => ({ experimentId: b.experimentId, version: b.version, ...v })),
        ),
      ),
    );
    this.rollups.addHourlyExposures(
      batch.exposures.flatMap((b) =>
        b.variants.map((v) => ({
          experimentId: b.experimentId,
          hour: b.hour,
          version: b.version,
          variantKey: v.variantKey,
          n: v.n,
        })),
      ),
    );
    return { metricsOverCap: overCap };
  }

  async listResults(q: ResultQuery): Promise<ResultPage> {
    return listMemoryResults(this.readable(), q, saidFrom(this.feedback.values(), this.contexts));
  }

  async listCompared(q: ComparedQuery): Promise<ComparedRow[]> {
    return listMemoryCompared(this.readable(), q, saidFrom(this.feedback.values(), this.contexts));
  }

  private readable(): MemoryResult[] {
    return readable(this.results);
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
      ...this.rollups.read(experimentId),
      // Counted from the committed results themselves: the same as counts kept at write time.
      results: rollUpExposures(
        this.results
          .filter((c) => c.result.experimentId === experimentId)
          .map((c) => ({ experimentId, version: c.result.version, variantKey: c.result.variantKey })),
      ),
    };
  }

  async readSegments(experimentId: number, key: string): Promise<SegmentRows> {
    return this.segments.read(experimentId, key);
  }

  async readHourly(experimentId: number): Promise<HourlyData> {
    return this.rollups.hourly(experimentId);
  }

  async findResult(experimentId: number, logId: string): Promise<ResultTarget | undefined> {
    return (await this.findResults(experimentId, [logId])).get(logId);
  }

  async findResults(experimentId: number, logIds: readonly string[]): Promise<Map<string, ResultTarget>> {
    const found = new Map<string, ResultTarget>();
    for (const logId of logIds) {
      const r = this.byLogId.get(logId)?.result;
      if (r?.experimentId === experimentId) found.set(logId, resultTarget(r));
    }
    return found;
  }

  /** As rebuild.ts: results, then feedback rows (latest value, the hour it first came), then exposures. */
  async rebuildRollups(experimentId?: number): Promise<{ results: number; exposures: number }> {
    const ids = experimentId === undefined ? [...this.experiments.keys()] : [experimentId];
    let results = 0;
    let exposures = 0;
    for (const id of ids) {
      this.rollups.forgetExperiment(id);
      const perUser = this.experiments.get(id)?.assignment === 'sticky';
      const rows = this.results.filter((c) => c.result.experimentId === id);
      results += rows.length;
      const rolled: RolledResult[] = rows.map(({ result: r, metricsOverCap }) => ({
        ...rolledOf(r),
        overCap: metricsOverCap ? new Set(metricsOverCap) : null,
        unitUserId: perUser && r.counted !== false ? r.userId : null,
      }));
      const rated: RatedSegments[] = [];
      for (const f of this.feedback.values()) {
        if (f.experimentId !== id || f.overCap) continue;
        const fb: RolledResult = {
          experimentId: id,
          version: f.version,
          variantKey: f.variantKey,
          metrics: { [f.metric]: f.kind === 'proportion' ? f.value === 1 : f.value },
          unitUserId: perUser ? f.userId : null,
          hour: hourOf(f.createdAt),
        };
        rolled.push(fb);
        if (f.segments) rated.push({ rolled: fb, userId: fb.unitUserId ?? null, segments: f.segments });
      }
      this.segments.rebuild(
        id,
        rows.map((c, i) => ({
          rolled: rolled[i]!,
          assignmentId: c.result.assignmentId,
          segments: c.segments,
        })),
        rated,
        declaredSums(this.experiments.get(id)?.metrics ?? []),
      );
      const definitions = this.experiments.get(id)?.metrics ?? [];
      exposures += this.rollups.rebuild(
        id,
        rolled,
        this.batchesOf(id),
        perUser,
        declaredSums(definitions),
        rows.length,
      );
    }
    return { results, exposures };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private metricNamesOf(experimentId: number): Set<string> {
    const names = new Set<string>();
    for (const r of this.rollups.metricRollups.values())
      if (r.experimentId === experimentId) names.add(r.metric);
    return names;
  }

  private batchesOf(experimentId: number): ExposureBatch[] {
    return this.exposureBatches.filter((b) => b.experimentId === experimentId);
  }

  /** The stored feedback rows a batch's feedback may replace (what batch-plan.ts reads). */
  private storedFeedback(batch: WriteBatch): Map<string, FeedbackRow> {
    const current = new Map<string, FeedbackRow>();
    for (const f of batch.feedback ?? []) {
      for (const v of f.values) {
        const key = feedbackKey({ experimentId: f.experimentId, target: f.target, metric: v.metric });
        const row = this.feedback.get(key);
        if (row) current.set(key, { ...row });
      }
    }
    return current;
  }
}
