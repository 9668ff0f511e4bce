// Layers (ADR 0038): running experiments of one layer take disjoint ranges of it, so no unit is in two.
// Pure: the allocations, the free ranges, and the 409 when a change would overlap.
import type { Layer } from './entry.js';
import { ConflictError } from './errors.js';
import type { Experiment } from './experiment.js';

export interface Allocation {
  experiment: string;
  status: string;
  range: [number, number];
}

/** What `GET /layers/:key` answers. */
export interface LayerAnswer {
  key: string;
  /** The non-archived experiments that name the layer, by range start. */
  experiments: Allocation[];
  /** Ranges no running experiment takes, in order. */
  free: Array<[number, number]>;
}

/** The parts of [0, 1) the `taken` ranges leave. */
export function freeRanges(taken: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const sorted = [...taken].sort((a, b) => a[0] - b[0]);
  const free: Array<[number, number]> = [];
  let at = 0;
  for (const [start, end] of sorted) {
    if (start > at) free.push([at, start]);
    at = Math.max(at, end);
  }
  if (at < 1) free.push([at, 1]);
  return free;
}

function shown(range: readonly [number, number]): string {
  return `[${range[0]}, ${range[1]})`;
}

function inLayer(e: Experiment, key: string): e is Experiment & { layer: Layer } {
  return e.layer !== null && e.layer.key === key;
}

export function layerAnswer(key: string, experiments: readonly Experiment[]): LayerAnswer {
  const using = experiments.filter((e) => inLayer(e, key) && e.status !== 'archived') as Array<
    Experiment & { layer: Layer }
  >;
  return {
    key,
    experiments: using
      .map((e) => ({ experiment: e.slug, status: e.status, range: e.layer.range }))
      .sort((a, b) => a.range[0] - b.range[0]),
    free: freeRanges(using.filter((e) => e.status === 'running').map((e) => e.layer.range)),
  };
}

/**
 * Throws a ConflictError when `next` (running, in a layer) would overlap another running experiment of its
 * layer, naming it and the free ranges; `others` may include `next` itself (by slug, skipped).
 */
export function assertLayerFree(next: Experiment, others: readonly Experiment[]): void {
  if (next.status !== 'running' || next.layer === null) return;
  const { key, range } = next.layer;
  const running = others.filter(
    (e) => e.slug !== next.slug && e.status === 'running' && inLayer(e, key),
  ) as Array<Experiment & { layer: Layer }>;
  const clash = running.find((e) => e.layer.range[0] < range[1] && range[0] < e.layer.range[1]);
  if (clash === undefined) return;
  const free = freeRanges(running.map((e) => e.layer.range));
  const freeText = free.length > 0 ? free.map(shown).join(', ') : 'none';
  throw new ConflictError(
    `layer '${key}' range ${shown(range)} overlaps running experiment '${clash.slug}' (${shown(clash.layer.range)}); free ranges of '${key}': ${freeText}`,
  );
}
