// A rollout's dry run (issue 38, item 7): POST /experiment/:slug/rollout/simulate. The ramp a start would
// make (same checks), the experiment's own numbers (the control's mean and spread per guardrail, the
// observed lift, units per hour, the data already there) or the ones the request states, played through
// the monitor's rules many times in an analysis worker (core/rollout-simulation.ts).
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { Experiment } from '../core/experiment.js';
import type { Rollout } from '../core/rollout.js';
import type {
  ScenarioOutcome,
  SimulatedMetric,
  SimulationOutcome,
  SimulationPlan,
} from '../core/rollout-simulation.js';
import type { Analysis } from '../stats/index.js';
import type { ArmData } from '../stats/types.js';
import type { Store } from '../store/store.js';
import type { AnalysisPool } from './analysis-pool.js';
import type { ExperimentCache } from './experiment-cache.js';
import { draftRollout, type RolloutInput } from './rollouts.js';

export interface SimulateInput extends RolloutInput {
  /** Per guardrail metric: the variant's mean relative to the control's (0.3: 30% higher). Default: observed. */
  effects?: Record<string, number>;
  /** Per guardrail metric: the control's mean and standard deviation (no stdDev: a share of true). */
  baseline?: Record<string, { mean: number; stdDev?: number }>;
  unitsPerHour?: number;
  monitorIntervalSeconds?: number;
  runs?: number;
  seed?: number;
}

export interface SimulatedGuardrail {
  metric: string;
  threshold: number;
  direction: 'increase' | 'decrease';
  kind: 'mean' | 'proportion';
  mean: number;
  stdDev: number;
  effect: number;
  /** Where mean and stdDev came from, and the effect: the experiment's results, or the request. */
  baseline: 'observed' | 'stated';
  effectFrom: 'observed' | 'stated' | 'none';
}

export interface SimulationAnswer {
  variant: string;
  control: string;
  runs: number;
  seed: number;
  monitorIntervalSeconds: number;
  unitsPerHour: number;
  minimumUnits: number;
  alpha: number;
  steps: Rollout['steps'];
  onRegression: Rollout['onRegression'];
  guardrails: SimulatedGuardrail[];
  startUnits: { control: number; variant: number };
  identicalArms: ScenarioOutcome;
  withEffects: ScenarioOutcome;
  assumptions: string[];
}

export interface SimulateDeps {
  cache: Pick<ExperimentCache, 'find'>;
  analysis: Pick<AnalysisPool, 'analyze' | 'simulate'>;
  store: Pick<Store, 'readHourly'>;
  /** The server's MONITOR_INTERVAL_SECONDS (0: the monitor is off here). */
  monitorIntervalSeconds: number;
  now: () => string;
}

export const DEFAULT_RUNS = 1000;
const ALPHA = 0.05;
const DEFAULT_INTERVAL_SECONDS = 60;
const TIME_LIMIT_MS = 10_000;
const DAY = 24 * 60;

/** Per guardrail: what the analysis shows of the control and the variant. */
function observed(analysis: Analysis, metric: string, control: string, variant: string) {
  const m = analysis.metrics.find((x) => x.name === metric);
  const c = m?.variants.find((v) => v.key === control);
  const v = m?.variants.find((x) => x.key === variant);
  if (m === undefined || c === undefined || v === undefined) return undefined;
  return { kind: m.kind === 'proportion' ? ('proportion' as const) : ('mean' as const), c, v };
}

function armData(kind: 'mean' | 'proportion', n: number, mean: number, stdDev: number): ArmData {
  if (kind === 'proportion') return { n, successes: Math.round(n * mean) };
  return { n, sum: n * mean, sumSquares: Math.max(0, n - 1) * stdDev * stdDev + n * mean * mean };
}

