// Exposures of assignments a client made in-process (ADR 0019): each item is placed by its assignment
// id (the experiment version, variant and user it was made for), and the ones placed are committed
// together before the answer. An item that cannot be placed is reported back, never stored.
import type { Exposure } from '../core/exposure.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { JsonObject } from '../core/json.js';
import { shownId } from '../core/messages.js';
import { segmentValues } from '../core/segments.js';
import { normalizeTime } from '../core/time.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';
import type { IssuedAssignments } from './issued-assignments.js';

export interface ExposureInput {
  /** The experiment's slug. */
  experiment: string;
  assignmentId: string;
  context?: JsonObject;
  /** When the client assigned (ISO 8601); a time after the server's now is taken as now. */
  timestamp?: string;
}

export interface ExposureReceipt {
  accepted: number;
  rejected: { index: number; error: string }[];
}

export interface ExposureDeps {
  experiments: Pick<ExperimentCache, 'find'>;
  assignments: Pick<IssuedAssignments, 'resolve'>;
  ingest: { appendExposures(exposures: Exposure[], record?: IdempotencyRecord): Promise<void> };
  now: () => string;
}

/** An item naming an id assign issued: its exposure is already recorded. */
const ISSUED_BY_ASSIGN = Symbol('issued by assign');

export class ExposureService {
  constructor(private readonly deps: ExposureDeps) {}

  async record(
    inputs: ExposureInput[],
    allowed: (slug: string) => boolean,
    record?: (receipt: ExposureReceipt) => IdempotencyRecord,
  ): Promise<ExposureReceipt> {
    const now = this.deps.now();
    const placed: Exposure[] = [];
    const rejected: ExposureReceipt['rejected'] = [];
    // One lookup per experiment, not per item: a batch names a few experiments many times.
    const experiments = new Map<string, Promise<LiveExperiment | undefined>>();
    const find = (slug: string) => {
      let found = experiments.get(slug);
      if (found === undefined) {
        found = this.deps.experiments.find(slug);
        experiments.set(slug, found);
      }
      return found;
    };
    const seen = new Set<string>();
    let accepted = 0;
    for (const [index, input] of inputs.entries()) {
      const key = `${input.experiment}\n${input.assignmentId}`;
      const placedOne = seen.has(key)
        ? `assignmentId '${shownId(input.assignmentId)}' appears earlier in this batch: counted once`
        : await this.place(input, allowed, find, now);
      if (typeof placedOne === 'string') rejected.push({ index, error: placedOne });
      else {
        seen.add(key);
        accepted++;
        // An id assign issued had its exposure recorded then: accepted, and nothing more to store.
        if (placedOne !== ISSUED_BY_ASSIGN) placed.push(placedOne);
      }
    }
    const receipt = { accepted, rejected };
    const kept = record?.(receipt);
    // Nothing to store and no Idempotency-Key record to keep: no transaction at all.
    if (placed.length > 0 || kept !== undefined) await this.deps.ingest.appendExposures(placed, kept);
    return receipt;
  }

  /** The exposure, or why it cannot be placed. */
  private async place(
    input: ExposureInput,
    allowed: (slug: string) => boolean,
    find: (slug: string) => Promise<LiveExperiment | undefined>,
    now: string,
  ): Promise<Exposure | typeof ISSUED_BY_ASSIGN | string> {
    const slug = input.experiment;
    if (!allowed(slug)) return `this key may not use experiment '${slug}'`;
    const live = await find(slug);
    if (!live) return `no experiment with slug '${slug}'`;
    const assigned = await this.deps.assignments.resolve(live, input.assignmentId);
    if (assigned === null) {
      return `assignmentId '${shownId(input.assignmentId)}' was not made for experiment '${slug}' (its check, version, variant or user does not match)`;
    }
    let time = now;
    // Recorded already by assign; or given to a unit that did not enter, which is never an exposure.
    if (assigned.byServer || assigned.entered === false) return ISSUED_BY_ASSIGN;
    try {
      if (input.timestamp !== undefined) time = normalizeTime(input.timestamp, 'timestamp');
    } catch (err) {
      return (err as Error).message;
    }
    const exposure: Exposure = {
      assignmentId: input.assignmentId,
      experimentId: live.id,
      version: assigned.version,
      variantKey: assigned.variantKey,
      userId: assigned.userId,
      context: input.context ?? null,
      createdAt: time > now ? now : time,
      unit: live.experiment.assignment === 'sticky',
      ...(live.experiment.segments.length > 0
        ? { segments: segmentValues(input.context, live.experiment.segments), byClient: true }
        : {}),
    };
    return exposure;
  }
}
