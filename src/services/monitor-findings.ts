// What one round of the guardrail monitor finds in one experiment's sequential analysis, against what it
// found last time (services/monitor.ts runs the rounds). Pure: the analysis and the last state in, the
// events to raise, the pause to make and the state to keep out. A finding is raised once per change.
import type { EventSource } from '../core/events.js';
import { finding } from '../core/events.js';
import type { Experiment } from '../core/experiment.js';
import type { JsonObject } from '../core/json.js';
import { type Analysis, guardrailFailureOf } from '../stats/index.js';

/** The analysis' guardrail of a variant, as the verdict's wording reads it (intervals are pairs). */
type Guardrail = Parameters<typeof guardrailFailureOf>[2];

/** What the monitor keeps per experiment between rounds (monitor_states). */
export interface MonitorState {
  /** The verdict's status when last judged. */
  verdict: string;
  /** Whether the sample-ratio check failed. */
  srm: boolean;
  /** The failing guardrails, as 'metric/variant'. */
  failed: string[];
  /**
   * The failing guardrails that already paused the experiment: a person who resumes it is not overruled
   * while they keep failing. A failure that stops failing leaves this list.
   */
  paused: string[];
}

export interface Findings {
  state: MonitorState;
  events: ReturnType<typeof finding>[];
  /** With guardrailAction 'pause' and a guardrail newly failed: why the experiment is paused. */
  pause?: string;
}

/** The declared guardrails, or [] when the experiment declares none (the monitor leaves it alone). */
export function guardrailsOf(e: Experiment): string[] {
  return e.metrics.filter((m) => m.role === 'guardrail').map((m) => m.name);
}

/**
 * Whether every variant has at least `minimumUnits` units on every declared guardrail: until then the
 * experiment is not judged (and nothing is raised).
 */
export function judgeable(e: Experiment, analysis: Analysis): boolean {
  const keys = e.variants.map((v) => v.key);
  return guardrailsOf(e).every((name) => {
    const m = analysis.metrics.find((x) => x.name === name);
    if (m === undefined) return false;
    return keys.every((k) => (m.variants.find((v) => v.key === k)?.n ?? 0) >= e.minimumUnits);
  });
}

function plain(value: unknown): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

export function readState(stored: JsonObject | undefined): MonitorState | undefined {
  if (stored === undefined) return undefined;
  return {
    verdict: String(stored.verdict ?? ''),
    srm: stored.srm === true,
    failed: Array.isArray(stored.failed) ? stored.failed.map(String) : [],
    paused: Array.isArray(stored.paused) ? stored.paused.map(String) : [],
  };
}

/** The findings of a judgeable experiment's analysis (method sequential) since `last`. */
export function findings(
  e: Experiment,
  analysis: Analysis,
  last: MonitorState | undefined,
  src: EventSource,
): Findings {
  const { verdict } = analysis;
  const guardrails = guardrailsOf(e);
  const failed: string[] = [];
  const events: Findings['events'] = [];
  const paused = new Set<string>();
  let pause: string | undefined;
  for (const m of analysis.metrics) {
    if (!guardrails.includes(m.name)) continue;
    for (const v of m.variants) {
      const g = v.guardrail;
      if (g?.status !== 'failed') continue;
      const key = `${m.name}/${v.key}`;
      failed.push(key);
      // The verdict's own sentence when it names this failure; else the guardrail's.
      const named =
        verdict.status === 'guardrail-failed' && verdict.metric === m.name && verdict.variant === v.key;
      const summary = named
        ? verdict.summary
        : `${v.key} ${guardrailFailureOf(m.name, m.kind === 'proportion' ? 'proportion' : 'mean', g as Guardrail)}.`;
      if (last?.paused.includes(key)) paused.add(key);
      else if (e.guardrailAction === 'pause') {
        // A failure that has not paused it yet: new, or raised while the action was 'notify'.
        pause ??= `${m.name} guardrail failed: ${summary}`;
        paused.add(key);
      }
      if (last?.failed.includes(key)) continue;
      events.push(
        finding(src, 'guardrail.failed', e.slug, {
          metric: m.name,
          variant: v.key,
          control: analysis.control,
          summary,
          effect: plain({ relative: g.relative, absolute: g.absolute, bound: g.bound }),
          threshold: g.threshold,
          method: analysis.method,
          // Which interval this is: the guardrail's test at level 1 − 2·alpha (the verdict's wording names it too).
          alpha: analysis.alpha,
          ...(g.test ? { test: plain(g.test) } : {}),
          action: e.guardrailAction,
        }),
      );
    }
  }
  const srm = analysis.srm.mismatch === true;
  if (srm && last?.srm !== true) {
    events.push(
      finding(src, 'srm.detected', e.slug, {
        pValue: analysis.srm.pValue,
        // What the counts are: users (sticky experiments) or assign calls.
        unit: analysis.srm.unit,
        counts: plain(analysis.srm.counts),
        summary: verdict.summary,
      }),
    );
  }
  if (last !== undefined && last.verdict !== verdict.status) {
    events.push(
      finding(src, 'verdict.changed', e.slug, {
        from: last.verdict,
        to: verdict.status,
        summary: verdict.summary,
        ...(verdict.variant === undefined ? {} : { variant: verdict.variant }),
        ...(verdict.metric === undefined ? {} : { metric: verdict.metric }),
      }),
    );
  }
  return {
    state: { verdict: verdict.status, srm, failed, paused: [...paused] },
    events,
    ...(pause ? { pause } : {}),
  };
}