/** Units per hour from the hours units entered the current version (first such hour to now, at least 1). */
async function observedRate(deps: SimulateDeps, id: number, e: Experiment): Promise<number | null> {
  const hourly = await deps.store.readHourly(id);
  const rows = hourly.exposures.filter((x) => x.version === e.version && x.n > 0);
  if (rows.length === 0) return null;
  const first = Math.min(...rows.map((x) => Date.parse(x.hour)));
  const hours = Math.max(1, (Date.parse(deps.now()) - first) / 3_600_000);
  return rows.reduce((s, x) => s + x.n, 0) / hours;
}

function checkNumber(value: number | undefined, name: string, ok: (v: number) => boolean, rule: string) {
  if (value !== undefined && !(Number.isFinite(value) && ok(value))) {
    throw new ValidationError(`${name} must be ${rule}`);
  }
}

export class RolloutSimulator {
  constructor(private readonly deps: SimulateDeps) {}

  async simulate(slug: string, input: SimulateInput): Promise<SimulationAnswer> {
    const live = await this.deps.cache.find(slug);
    if (live === undefined) throw new NotFoundError(`no experiment with slug '${slug}'`);
    const e = live.experiment;
    const draft = draftRollout(e, input);
    checkNumber(
      input.runs,
      'runs',
      (v) => Number.isInteger(v) && v >= 1 && v <= 10_000,
      'a whole number from 1 to 10000',
    );
    checkNumber(input.unitsPerHour, 'unitsPerHour', (v) => v > 0 && v <= 10_000_000, 'above 0');
    checkNumber(
      input.monitorIntervalSeconds,
      'monitorIntervalSeconds',
      (v) => v >= 1 && v <= 86_400,
      'from 1 to 86400',
    );
    for (const [name, effect] of Object.entries(input.effects ?? {})) {
      if (!draft.guardrails.some((g) => g.metric === name)) {
        throw new ValidationError(`effects.${name}: '${name}' is not a guardrail of this rollout`);
      }
      checkNumber(
        effect,
        `effects.${name}`,
        (v) => v > -1 && v < 100,
        'a relative change above -1 (0.3 is 30% higher)',
      );
    }
    if (draft.guardrails.length === 0) {
      throw new ValidationError(
        `experiment '${slug}' has no guardrail metrics: a rollout without guardrails is never rolled back, nothing to simulate`,
      );
    }
    const assumptions: string[] = [];
    const analysis = await this.deps.analysis.analyze(slug, {
      method: 'sequential',
      control: draft.control,
      version: e.version,
    });
    const startUnits = {
      control: analysis.srm.counts[draft.control] ?? 0,
      variant: analysis.srm.counts[draft.variant] ?? 0,
    };
    const entered = Object.values(analysis.srm.counts).reduce((s, n) => s + n, 0);
    const guardrails: SimulatedGuardrail[] = [];
    const metrics: SimulatedMetric[] = [];
    for (const g of draft.guardrails) {
      const direction = e.metrics.find((m) => m.name === g.metric)?.direction;
      if (direction !== 'increase' && direction !== 'decrease') continue;
      const seen = observed(analysis, g.metric, draft.control, draft.variant);
      const stated = input.baseline?.[g.metric];
      let kind: 'mean' | 'proportion';
      let mean: number;
      let stdDev: number;
      if (stated !== undefined) {
        checkNumber(stated.mean, `baseline.${g.metric}.mean`, () => true, 'a number');
        kind = stated.stdDev === undefined ? 'proportion' : 'mean';
        if (kind === 'proportion' && !(stated.mean >= 0 && stated.mean <= 1)) {
          throw new ValidationError(
            `baseline.${g.metric}.mean must be a share from 0 to 1 without a stdDev (a true/false metric), or give stdDev`,
          );
        }
        checkNumber(stated.stdDev, `baseline.${g.metric}.stdDev`, (v) => v >= 0, '0 or more');
        mean = stated.mean;
        stdDev = stated.stdDev ?? Math.sqrt(mean * (1 - mean));
      } else if (seen !== undefined && seen.c.n >= 2 && seen.c.mean !== null && seen.c.stdDev !== null) {
        ({ kind } = seen);
        mean = seen.c.mean;
        stdDev = seen.c.stdDev;
      } else {
        throw new ValidationError(
          `no results of guardrail '${g.metric}' in the control '${draft.control}' yet: state baseline.${g.metric} = {mean, stdDev}`,
        );
      }
      const lift = seen?.v.relative?.estimate;
      const statedEffect = input.effects?.[g.metric];
      const effect = statedEffect ?? (typeof lift === 'number' && Number.isFinite(lift) ? lift : 0);
      const effectFrom =
        statedEffect !== undefined ? 'stated' : typeof lift === 'number' ? 'observed' : 'none';
      const values = seen === undefined ? 0 : seen.c.n + seen.v.n;
      const perUnit = values > 0 && entered > 0 ? values / entered : 1;
      const start =
        seen !== undefined && seen.c.mean !== null && seen.v.mean !== null && statedEffect === undefined
          ? {
              control: armData(seen.kind, seen.c.n, seen.c.mean, seen.c.stdDev ?? 0),
              variant: armData(seen.kind, seen.v.n, seen.v.mean, seen.v.stdDev ?? 0),
            }
          : undefined;
      metrics.push({
        metric: g.metric,
        direction,
        threshold: g.threshold,
        kind,
        mean,
        stdDev,
        effect,
        perUnit,
        ...(start ? { start } : {}),
      });
      guardrails.push({
        metric: g.metric,
        threshold: g.threshold,
        direction,
        kind,
        mean,
        stdDev,
        effect,
        baseline: stated !== undefined ? 'stated' : 'observed',
        effectFrom,
      });
    }
    const rate = input.unitsPerHour ?? (await observedRate(this.deps, live.id, e));
    if (rate === null) {
      throw new ValidationError(`no units have entered '${slug}' (this version) yet: state unitsPerHour`);
    }
    let interval = input.monitorIntervalSeconds ?? this.deps.monitorIntervalSeconds;
    if (interval <= 0) {
      interval = DEFAULT_INTERVAL_SECONDS;
      assumptions.push(
        `the monitor is off on this server (MONITOR_INTERVAL_SECONDS=0): rounds every ${DEFAULT_INTERVAL_SECONDS} s assumed`,
      );
    }
    if (draft.steps.some((s) => s.approval))
      assumptions.push('approvals are given as soon as a step asks for one');
    assumptions.push(
      'units arrive at a steady rate (Poisson), each a new unit; a metric is normal per unit (a mean) or true/false (a proportion)',
    );
    const minutes = draft.steps.reduce((s, x) => s + x.minMinutes, 0);
    const at = this.deps.now();
    const rollout: Rollout = {
      ...draft,
      experimentVersion: e.version,
      state: 'pending',
      step: 0,
      seed: '',
      approved: -1,
      stepStartedAt: null,
      reason: null,
      createdAt: at,
      updatedAt: at,
    };
    const seed = input.seed ?? 1;
    const plan: SimulationPlan = {
      rollout,
      minimumUnits: e.minimumUnits,
      alpha: ALPHA,
      intervalSeconds: interval,
      unitsPerHour: rate,
      startUnits,
      metrics,
      runs: input.runs ?? DEFAULT_RUNS,
      seed,
      timeLimitMs: TIME_LIMIT_MS,
      horizonMinutes: Math.min(14 * DAY, Math.max(DAY, 4 * minutes)),
    };
    const out: SimulationOutcome = await this.deps.analysis.simulate(plan);
    if (out.runs < plan.runs) {
      assumptions.push(`${out.runs} of ${plan.runs} runs fitted in ${TIME_LIMIT_MS / 1000} s`);
    }
    return {
      variant: draft.variant,
      control: draft.control,
      runs: out.runs,
      seed,
      monitorIntervalSeconds: interval,
      unitsPerHour: rate,
      minimumUnits: e.minimumUnits,
      alpha: ALPHA,
      steps: draft.steps,
      onRegression: draft.onRegression,
      guardrails,
      startUnits,
      identicalArms: out.identicalArms,
      withEffects: out.withEffects,
      assumptions,
    };
  }
}
