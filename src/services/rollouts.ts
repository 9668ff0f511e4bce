// Rollouts (issue 38): start one, read it with its history, act on it (approve, pause, resume, roll
// back), and the monitor's round: the next step when its time, units and approval are met, a rollback (or
// pause) on a proven regression. Every move is written over the version it was planned from, with its
// event (a webhook per subscription), and the next assign follows it (the cache holds the rollout).
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.js';
import {
  type Actor,
  type ChangeEvent,
  type EventSource,
  experimentChanged,
  rolloutEvent,
} from '../core/events.js';
import { type Experiment, release } from '../core/experiment.js';
import { isoNow, newId } from '../core/ids.js';
import type { JsonObject } from '../core/json.js';
import {
  actionMove,
  applyMove,
  checkSteps,
  isLive,
  monitorMove,
  type RegressionAction,
  type Rollout,
  type RolloutAction,
  type RolloutFacts,
  type RolloutGuardrail,
  type RolloutMove,
  type RolloutStep,
  rolloutSeed,
  servedPercent,
  startMove,
} from '../core/rollout.js';
import type { EventStore, RolloutStore, StoredRollout } from '../store/store.js';
import type { EventBus } from './events.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

export interface RolloutInput {
  variant: string;
  steps?: Partial<RolloutStep>[];
  guardrails?: Array<{ metric: string; threshold?: number }>;
  onRegression?: RegressionAction;
}

/** A rollout as the API answers it: the rules' view, the share served now, and its history. */
export interface RolloutView extends Rollout {
  id: string;
  percent: number;
  history: ChangeEvent[];
}

export interface RolloutDeps {
  store: RolloutStore & Pick<EventStore, 'listEvents'>;
  cache: Pick<ExperimentCache, 'find' | 'put' | 'list'>;
  bus: Pick<EventBus, 'publish'>;
  now?: () => string;
  newId?: () => string;
}

/** The experiment's declared guardrails with their thresholds (a rollout's default guardrails). */
function declaredGuardrails(e: Experiment): RolloutGuardrail[] {
  return e.metrics
    .filter((m) => m.role === 'guardrail')
    .map((m) => ({ metric: m.name, threshold: m.threshold ?? 0 }));
}

/** The request's guardrails: metrics the experiment declares as guardrails, thresholds as fractions ≥ 0. */
function checkGuardrails(e: Experiment, input: RolloutInput['guardrails']): RolloutGuardrail[] {
  const declared = declaredGuardrails(e);
  if (input === undefined) return declared;
  return input.map((g, i) => {
    const known = declared.find((d) => d.metric === g.metric);
    if (known === undefined) {
      const names = declared.map((d) => d.metric);
      throw new ValidationError(
        `guardrails.${i}.metric '${g.metric}' is not a guardrail of experiment '${e.slug}'` +
          (names.length > 0
            ? ` (its guardrails: ${names.join(', ')})`
            : ': declare it with role "guardrail" first'),
      );
    }
    const threshold = g.threshold ?? known.threshold;
    if (!(Number.isFinite(threshold) && threshold >= 0 && threshold < 1)) {
      throw new ValidationError(`guardrails.${i}.threshold must be a fraction from 0 up to 1 (0.05 is 5%)`);
    }
    return { metric: g.metric, threshold };
  });
}

/** The variant everyone outside the rollout is served: the experiment's defaultVariant, else its first. */
export function controlOf(e: Experiment): string {
  return e.defaultVariant ?? e.variants[0]!.key;
}

/** What a rollout of `input.variant` would ramp, checked (start and the dry run): variant, control, steps, guardrails. */
export function draftRollout(
  experiment: Experiment,
  input: RolloutInput,
): Pick<Rollout, 'variant' | 'control' | 'steps' | 'guardrails' | 'onRegression'> {
  const control = controlOf(experiment);
  const keys = experiment.variants.map((v) => v.key);
  if (!keys.includes(input.variant)) {
    throw new ValidationError(
      `variant '${input.variant}' is not a variant of '${experiment.slug}' (its variants: ${keys.join(', ')})`,
    );
  }
  if (input.variant === control) {
    throw new ValidationError(
      `variant '${input.variant}' is the control (what everyone outside the rollout is served): roll out another`,
    );
  }
  return {
    variant: input.variant,
    control,
    steps: checkSteps(input.steps),
    guardrails: checkGuardrails(experiment, input.guardrails),
    onRegression: input.onRegression ?? 'rollback',
  };
}

export class RolloutService {
  private readonly now: () => string;
  private readonly newId: () => string;

  constructor(private readonly deps: RolloutDeps) {
    this.now = deps.now ?? isoNow;
    this.newId = deps.newId ?? newId;
  }

  private async live(slug: string): Promise<LiveExperiment> {
    const live = await this.deps.cache.find(slug);
    if (live === undefined) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return live;
  }

  private event(src: EventSource, slug: string, id: string, r: Rollout, move: RolloutMove): ChangeEvent {
    const data: JsonObject = {
      rollout: id,
      variant: r.variant,
      control: r.control,
      step: move.step,
      percent: servedPercent({ ...r, state: move.state, step: move.step }),
      state: move.state,
    };
    if (move.reason !== null) data.reason = move.reason;
    if (move.approved !== undefined) data.approvedStep = move.approved;
    return rolloutEvent(src, move.event, slug, data);
  }

