// The experiment's rollout (issue 38) for the overview, and what the ramp view says of it. The rollout is
// read only once the history has a rollout event: GET /experiment/:slug/rollout answers 404 without one,
// which the browser would log as an error on every experiment page. The guardrails are read from the
// sequential analysis against the rollout's control on its version: what the monitor judges
// (src/services/rollout-judge.ts), so the page and the monitor agree.
import { useRef, useState } from 'preact/hooks';
import { experimentPath, withQuery } from '../api.js';
import { formatInterval, formatShare, formatTest } from '../format.js';
import { useLoad, usePoll, useSession } from '../hooks.js';

/** The states in which a rollout decides assignments (one at a time per experiment). */
export const LIVE_STATES = ['pending', 'running', 'paused'];

export function isLive(rollout) {
  return Boolean(rollout) && LIVE_STATES.includes(rollout.state);
}

/** What everyone outside a rollout is served: the experiment's defaultVariant, else its first variant. */
export function controlOf(experiment) {
  return experiment.defaultVariant ?? experiment.variants[0]?.key;
}

/** The step that waits for an approval now, or -1: the first while pending, else the next one. */
export function approvalWaiting(rollout) {
  if (!isLive(rollout)) return -1;
  const next = rollout.state === 'pending' ? 0 : rollout.step + 1;
  const step = rollout.steps[next];
  return step?.approval && rollout.approved < next ? next : -1;
}

async function readRollout(api, slug, known) {
  if (!known) {
    const page = await api.get(withQuery(experimentPath(slug, '/events'), { type: 'rollout.*', limit: 1 }));
    if (page.events.length === 0) return null;
  }
  return api.get(experimentPath(slug, '/rollout'));
}

/** The newer of two views of a rollout (an action's answer against the last poll). */
function newer(a, b) {
  if (!a) return b ?? null;
  if (!b) return a;
  return a.updatedAt >= b.updatedAt ? a : b;
}

/**
 * `{ rollout, error, set, reload }`: the experiment's newest rollout (null: none), read again every
 * `refreshMs` while the experiment runs; `set(view)` takes an action's answer at once.
 */
export function useRollout(experiment, refreshMs) {
  const { api } = useSession();
  const known = useRef(false);
  const [answered, setAnswered] = useState(null);
  const state = useLoad(async () => {
    const r = await readRollout(api, experiment.slug, known.current);
    if (r) known.current = true;
    return r;
  }, [experiment.slug, experiment.version, experiment.status]);
  usePoll(state.reload, refreshMs, experiment.status === 'running');
  const set = (view) => {
    known.current = true;
    setAnswered(view);
    state.reload();
  };
  return {
    rollout: newer(answered, state.data),
    loaded: state.data !== undefined,
    error: state.error,
    set,
    reload: state.reload,
  };
}

/** The sequential analysis the monitor judges the rollout by, read again while the rollout is live. */
export function useRampAnalysis(experiment, rollout, refreshMs) {
  const { api } = useSession();
  const state = useLoad(
    () =>
      rollout
        ? api.get(
            withQuery(experimentPath(experiment.slug, '/analysis'), {
              method: 'sequential',
              control: rollout.control,
              version: rollout.experimentVersion,
            }),
          )
        : Promise.resolve(null),
    [experiment.slug, experiment.status, rollout?.id, rollout?.control, rollout?.updatedAt],
  );
  usePoll(state.reload, refreshMs, experiment.status === 'running' && isLive(rollout));
  return state;
}

/** "12 min", "1 h 5 min", "under a minute". */
export function formatDuration(ms) {
  const minutes = Math.ceil(ms / 60_000);
  if (minutes <= 1) return ms < 60_000 ? 'under a minute' : '1 min';
  if (minutes <= 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

/**
 * What the running rollout waits for before its next step, as short phrases: the time left in the step
 * ("12 min left", or "due"), units still missing, and an approval.
 */
export function nextStepParts(rollout, units, now = Date.now()) {
  const current = rollout.steps[rollout.step];
  const parts = [];
  if (rollout.stepStartedAt) {
    const left = Date.parse(rollout.stepStartedAt) + current.minMinutes * 60_000 - now;
    parts.push(left > 0 ? `${formatDuration(left)} left` : 'due');
  }
  if (current.minUnits !== null && units < current.minUnits) {
    parts.push(`${units} of ${current.minUnits} units in ${rollout.variant}`);
  }
  if (approvalWaiting(rollout) !== -1) parts.push('waits for approval');
  return parts;
}

/** Units per arm (the analysis' sample-ratio counts: users, or assign calls). */
export function unitsOf(analysis, key) {
  return analysis?.srm?.counts?.[key] ?? 0;
}

/**
 * A rollout guardrail against the sequential analysis, as the monitor judges it: `regression` when the
 * interval lies wholly beyond the threshold on the worse side; `within` when its worse end is within the
 * threshold; `inconclusive` between; `waiting` until both arms have the experiment's minimumUnits.
 */
export function judgeGuardrail(experiment, rollout, analysis, g) {
  const direction = experiment.metrics.find((d) => d.name === g.metric)?.direction;
  const m = analysis?.metrics.find((x) => x.name === g.metric);
  const arm = m?.variants.find((v) => v.key === rollout.variant);
  const control = m?.variants.find((v) => v.key === rollout.control);
  const base = { metric: g.metric, threshold: g.threshold, interval: null, test: null };
  if (!arm?.guardrail || !control || !direction) {
    return { ...base, status: 'waiting', why: `no ${g.metric} values in both arms yet` };
  }
  const min = experiment.minimumUnits;
  if (arm.n < min || control.n < min) {
    return {
      ...base,
      status: 'waiting',
      why: `too few units: ${rollout.variant} ${arm.n}, ${rollout.control} ${control.n}; each needs ${min}`,
    };
  }
  const ci = arm.guardrail.relative.ci;
  const judged = { ...base, interval: formatInterval(ci), test: formatTest(arm.guardrail.test) };
  const up = direction === 'increase';
  // The end nearest "better" proves a regression; the other end proves it is within.
  const near = up ? ci[1] : ci[0];
  const far = up ? ci[0] : ci[1];
  const beyond = (x) => (up ? x < -g.threshold : x > g.threshold);
  if (near === null || near === undefined) {
    return { ...judged, status: 'waiting', why: 'its lift has no bound on that side yet' };
  }
  if (beyond(near)) return { ...judged, status: 'regression', why: null };
  if (far !== null && far !== undefined && !beyond(far)) return { ...judged, status: 'within', why: null };
  return { ...judged, status: 'inconclusive', why: null };
}

/** "5% lower" / "5% higher": the loss a guardrail tolerates, in the metric's terms. */
export function thresholdWords(experiment, g) {
  const direction = experiment.metrics.find((d) => d.name === g.metric)?.direction;
  const side = direction === 'increase' ? 'lower' : direction === 'decrease' ? 'higher' : 'worse';
  return g.threshold > 0 ? `${formatShare(g.threshold)} ${side}` : 'any loss';
}
