// A Store in plain Maps and arrays, with the SQL store's semantics: for unit tests of the services.
// Rollups are planned by the same pure core as the SQL store's (batch-plan.ts, rebuild.ts); only where
// they are kept differs.

import type { ComparedRow } from '../core/compare.js';
import { declaredSums } from '../core/declared.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { ChangeEvent } from '../core/events.js';
import type { Experiment } from '../core/experiment.js';
import { decodeExposureBatch, type Exposure } from '../core/exposure.js';
import { exposureUserKey, exposureUsersOf, newExposureUsers } from '../core/exposure-users.js';
import { type FeedbackRow, feedbackKey } from '../core/feedback.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import { applyMetricCap } from '../core/metric-cap.js';
import type { Rollout } from '../core/rollout.js';
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
import { MemoryEvents } from './memory-events.js';
import { MemoryGroups } from './memory-groups.js';
import {
  listMemoryCompared,
  listMemoryResults,
  type MemoryResult,
  readable,
  saidFrom,
} from './memory-results.js';
import { MemoryRollouts } from './memory-rollouts.js';
import { addCounts, forget, MemoryRollups } from './memory-rollups.js';
import { MemorySegments, type RatedSegments } from './memory-segments.js';
import type { SegmentRecord } from './segment-plan.js';
import {
  type ComparedQuery,
  type EventQuery,
  type EventStore,
  type ExperimentChange,
  type HourlyData,
  type ResultPage,
  type ResultQuery,
  type ResultTarget,
  type Rollups,
  resultTarget,
  type SegmentRows,
  type Store,
  type StoredEvent,
  type StoredExperiment,
  type StoredGroup,
  type StoredRollout,
  type StoredVersion,
} from './store.js';

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
export class MemoryStore implements Store, EventStore {
  private readonly experiments = new Map<number, Experiment>();
  private readonly idsBySlug = new Map<string, number>();
  private readonly versions = new Map<number, StoredVersion[]>();
  private readonly results: Committed[] = [];
  private readonly byLogId = new Map<string, Committed>();
  private readonly exposureBatches: ExposureBatch[] = [];
  private readonly feedback = new Map<string, FeedbackRow>();
  private readonly rollups = new MemoryRollups();
  private readonly segments = new MemorySegments();
  private readonly events = new MemoryEvents();
  private readonly rollouts = new MemoryRollouts();
  private readonly groups = new MemoryGroups();
  /** exposure_ids: the assignment ids of client exposures stored (client-exposures.ts). */
  private readonly exposureIds = new Set<string>();
  /** assignment_contexts: the context of each assignment made with one, by experiment and UUID. */
  private readonly contexts = new Map<string, string>();
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

  async insertExperiment(
    experiment: Experiment,
    _record?: IdempotencyRecord,
    events?: readonly ChangeEvent[],
  ): Promise<StoredExperiment> {
    if (this.idsBySlug.has(experiment.slug)) {
      throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
    }
    this.events.add(events);
    const id = ++this.lastExperimentId;
    this.save(id, experiment);
    this.versions.set(id, []);
    this.recordVersion(id, experiment);
    return { id, experiment };
  }

  async updateExperiment(
    slug: string,
    change: (current: Experiment) => Experiment,
    events?: (before: Experiment, after: Experiment) => readonly ChangeEvent[],
  ): Promise<StoredExperiment> {
    const current = this.current(slug);
    const next = change(current.experiment);
    this.events.add(events?.(current.experiment, next));
    this.save(current.id, next);
    if (next.version !== current.experiment.version) this.recordVersion(current.id, next);
    return { ...current, experiment: next };
  }

  async insertRollout(
    slug: string,
    build: (current: StoredExperiment) => { rollout: StoredRollout; events: readonly ChangeEvent[] },
  ): Promise<StoredExperiment> {
    const current = this.current(slug);
    const { rollout, events } = build(current);
    this.rollouts.check(rollout);
    this.events.add(events);
    this.rollouts.insert(rollout);
    this.revision++;
    return { ...current, rollout: structuredClone(rollout) };
  }

  async moveRollout(
    slug: string,
    id: string,
    from: number,
    next: Rollout,
    events: readonly ChangeEvent[],
    change?: ExperimentChange,
  ): Promise<StoredExperiment | undefined> {
    const current = this.current(slug);
    if (!this.rollouts.at(id, from)) return undefined;
    const changed = change?.(current.experiment);
    this.events.add([...events, ...(changed?.events ?? [])]);
    if (changed !== undefined) this.save(current.id, changed.next);
    const rollout = this.rollouts.move(id, from, next);
    this.revision++;
    return { id: current.id, experiment: changed?.next ?? current.experiment, rollout };
  }

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
    this.rollouts.forget(current.id);
    this.versions.delete(current.id);
    this.experiments.delete(current.id);
    this.idsBySlug.delete(slug);
    this.revision++;
  }

  async listGroups(): Promise<StoredGroup[]> {
    return this.groups.list();
  }

  async putGroup(
    group: StoredGroup,
    events: (before: StoredGroup | undefined, after: StoredGroup) => readonly ChangeEvent[],
  ): Promise<StoredGroup> {
    const after = this.groups.next(group);
    this.events.add(events(this.groups.get(group.key), structuredClone(after)));
    this.groups.set(after);
    this.revision++;
    return after;
  }

  async deleteGroup(key: string, events: (deleted: StoredGroup) => readonly ChangeEvent[]): Promise<boolean> {
    const before = this.groups.get(key);
    if (before === undefined) return false;
    this.events.add(events(before));
    this.groups.delete(key);
    this.revision++;
    return true;
  }

  async listEvents(q: EventQuery): Promise<StoredEvent[]> {
    return this.events.list(q);
  }

  async recordEvents(events: readonly ChangeEvent[]): Promise<void> {
    this.events.add(events);
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

  async listVersions(experimentId: number): Promise<StoredVersion[]> {
    return structuredClone(this.versions.get(experimentId) ?? []);
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

  async experimentsRevision(): Promise<number> {
    return this.revision;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private stored(id: number): StoredExperiment {
    const rollout = this.rollouts.newest(id);
    const experiment = structuredClone(this.experiments.get(id)!);
    return rollout === undefined ? { id, experiment } : { id, experiment, rollout };
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

  /** As the SQL store: a version starts when the experiment was last updated. */
  private recordVersion(id: number, e: Experiment): void {
    this.versions.get(id)!.push({
      version: e.version,
      variants: structuredClone(e.variants),
      createdAt: e.updatedAt,
    });
  }

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
