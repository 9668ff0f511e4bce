// The definitions clients assign with in-process (ADR 0019): every running experiment a key may see,
// with what the draw and the assignment id need, and an entity tag so that an unchanged set costs a 304.
import { createHash } from 'node:crypto';
import type { AssignmentMode } from '../core/experiment.js';
import type { JsonObject } from '../core/json.js';
import type { ExperimentCache } from './experiment-cache.js';

export interface Definition {
  slug: string;
  /** The number the assignment id's check is keyed with (the experiment's store id). */
  assignmentIdKey: number;
  version: number;
  assignment: AssignmentMode;
  seed: string;
  variants: { key: string; trafficPercent: number; payload: JsonObject }[];
}

export interface Definitions {
  /** `{"experiments": [...]}`, serialized once. */
  json: string;
  /** A strong entity tag of exactly that text. */
  etag: string;
}

/** The running experiments `allowed` lets the caller see, sorted by slug. */
export function definitionsOf(
  experiments: Pick<ExperimentCache, 'list'>,
  allowed: (slug: string) => boolean,
): Definitions {
  const running = experiments
    .list('running')
    .filter((l) => allowed(l.experiment.slug))
    .sort((a, b) => (a.experiment.slug < b.experiment.slug ? -1 : 1))
    .map(
      ({ id, experiment: e }): Definition => ({
        slug: e.slug,
        assignmentIdKey: id,
        version: e.version,
        assignment: e.assignment,
        seed: e.seed,
        variants: e.variants.map((v) => ({
          key: v.key,
          trafficPercent: v.trafficPercent,
          payload: v.payload,
        })),
      }),
    );
  const json = JSON.stringify({ experiments: running });
  return { json, etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"` };
}
