// The memory store's segment rows (store/segment-plan.ts plans them as for the SQL store): assign contexts'
// values by assignment, results waiting for a client's exposure, the rollups per segment value, users'
// sums per value (sticky experiments) and sketch bins per value; and their rebuild from committed rows.

import type { DeclaredSums } from '../core/declared.js';
import { addSums, partnerKeys } from '../core/pairs.js';
import type { RolledResult } from '../core/rollups.js';
import {
  addSegmentCallPairs,
  addSegmentUserPairs,
  SegmentPairMoves,
  type SegmentPairRollup,
  segmentPairKey,
} from '../core/segment-pairs.js';
import {
  addSegmentValue,
  addToSegmentSums,
  applySegmentUnitDeltas,
  noSegmentMoves,
  rollUpSegmentUnits,
  type SegmentMoves,
  type SegmentSketchMove,
  type SegmentUnitRollup,
  type SegmentUnitSum,
  segmentSketchKey,
  segmentUnitKey,
  segmentUnitRollupKey,
} from '../core/segment-units.js';
import { rollUpSegments, type SegmentCount, type SegmentRollup } from '../core/segments.js';
import { addUnitRollup } from '../core/unit-hours.js';
import type { NewResult, WriteBatch } from '../core/writes.js';
import { declaredOf } from '../core/writes.js';
import { rolledOf } from './batch-plan.js';
import type { SegmentRows } from './rollup-types.js';
import {
  anyMoves,
  feedbackSegmentNeeds,
  feedbackSegmentsOf,
  type PendingSegment,
  planSegments,
  type SegmentFound,
  type SegmentNeeds,
  type SegmentPlan,
  type SegmentRecord,
  segmentNeeds,
} from './segment-plan.js';

const SEP = '\u0000';

/** The committed results by logId (the memory store's). */
type Results = ReadonlyMap<string, { result: NewResult; metricsOverCap: string[] | null }>;

/** A batch's segment plan, and its users' sums within segment values once its deltas are applied. */
export interface MemorySegmentPlan {
  plan: SegmentPlan;
  units: { sums: SegmentUnitSum[]; rollups: SegmentUnitRollup[] };
}

/** A result as a rebuild reads it: its rollup view and the segment values it recorded when committed. */
export interface RecordedResult {
  rolled: RolledResult;
  assignmentId: string | null;
  segments: SegmentRecord | null;
}

/** A feedback row as a rebuild reads it: its latest value, its unit's user, the segments it records. */
export interface RatedSegments {
  rolled: RolledResult;
  userId: string | null;
  segments: Record<string, string>;
}

export class MemorySegments {
  /** By experiment and assignment id, then key: the value (first kept). */
  private readonly assignments = new Map<string, Map<string, string>>();
  /** By experiment and assignment id: the waiting results. */
  private readonly pending = new Map<string, PendingSegment[]>();
  private readonly metrics = new Map<string, SegmentRollup>();
  private readonly counts = new Map<string, SegmentCount>();
  private readonly unitSums = new Map<string, SegmentUnitSum>();
  private readonly unitRollups = new Map<string, SegmentUnitRollup>();
  private readonly sketches = new Map<string, SegmentSketchMove>();
  private readonly pairs = new Map<string, SegmentPairRollup>();

