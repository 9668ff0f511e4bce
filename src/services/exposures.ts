// Exposures of assignments a client made in-process (ADR 0019): each item is placed by its assignment
// id (the experiment version, variant and user it was made for), and the ones placed are committed
// together before the answer. An item that cannot be placed is reported back, never stored.
import type { Exposure } from '../core/exposure.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { JsonObject } from '../core/json.js';
import { normalizeTime } from '../core/time.js';
import type { ExperimentCache } from './experiment-cache.js';
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
  ingest: { appendExposures(exposures: Exposure[], answer?: IdempotencyRecord): Promise<void> };
  now: () => string;
}

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
    for (const [index, input] of inputs.entries()) {
      const placedOne = await this.place(input, allowed, now);
      if (typeof placedOne === 'string') rejected.push({ index, error: placedOne });
      else placed.push(placedOne);
    }
    const receipt = { accepted: placed.length, rejected };
    // Nothing to store: still one transaction when a retry must find this answer again.
    await this.deps.ingest.appendExposures(placed, record?.(receipt));
    return receipt;
  }

  /** The exposure, or why it cannot be placed. */
  private async place(input: ExposureInput, allowed: (slug: string) => boolean, now: string) {
    const slug = input.experiment;
    if (!allowed(slug)) return `this key may not use experiment '${slug}'`;
    const live = await this.deps.experiments.find(slug);
    if (!live) return `no experiment with slug '${slug}'`;
    const assigned = await this.deps.assignments.resolve(live, input.assignmentId);
    if (assigned === null) {
      return `assignmentId '${input.assignmentId}' was not made for experiment '${slug}' (its check, version or variant does not match)`;
    }
    let time = now;
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
    };
    return exposure;
  }
}
