// What an assignment id was issued for (core/assignment-id.ts), in variant keys: the assignment's version
// and variant, and its user. Ids of the current version need no I/O; older versions' variants are read
// once and kept (a version's variants never change).
import { type IssuedAssignment, readAssignmentId } from '../core/assignment-id.js';
import type { Variant } from '../core/variants.js';
import type { Store } from '../store/store.js';
import type { LiveExperiment } from './experiment-cache.js';

export interface AssignmentTarget {
  /** Assign issued it: its exposure was recorded then. */
  byServer?: boolean;
  version: number;
  variantKey: string;
  userId: string;
  /** False: the unit did not enter (ADR 0038); what names the id is stored, never counted. */
  entered?: false;
}

function targetOf(issued: IssuedAssignment, variantKey: string): AssignmentTarget {
  const target: AssignmentTarget = { version: issued.version, variantKey, userId: issued.userId };
  if (issued.byServer) target.byServer = true;
  if (issued.entered === false) target.entered = false;
  return target;
}

export class IssuedAssignments {
  private readonly versions = new Map<number, Map<number, Variant[]>>();

  constructor(private readonly store: Pick<Store, 'listVersions'>) {}

  /** The assignment `id` names in `live`'s experiment, or null when this service did not issue it there. */
  async resolve(live: LiveExperiment, id: string): Promise<AssignmentTarget | null> {
    const issued = readAssignmentId(id, live.id);
    if (issued === null || issued.version > live.experiment.version) return null;
    const variants =
      issued.version === live.experiment.version
        ? live.experiment.variants
        : await this.variantsOf(live.id, issued.version);
    const variant = variants?.[issued.variantIndex];
    return variant ? targetOf(issued, variant.key) : null;
  }

  /** Synchronous when the id is of the current version (log's hot path); undefined: ask `resolve`. */
  resolveCurrent(live: LiveExperiment, id: string): AssignmentTarget | null | undefined {
    const issued = readAssignmentId(id, live.id);
    if (issued === null || issued.version > live.experiment.version) return null;
    if (issued.version !== live.experiment.version) return undefined;
    const variant = live.experiment.variants[issued.variantIndex];
    return variant ? targetOf(issued, variant.key) : null;
  }

  private async variantsOf(experimentId: number, version: number): Promise<Variant[] | undefined> {
    let known = this.versions.get(experimentId);
    if (!known?.has(version)) {
      known = new Map((await this.store.listVersions(experimentId)).map((v) => [v.version, v.variants]));
      this.versions.set(experimentId, known);
    }
    return known.get(version);
  }
}