  /** The segment plan of `batch` (segment-plan.ts), read from these rows, with feedback's moves. */
  plan(
    batch: WriteBatch,
    rolled: readonly RolledResult[],
    results: Results,
    feedback: SegmentMoves,
  ): MemorySegmentPlan | null {
    const needs = segmentNeeds(batch);
    if (needs === null && !anyMoves(feedback)) return null;
    const found = needs === null ? { assignments: [], pending: [] } : this.find(needs, results);
    const plan = planSegments(batch, rolled, found, feedback);
    const declared = declaredOf(batch);
    const current = new Map<string, SegmentUnitSum>();
    const partners = declared
      ? plan.units.flatMap((d) =>
          partnerKeys([d], declared).map((k) => ({ ...d, metric: k.metric, kind: k.kind })),
        )
      : [];
    for (const d of [...plan.units, ...partners]) {
      const sum = this.unitSums.get(segmentUnitKey(d));
      if (sum) current.set(segmentUnitKey(d), { ...sum });
    }
    const units = applySegmentUnitDeltas(plan.units, current);
    if (declared) addSegmentUserPairs(plan.pairs, current, units.sums, declared);
    return { plan, units };
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

  /** Keeps a batch's plan (its results' and its feedback's moves: batch-plan.ts RollupPlan.segments). */
  apply(planned: MemorySegmentPlan | null): void {
    if (planned === null) return;
    const { plan, units } = planned;
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
    this.addRows(plan.metrics, plan.counts, plan.sketches);
    for (const s of units.sums) this.unitSums.set(segmentUnitKey(s), { ...s });
    for (const r of units.rollups) addUnitRollup(this.unitRollups, r, segmentUnitRollupKey);
    this.addPairs(plan.pairs.all());
  }

  private addPairs(rows: readonly SegmentPairRollup[]): void {
    for (const r of rows) {
      const acc = this.pairs.get(segmentPairKey(r));
      if (acc) addSums(acc, r);
      else this.pairs.set(segmentPairKey(r), { ...r });
    }
  }

  private addRows(
    metrics: readonly SegmentRollup[],
    counts: readonly SegmentCount[],
    sketches: readonly SegmentSketchMove[],
  ): void {
    for (const m of metrics) {
      const k = [m.experimentId, m.key, m.value, m.version, m.variantKey, m.metric, m.kind].join(SEP);
      const acc = this.metrics.get(k);
      if (acc) {
        acc.n += m.n;
        acc.sum += m.sum;
        acc.sumSquares += m.sumSquares;
      } else this.metrics.set(k, { ...m });
    }
    for (const c of counts) {
      const k = [c.experimentId, c.key, c.value, c.version, c.variantKey].join(SEP);
      const acc = this.counts.get(k);
      if (acc) acc.n += c.n;
      else this.counts.set(k, { ...c });
    }
    for (const b of sketches) {
      const acc = this.sketches.get(segmentSketchKey(b));
      if (acc) acc.count += b.count;
      else this.sketches.set(segmentSketchKey(b), { ...b });
    }
  }

  read(experimentId: number, key: string): SegmentRows {
    const mine = <T extends { experimentId: number; key: string }>(rows: Map<string, T>) =>
      [...rows.values()]
        .filter((r) => r.experimentId === experimentId && r.key === key)
        .map((r) => ({ ...r }));
    return {
      metrics: mine(this.metrics),
      counts: mine(this.counts),
      units: mine(this.unitRollups),
      sketches: mine(this.sketches).filter((b) => b.count !== 0),
      pairs: mine(this.pairs),
    };
  }

  /**
   * As segment-rebuild.ts: replaces an experiment's segment rows with the sums of its results (each with
   * the values it recorded; a waiting key's value is its assignment's, when it came) and of its feedback
   * rows (their latest values, in the segments they record).
   */
  rebuild(
    experimentId: number,
    results: readonly RecordedResult[],
    feedback: readonly RatedSegments[],
    declared: DeclaredSums | null = null,
  ): void {
    for (const map of [
      this.metrics,
      this.counts,
      this.unitSums,
      this.unitRollups,
      this.sketches,
      this.pairs,
    ]) {
      for (const k of map.keys()) if (k.startsWith(`${experimentId}${SEP}`)) map.delete(k);
    }
    const segmented = results.map(({ rolled, assignmentId, segments }) => {
      const values: Record<string, string> = {};
      const stored = this.assignments.get(`${experimentId}${SEP}${assignmentId}`);
      for (const [key, value] of Object.entries(segments ?? {})) {
        const v = value ?? stored?.get(key);
        if (v !== undefined) values[key] = v;
      }
      return { rolled: { ...rolled, declared }, segments: values };
    });
    const rolledUp = rollUpSegments(segmented);
    const pairs = new SegmentPairMoves();
    addSegmentCallPairs(pairs, segmented);
    const moves = noSegmentMoves();
    for (const f of feedback) {
      for (const [metric, v] of Object.entries(f.rolled.metrics ?? {})) {
        const kind = typeof v === 'boolean' ? 'proportion' : 'mean';
        const x = typeof v === 'boolean' ? (v ? 1 : 0) : (v as number);
        addSegmentValue(moves, f.rolled, f.segments, metric, kind, x, 1, f.userId);
      }
    }
    const sums = new Map<string, SegmentUnitSum>();
    addToSegmentSums(sums, [...rolledUp.units, ...moves.units]);
    for (const [k, s] of sums) this.unitSums.set(k, s);
    addSegmentUserPairs(pairs, new Map(), [...sums.values()], () => declared);
    this.addPairs(pairs.all());
    for (const r of rollUpSegmentUnits(sums.values()))
      addUnitRollup(this.unitRollups, r, segmentUnitRollupKey);
    this.addRows([...rolledUp.metrics, ...moves.metrics], rolledUp.counts, [
      ...rolledUp.sketches.rows(),
      ...moves.sketches.rows(),
    ]);
  }

  /** Forgets an experiment (deleted). */
  forget(experimentId: number): void {
    const prefix = `${experimentId}${SEP}`;
    for (const map of [
      this.assignments,
      this.pending,
      this.metrics,
      this.counts,
      this.unitSums,
      this.unitRollups,
      this.sketches,
      this.pairs,
    ] as Array<Map<string, unknown>>) {
      for (const k of map.keys()) if (k.startsWith(prefix)) map.delete(k);
    }
  }
}
