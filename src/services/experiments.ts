// Experiment management (create, update, remove, get, list): validates, writes through the store, and
// updates the in-memory cache after each committed write.

import { decodeCursor, encodeCursor } from '../core/cursor.js';
import { declaredSums } from '../core/declared.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../core/errors.js';
import {
  type Actor,
  type ChangeEvent,
  type EventSource,
  experimentChanged,
  experimentCreated,
  experimentDeleted,
} from '../core/events.js';
import {
  applyChanges,
  assertChangeable,
  createExperiment,
  type Experiment,
  type ExperimentChanges,
  type KnownGroup,
  type NewExperiment,
  type Status,
  validateSlug,
} from '../core/experiment.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import { isoNow, newId } from '../core/ids.js';
import { assertLayerFree, type LayerAnswer, layerAnswer } from '../core/layers.js';
import { isLive } from '../core/rollout.js';
import type { Store } from '../store/store.js';
import { EventBus } from './events.js';
import type { ExperimentCache } from './experiment-cache.js';

export interface ExperimentListQuery {
  status?: Status;
  limit?: number;
  cursor?: string;
}

/** Experiments per page by default. */
export const DEFAULT_PAGE = 50;
/**
 * A page also ends before its experiments' JSON would pass this many bytes (issue 24: 100 experiments
 * of 200 KB made a 20 MB page). Always at least one experiment a page, whatever its size.
 */
export const PAGE_BYTES = 1024 * 1024;
const CURSOR_KIND = 'e';

/** Each experiment's JSON size, measured once: an Experiment is replaced, never changed, on a change. */
const sizes = new WeakMap<Experiment, number>();
function sizeOf(e: Experiment): number {
  let size = sizes.get(e);
  if (size === undefined) {
    size = Buffer.byteLength(JSON.stringify(e));
    sizes.set(e, size);
  }
  return size;
}

export type ExperimentStore = Pick<
  Store,
  'insertExperiment' | 'updateExperiment' | 'deleteExperiment' | 'rebuildRollups'
>;

/** What the writes keep for a definition's ratios, covariates and caps, as a comparable string. */
const declaredKey = (e: Experiment) => JSON.stringify(declaredSums(e.metrics));

/**
 * A slug that create would reject names no experiment, so it is 404 without asking the store (which may
 * not even accept it: PostgreSQL text cannot hold a NUL, and would fail the query with a 500).
 */
function assertPossibleSlug(slug: string): void {
  try {
    validateSlug(slug);
  } catch {
    throw new NotFoundError(`no experiment with slug '${slug}'`);
  }
}

export interface ExperimentServiceOptions {
  now?: () => string;
  pageBytes?: number;
  /** Where the events of committed changes are published (services/events.ts). */
  bus?: EventBus;
  /** Event ids (UUIDv7). */
  newId?: () => string;
  /** Does a saved group of this key exist (targeting naming an unknown group is a 400)? */
  knownGroup?: KnownGroup;
}

export class ExperimentService {
  private readonly now: () => string;
  private readonly pageBytes: number;
  private readonly bus: EventBus;
  private readonly newId: () => string;
  private readonly knownGroup: KnownGroup;

  constructor(
    private readonly store: ExperimentStore,
    private readonly cache: ExperimentCache,
    options: ExperimentServiceOptions = {},
  ) {
    this.now = options.now ?? isoNow;
    this.pageBytes = options.pageBytes ?? PAGE_BYTES;
    this.bus = options.bus ?? new EventBus();
    this.newId = options.newId ?? newId;
    this.knownGroup = options.knownGroup ?? (() => false);
  }

  /** The running experiments (a layer's ranges are checked against them). */
  private running(): Experiment[] {
    return this.cache.list('running').map((l) => l.experiment);
  }

  /** `GET /layers/:key`: the experiments of a layer and its free ranges. */
  layer(key: string): LayerAnswer {
    return layerAnswer(
      key,
      this.cache.list().map((l) => l.experiment),
    );
  }

  private source(actor: Actor, at: string): EventSource {
    return { actor, at, newId: this.newId };
  }

  async get(slug: string): Promise<Experiment> {
    const found = await this.cache.find(slug);
    if (!found) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return found.experiment;
  }

  /**
   * A page of experiments in creation order: `limit` of them, or fewer when more would pass the page's
   * byte budget (at least one); `nextCursor` is null on the last page.
   */
  list(
    q: ExperimentListQuery = {},
    visible: (slug: string) => boolean = () => true,
  ): { experiments: Experiment[]; nextCursor: string | null } {
    const after = q.cursor === undefined ? 0 : decodeCursor(CURSOR_KIND, q.cursor);
    const limit = q.limit ?? DEFAULT_PAGE;
    const rest = this.cache.list(q.status).filter((l) => l.id > after && visible(l.experiment.slug));
    const page: Experiment[] = [];
    let bytes = 0;
    for (const { experiment } of rest) {
      if (page.length === limit) break;
      bytes += sizeOf(experiment);
      if (page.length > 0 && bytes > this.pageBytes) break;
      page.push(experiment);
    }
    const last = rest[page.length - 1];
    return {
      experiments: page,
      nextCursor: rest.length > page.length && last ? encodeCursor(CURSOR_KIND, last.id) : null,
    };
  }

