// The guardrail monitor (issue 27): every interval, one instance (the store's leader) reads each running
// experiment that declares guardrails with the sequential analysis (valid however often it is read) and,
// once each variant has the experiment's minimumUnits on every guardrail, raises its findings
// (monitor-findings.ts) and, with guardrailAction 'pause', pauses the experiment through the same update
// as a user's PATCH (ExperimentService.pause). Findings are kept in the store: raised once per change.
import { type ChangeEvent, type EventSource, MONITOR_ACTOR } from '../core/events.js';
import type { MonitorStore } from '../store/store.js';
import type { AnalysisPool } from './analysis-pool.js';
import type { ExperimentCache } from './experiment-cache.js';
import { findings, guardrailsOf, judgeable, readState } from './monitor-findings.js';
import { factsOf } from './rollout-judge.js';
import type { RolloutService } from './rollouts.js';

/** How a round ended: it ran (led), another instance leads (follower), or it failed. */
export type RoundOutcome = 'led' | 'follower' | 'failed';

export interface MonitorDeps {
  store: MonitorStore;
  experiments: Pick<ExperimentCache, 'list'>;
  analysis: Pick<AnalysisPool, 'analyze' | 'exposures'>;
  /**
   * Pauses a running experiment with the monitor as actor, `reason` in its event and `findings` committed
   * with it (ExperimentService.pause); false when it no longer ran (nothing written).
   */
  pause: (slug: string, reason: string, findings: readonly ChangeEvent[]) => Promise<boolean>;
  /** Rollouts (issue 38): each running one is moved on by the round (a step, a rollback); absent: none. */
  rollouts?: Pick<RolloutService, 'running' | 'round'>;
  now: () => string;
  newId: () => string;
  /** Told of every round: its outcome and how long it took (seconds). */
  onRound?: (outcome: RoundOutcome, seconds: number) => void;
  onError?: (err: unknown, slug?: string) => void;
}

export class Monitor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly deps: MonitorDeps) {}

  /** Runs a round every `intervalMs`, the next one starting only once the last ended. */
  start(intervalMs: number): void {
    const next = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.running = this.round().finally(next);
      }, intervalMs);
      this.timer.unref();
    };
    next();
  }

  /** Stops the rounds; resolves once a round under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => {});
  }

  /** One round: nothing unless this process leads; else every running experiment with guardrails. */
  async round(): Promise<RoundOutcome> {
    const started = performance.now();
    let outcome: RoundOutcome = 'failed';
    try {
      outcome = (await this.deps.store.leadMonitor()) ? 'led' : 'follower';
      if (outcome === 'led') {
        for (const live of this.deps.experiments.list('running')) {
          if (this.stopped) break;
          if (guardrailsOf(live.experiment).length === 0) continue;
          try {
            await this.judge(live.id, live.experiment.slug);
          } catch (err) {
            outcome = 'failed';
            this.deps.onError?.(err, live.experiment.slug);
          }
        }
        for (const live of this.deps.rollouts?.running() ?? []) {
          if (this.stopped) break;
          try {
            await this.rollout(live.experiment.slug);
          } catch (err) {
            outcome = 'failed';
            this.deps.onError?.(err, live.experiment.slug);
          }
        }
      }
    } catch (err) {
      outcome = 'failed';
      this.deps.onError?.(err);
    }
    this.deps.onRound?.(outcome, (performance.now() - started) / 1000);
    return outcome;
  }

  /**
   * A running rollout's round: its variant's units and guardrails, by the sequential analysis of its version,
   * and its traffic (assign calls; users per arm in a sticky experiment) for the traffic checks.
   */
  private async rollout(slug: string): Promise<void> {
    await this.deps.rollouts!.round(slug, async (r) => {
      const analysis = await this.deps.analysis.analyze(slug, {
        method: 'sequential',
        control: r.control,
        version: r.experimentVersion,
      });
      const experiment = this.deps.experiments.list().find((l) => l.experiment.slug === slug)?.experiment;
      if (experiment === undefined) return { units: 0, regression: null };
      const calls = await this.deps.analysis.exposures(slug, r.experimentVersion);
      const { counts, unit } = analysis.srm;
      const traffic = {
        calls: (calls[r.variant] ?? 0) + (calls[r.control] ?? 0),
        users: unit === 'user' ? { variant: counts[r.variant] ?? 0, control: counts[r.control] ?? 0 } : null,
      };
      return { ...factsOf(experiment, r, analysis), traffic };
    });
  }

  private async judge(id: number, slug: string): Promise<void> {
    const analysis = await this.deps.analysis.analyze(slug, { method: 'sequential' });
    const experiment = this.deps.experiments.list('running').find((l) => l.id === id)?.experiment;
    if (experiment === undefined || !judgeable(experiment, analysis)) return;
    const last = readState(await this.deps.store.readMonitorState(id));
    const at = this.deps.now();
    const src: EventSource = { actor: MONITOR_ACTOR, at, newId: this.deps.newId };
    const found = findings(experiment, analysis, last, src);
    let { events, state } = found;
    // The pause commits with the failures that made it (a failed pause is retried next round: nothing
    // of this round is kept); the other findings and the state follow.
    if (found.pause !== undefined) {
      const failures = events.filter((e) => e.type === 'guardrail.failed');
      if (await this.deps.pause(slug, found.pause, failures)) {
        events = events.filter((e) => !failures.includes(e));
      } else {
        // It stopped running meanwhile (a person paused or completed it): nothing was paused.
        state = { ...state, paused: state.paused.filter((k) => last?.paused.includes(k)) };
      }
    }
    const same = last !== undefined && JSON.stringify(last) === JSON.stringify(state);
    if (!same || events.length > 0) {
      await this.deps.store.recordFindings(id, { ...state }, at, events);
    }
  }
}
