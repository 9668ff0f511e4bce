// The memory store's segment rows (store/segment-plan.ts plans them as for the SQL store): assign contexts'
// values by assignment, results waiting for a client's exposure, and the rollups per segment value.

import type { RolledResult } from '../core/rollups.js';
import type { SegmentCount, SegmentRollup } from '../core/segments.js';
import type { NewResult, WriteBatch } from '../core/writes.js';
import { rolledOf } from './batch-plan.js';
import {
  feedbackSegmentNeeds,
  feedbackSegmentsOf,
  type PendingSegment,
  planSegments,
  type SegmentFound,
  type SegmentNeeds,
  type SegmentPlan,
  segmentNeeds,
} from './segment-plan.js';
import type { SegmentRows } from './store.js';

const SEP = '\u0000';

/** The committed results by logId (the memory store's). */
type Results = ReadonlyMap<string, { result: NewResult; metricsOverCap: string[] | null }>;

export class MemorySegments {
  /** By experiment and assignment id, then key: the value (first kept). */
  private readonly assignments = new Map<string, Map<string, string>>();
  /** By experiment and assignment id: the waiting results. */
  private readonly pending = new Map<string, PendingSegment[]>();
  private readonly metrics = new Map<string, SegmentRollup>();
  private readonly counts = new Map<string, SegmentCount>();

  /** The segment plan of `batch` (segment-plan.ts), read from these rows. */
  plan(batch: WriteBatch, rolled: readonly RolledResult[], results: Results): SegmentPlan | null {
    const needs = segmentNeeds(batch);
    return needs && planSegments(batch, rolled, this.find(needs, results));
  }

  /** The segment values of each feedback item's target in `batch` (segment-plan.ts). */
  feedbackSegments(batch: WriteBatch): ReturnType<typeof feedbackSegmentsOf> {
    const needs = { assignments: feedbackSegmentNeeds(batch), pending: new Map<number, string[]>() };
    return feedbackSegmentsOf(batch, this.find(needs, new Map()).assignments);
  }

  /** What `needs` asks for, given the committed results by logId (read back as the rollups saw them). */
  find(needs: SegmentNeeds, results: Results): SegmentFound {
    const found: SegmentFound = { assignments: [], pending: [] };
    for (const [experimentId, ids] of needs.assignments) {
      for (const assignmentId of ids) {
        const values = this.assignments.get(`${experimentId}${SEP}${assignmentId}`);
        for (const [key, value] of values ?? [])
          found.assignments.push({ experimentId, assignmentId, key, value });
      }
    }
    for (const [experimentId, ids] of needs.pending) {
      for (const id of ids) {
        for (const p of this.pending.get(`${experimentId}${SEP}${id}`) ?? []) {
          const c = results.get(p.logId);
          if (!c) continue;
          const rolled = { ...rolledOf(c.result), overCap: c.metricsOverCap && new Set(c.metricsOverCap) };
          found.pending.push({ ...p, rolled });
        }
      }
    }
    return found;
  }

  /** Keeps a batch's plan and feedback's signed changes to the rollups (batch-plan.ts RollupPlan.segments). */
  apply(plan: SegmentPlan | null, feedback: readonly SegmentRollup[]): void {
    this.addMetrics(feedback);
    if (plan === null) return;
    for (const a of plan.assignments) {
      const k = `${a.experimentId}${SEP}${a.assignmentId}`;
      let values = this.assignments.get(k);
      if (!values) {
        values = new Map();
        this.assignments.set(k, values);
      }
      if (!values.has(a.key)) values.set(a.key, a.value);
    }
    for (const p of plan.waiting) {
      const k = `${p.experimentId}${SEP}${p.assignmentId}`;
      const list = this.pending.get(k) ?? [];
      if (!list.some((q) => q.logId === p.logId && q.key === p.key)) list.push({ ...p });
      this.pending.set(k, list);
    }
    for (const p of plan.resolved) {
      const k = `${p.experimentId}${SEP}${p.assignmentId}`;
      const list = (this.pending.get(k) ?? []).filter((q) => !(q.logId === p.logId && q.key === p.key));
      if (list.length > 0) this.pending.set(k, list);
      else this.pending.delete(k);
    }
    this.addMetrics(plan.metrics);
    for (const c of plan.counts) {
      const k = [c.experimentId, c.key, c.value, c.version, c.variantKey].join(SEP);
      const acc = this.counts.get(k);
      if (acc) acc.n += c.n;
      else this.counts.set(k, { ...c });
    }
  }

  private addMetrics(metrics: readonly SegmentRollup[]): void {
    for (const m of metrics) {
      const k = [m.experimentId, m.key, m.value, m.version, m.variantKey, m.metric, m.kind].join(SEP);
      const acc = this.metrics.get(k);
      if (acc) {
        acc.n += m.n;
        acc.sum += m.sum;
        acc.sumSquares += m.sumSquares;
      } else this.metrics.set(k, { ...m });
    }
  }

  read(experimentId: number, key: string): SegmentRows {
    const mine = (r: { experimentId: number; key: string }) =>
      r.experimentId === experimentId && r.key === key;
    return {
      metrics: [...this.metrics.values()].filter(mine).map((m) => ({ ...m })),
      counts: [...this.counts.values()].filter(mine).map((c) => ({ ...c })),
    };
  }

  /** Forgets an experiment (deleted). */
  forget(experimentId: number): void {
    const prefix = `${experimentId}${SEP}`;
    for (const map of [this.assignments, this.pending, this.metrics, this.counts]) {
      for (const k of map.keys()) if (k.startsWith(prefix)) map.delete(k);
    }
  }
}