  /**
   * `record`, when given, turns the created experiment into the Idempotency-Key answer that commits
   * with it. `allowed` is whether the caller's key may touch the slug (keys limited to experiments).
   */
  async create(
    input: NewExperiment,
    options: {
      actor: Actor;
      allowed?: (slug: string) => boolean;
      record?: (answer: Experiment) => IdempotencyRecord;
    },
  ): Promise<Experiment> {
    const at = this.now();
    const experiment = createExperiment(input, at, this.knownGroup);
    assertLayerFree(experiment, this.running());
    if (options.allowed && !options.allowed(experiment.slug)) {
      throw new ForbiddenError(
        `this key is limited to some experiments and may not create '${experiment.slug}'`,
      );
    }
    if (this.cache.lookup(experiment.slug)) {
      throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
    }
    const events = experimentCreated(this.source(options.actor, at), experiment);
    const stored = await this.store.insertExperiment(experiment, options.record?.(experiment), events);
    const put = this.cache.put(stored).experiment;
    this.bus.publish(events);
    return put;
  }

  /** Applies the changes inside a store transaction, with their events; the next assign sees them. */
  async update(slug: string, changes: ExperimentChanges, actor: Actor): Promise<Experiment> {
    assertChangeable(changes);
    assertPossibleSlug(slug);
    const ramping = this.cache.lookup(slug)?.rollout?.rollout;
    if (changes.variants !== undefined && ramping !== undefined && isLive(ramping)) {
      throw new ConflictError(
        `experiment '${slug}' has a ${ramping.state} rollout of ${ramping.variant}: its variants cannot change ` +
          'until it completes or is rolled back (PATCH /experiment/:slug/rollout {"action": "rollback"})',
      );
    }
    const at = this.now();
    let events: ChangeEvent[] = [];
    let declaredChanged = false;
    const stored = await this.store.updateExperiment(
      slug,
      (current) => {
        const next = applyChanges(current, changes, at, this.knownGroup);
        assertLayerFree(next, this.running());
        return next;
      },
      (before, after) => {
        events = experimentChanged(this.source(actor, at), before, after);
        declaredChanged = declaredKey(before) !== declaredKey(after);
        return events;
      },
    );
    const put = this.cache.put(stored).experiment;
    // New ratios, covariates or caps: their sums are rebuilt from the stored rows (ADR 0035); writes from
    // now on carry them (the cache has the new definitions).
    if (declaredChanged) await this.store.rebuildRollups(stored.id);
    this.bus.publish(events);
    return put;
  }

  /**
   * Pauses a running experiment (the guardrail monitor's action), through the same update as a PATCH,
   * with `reason` in its `experiment.status_changed` event and `findings` (the events that led to it)
   * committed in the same transaction; nothing when it no longer runs. True when this call paused it.
   */
  async pause(
    slug: string,
    actor: Actor,
    reason: string,
    findings: readonly ChangeEvent[] = [],
  ): Promise<boolean> {
    const at = this.now();
    let events: ChangeEvent[] = [];
    const stored = await this.store.updateExperiment(
      slug,
      (current) => (current.status === 'running' ? applyChanges(current, { status: 'paused' }, at) : current),
      (before, after) => {
        const changed = experimentChanged(this.source(actor, at), before, after, reason);
        events = changed.length > 0 ? [...findings, ...changed] : [];
        return events;
      },
    );
    this.cache.put(stored);
    this.bus.publish(events);
    return events.length > 0;
  }

  /** Only a draft with no results may be deleted; anything else is archived instead. */
  async remove(slug: string, actor: Actor): Promise<void> {
    assertPossibleSlug(slug);
    let events: ChangeEvent[] = [];
    const made = (deleted: Experiment) => {
      events = experimentDeleted(this.source(actor, this.now()), deleted);
      return events;
    };
    await this.store.deleteExperiment(
      slug,
      (current, hasResults) => {
        if (current.status !== 'draft') {
          throw new ConflictError(
            `only a draft experiment can be deleted ('${slug}' is ${current.status}); archive it instead`,
          );
        }
        if (hasResults) {
          throw new ConflictError(
            `experiment '${slug}' has results and cannot be deleted; archive it instead`,
          );
        }
      },
      made,
    );
    this.cache.forget(slug);
    this.bus.publish(events);
  }
}