  /** Starts a rollout of `input.variant` (pending when its first step waits for an approval). */
  async start(slug: string, input: RolloutInput, actor: Actor): Promise<RolloutView> {
    const { experiment } = await this.live(slug);
    if (experiment.status !== 'running') {
      throw new ConflictError(
        `experiment '${slug}' is ${experiment.status}: a rollout ramps a running experiment's variant ` +
          '(start it, or resume it, first)',
      );
    }
    const draft = draftRollout(experiment, input);
    const at = this.now();
    const id = this.newId();
    const src: EventSource = { actor, at, newId: this.newId };
    let events: ChangeEvent[] = [];
    const stored = await this.deps.store.insertRollout(slug, (current) => {
      let rollout: Rollout = {
        experimentVersion: current.experiment.version,
        ...draft,
        state: 'pending',
        step: 0,
        seed: rolloutSeed(current.experiment.seed, input.variant),
        approved: -1,
        stepStartedAt: null,
        reason: null,
        createdAt: at,
        updatedAt: at,
      };
      const move = startMove(draft.steps) ?? {
        state: 'pending',
        step: 0,
        event: 'rollout.created',
        reason: null,
      };
      events = [this.event(src, slug, id, rollout, move)];
      rollout = applyMove(rollout, move, at);
      return { rollout: { id, experimentId: current.id, version: 1, rollout }, events };
    });
    this.deps.cache.put(stored);
    this.deps.bus.publish(events);
    return this.view(slug, stored.rollout!);
  }

  /** The experiment's newest rollout with its history; 404 when it has none. */
  async get(slug: string): Promise<RolloutView> {
    const live = await this.live(slug);
    if (live.rollout === undefined) throw new NotFoundError(`experiment '${slug}' has no rollout`);
    return this.view(slug, live.rollout);
  }

  private async view(slug: string, stored: StoredRollout): Promise<RolloutView> {
    const events = await this.deps.store.listEvents({
      experiment: slug,
      type: { prefix: 'rollout.' },
      limit: 1000,
    });
    const history = events
      .filter((e) => e.data.rollout === stored.id)
      .map(({ id, type, at, actor, experiment, data }) => ({ id, type, at, actor, experiment, data }));
    return { id: stored.id, ...stored.rollout, percent: servedPercent(stored.rollout), history };
  }

  /** A person's action on the experiment's live rollout. */
  async act(
    slug: string,
    action: RolloutAction,
    actor: Actor,
    reason: string | null = null,
  ): Promise<RolloutView> {
    const live = await this.live(slug);
    const current = live.rollout;
    if (current === undefined) throw new NotFoundError(`experiment '${slug}' has no rollout`);
    const move = actionMove(current.rollout, action, reason);
    const moved = await this.write(slug, current, move, actor);
    if (moved === undefined) {
      throw new ConflictError(
        'the rollout changed meanwhile (another instance or the monitor moved it): read it again',
      );
    }
    return this.view(slug, moved);
  }

  /** Writes a move over the stored version; undefined when another move was written first. */
  private async write(
    slug: string,
    current: StoredRollout,
    move: RolloutMove,
    actor: Actor,
  ): Promise<StoredRollout | undefined> {
    const at = this.now();
    const src: EventSource = { actor, at, newId: this.newId };
    const events: ChangeEvent[] = [this.event(src, slug, current.id, current.rollout, move)];
    const next = applyMove(current.rollout, move, at);
    // At 100% the experiment is released with the variant, in the same transaction as the move.
    let released: ChangeEvent[] = [];
    const change =
      move.state === 'completed'
        ? (experiment: Experiment) => {
            const next = release(experiment, current.rollout.variant, at);
            released = experimentChanged(src, experiment, next);
            return { next, events: released };
          }
        : undefined;
    const stored = await this.deps.store.moveRollout(slug, current.id, current.version, next, events, change);
    if (stored === undefined) return undefined;
    this.deps.cache.put(stored);
    this.deps.bus.publish([...events, ...released]);
    return stored.rollout;
  }

  /**
   * The monitor's round for one experiment's running rollout: `facts` says what the round sees (units,
   * a proven regression). A regression is the monitor's move; a step whose time came is the schedule's.
   * Answers the move written, or null (none due, or another instance wrote one first).
   */
  async round(
    slug: string,
    facts: (r: Rollout) => Promise<Omit<RolloutFacts, 'now'>>,
  ): Promise<RolloutMove | null> {
    const live = await this.live(slug);
    const current = live.rollout;
    if (current === undefined || current.rollout.state !== 'running') return null;
    const seen = await facts(current.rollout);
    const move = monitorMove(current.rollout, { ...seen, now: this.now() });
    if (move === null) {
      // The step's traffic count is taken at the first round that sees it (no event: nothing moved).
      const r = current.rollout;
      if (seen.traffic !== undefined && (r.stepCounts ?? null) === null) {
        const next = { ...r, stepCounts: seen.traffic };
        const stored = await this.deps.store.moveRollout(slug, current.id, current.version, next, []);
        if (stored !== undefined) this.deps.cache.put(stored);
      }
      return null;
    }
    // A finding stops the ramp (the monitor's move); a step whose time came is the schedule's.
    const stops = move.state === 'rolled_back' || move.state === 'paused';
    const actor: Actor = stops ? { kind: 'monitor' } : { kind: 'schedule' };
    return (await this.write(slug, current, move, actor)) === undefined ? null : move;
  }

  /** The experiments whose newest rollout is running (what the monitor's round visits). */
  running(): LiveExperiment[] {
    return this.deps.cache
      .list()
      .filter((l) => l.rollout !== undefined && l.rollout.rollout.state === 'running');
  }

  /** Whether the experiment's rollout still decides its assignments. */
  static governs(live: LiveExperiment): boolean {
    return live.rollout !== undefined && isLive(live.rollout.rollout);
  }
}
