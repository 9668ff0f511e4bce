// The ramp view (issue 38): the experiment's rollout on its overview. Its state; why it was paused or
// rolled back and by whom (the monitor, the schedule or a key), first and prominent; the share served now;
// the steps (done, current, to come; minutes, units, approvals); what the next step waits for (time left,
// "due", an approval); units per arm and each guardrail's sequential interval against its threshold, as
// the monitor judges them; the buttons an admin may press. With no live rollout on a running experiment,
// an admin may start one (the form; "Ship B" on the verdict opens it with B chosen).
import { useEffect } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { formatAgo, formatCount, formatTime } from '../format.js';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';
import { actorWords } from './history.js';
import { RampActions } from './rollout-actions.js';
import {
  approvalWaiting,
  isLive,
  judgeGuardrail,
  nextStepParts,
  thresholdWords,
  unitsOf,
  useRampAnalysis,
} from './rollout-data.js';
import { RolloutForm } from './rollout-form.js';

const STATE_WORDS = {
  pending: 'waits for approval',
  running: 'running',
  paused: 'paused',
  completed: 'completed',
  rolled_back: 'rolled back',
};

/** The move that set a paused or rolled-back state: its event type and verb. */
const STOPS = { paused: ['rollout.paused', 'Paused'], rolled_back: ['rollout.rolled_back', 'Rolled back'] };

function ReasonBanner({ rollout }) {
  const stop = STOPS[rollout.state];
  if (!stop) return null;
  const event = rollout.history.findLast((e) => e.type === stop[0]);
  const kind = event?.actor?.kind ?? 'key';
  const tone = rollout.state === 'rolled_back' || kind === 'monitor' ? 'danger' : 'warn';
  const after =
    rollout.state === 'rolled_back'
      ? `Everyone gets ${rollout.control} again.`
      : `${rollout.variant} stays at ${rollout.percent}% until it is resumed or rolled back.`;
  return html`<div class=${`banner ramp-reason ${tone}`} role="status" data-testid="rollout-reason" data-actor=${kind}>
    <p>
      <strong data-testid="rollout-reason-who">${stop[1]} by ${event ? actorWords(event.actor) : 'an unknown actor'}</strong>
      ${event && html`<span> ${formatAgo(Date.now() - Date.parse(event.at))} </span><span class="small">(${formatTime(event.at)})</span>`}
    </p>
    <p class="ramp-why" data-testid="rollout-reason-text">Why: ${rollout.reason ?? 'no reason given'}</p>
    <p class="small">${after}</p>
  </div>`;
}

function stepState(rollout, i) {
  if (rollout.state === 'completed') return 'done';
  if (rollout.state === 'pending') return i === 0 ? 'waiting' : 'next';
  if (i < rollout.step) return 'done';
  if (i === rollout.step) return rollout.state === 'rolled_back' ? 'stopped' : 'current';
  return 'next';
}

const STEP_WORDS = { done: 'done', current: 'now', waiting: 'waits', stopped: 'rolled back here', next: '' };

function Steps({ rollout }) {
  return html`<ol class="ramp-steps" data-testid="rollout-steps" aria-label="Steps">
    ${rollout.steps.map((s, i) => {
      const state = stepState(rollout, i);
      const approval = s.approval ? (rollout.approved >= i ? 'approved' : 'needs approval') : null;
      return html`<li class=${`ramp-step ${state}`} data-testid="rollout-step" data-state=${state}
        aria-current=${state === 'current' ? 'step' : undefined}>
        <strong>${s.percent}%</strong>
        <span class="small">${s.percent < 100 ? `${s.minMinutes} min` : 'everyone'}</span>
        ${s.minUnits !== null && html`<span class="small">${formatCount(s.minUnits)} units</span>`}
        ${approval && html`<span class="small ramp-approval" data-testid="rollout-step-approval">${approval}</span>`}
        ${STEP_WORDS[state] && html`<span class="small muted">${rollout.state === 'paused' && state === 'current' ? 'paused here' : STEP_WORDS[state]}</span>`}
      </li>`;
    })}
  </ol>`;
}

/** What comes next, in one line: the time left in the step, units and approvals it waits for. */
function NextLine({ rollout, analysis }) {
  let text;
  const next = rollout.steps[rollout.step + 1];
  if (rollout.state === 'running' && next) {
    const parts = nextStepParts(rollout, unitsOf(analysis, rollout.variant));
    text = `Next: ${next.percent}% — ${parts.join(' · ') || 'due'}`;
  } else if (rollout.state === 'pending') {
    text = `Waits for approval to start at ${rollout.steps[0].percent}%; everyone gets ${rollout.control} until then.`;
  } else if (rollout.state === 'paused') {
    text = `Paused at ${rollout.percent}%: resuming holds the step its ${rollout.steps[rollout.step].minMinutes} min again.`;
  } else if (rollout.state === 'running') {
    text = `At its last step, ${rollout.percent}%.`;
  } else if (rollout.state === 'completed') {
    text = `Completed ${formatTime(rollout.updatedAt)}: everyone gets ${rollout.variant}.`;
  } else {
    text = `Ended ${formatTime(rollout.updatedAt)}: everyone gets ${rollout.control}.`;
  }
  const waits = approvalWaiting(rollout) !== -1;
  return html`<p class="ramp-next" data-testid="rollout-next" data-waits-approval=${String(waits)}>${text}</p>`;
}

function Units({ rollout, analysis }) {
  if (!analysis) return html`<p class="muted small">Reading the analysis…</p>`;
  const unit = analysis.srm?.unit === 'user' ? 'users' : 'calls';
  return html`<p class="small" data-testid="rollout-units">
    <strong>Units:</strong> ${rollout.variant} <span data-testid="rollout-units-variant">${formatCount(unitsOf(analysis, rollout.variant))}</span>
    ${' · '}${rollout.control} <span data-testid="rollout-units-control">${formatCount(unitsOf(analysis, rollout.control))}</span>
    ${` ${unit}`} <span class="muted">(sequential analysis against ${rollout.control})</span>
  </p>`;
}

const JUDGED = {
  regression: ['bad', 'regression'],
  within: ['good', 'within'],
  inconclusive: ['warn', 'not proven either way'],
  waiting: ['', 'not yet judged'],
};

function Guardrails({ experiment, rollout, analysis }) {
  if (rollout.guardrails.length === 0) {
    return html`<p class="muted small" data-testid="rollout-no-guardrails">
      No guardrails: the monitor only moves the steps on.
    </p>`;
  }
  return html`<ul class="ramp-guardrails" aria-label="Guardrails">
    ${rollout.guardrails.map((g) => {
      const j = judgeGuardrail(experiment, rollout, analysis, g);
      const [tone, word] = JUDGED[j.status];
      return html`<li data-testid="rollout-guardrail" data-metric=${g.metric} data-status=${j.status}>
        <span class="mono">${g.metric}</span>
        <span class=${`chip ${tone}`} data-testid="rollout-guardrail-status">${word}</span>
        <span class="small" data-testid="rollout-guardrail-text">
          ${j.interval ? `${rollout.variant} vs ${rollout.control} ${j.interval}${j.test ? ` (${j.test})` : ''}` : j.why}
          ${`; threshold ${thresholdWords(experiment, g)}`}
        </span>
      </li>`;
    })}
  </ul>`;
}

function RampView({ experiment, rollout, analysis, admin, onDone }) {
  const served = rollout.percent;
  return html`<div class="ramp" data-testid="rollout" data-state=${rollout.state}>
    <div class="ramp-head">
      <h3>Rollout of <span class="mono">${rollout.variant}</span></h3>
      <span class=${`badge rollout-${rollout.state}`} data-testid="rollout-state">${STATE_WORDS[rollout.state]}</span>
      <span class="muted small">on regression: ${rollout.onRegression === 'pause' ? 'pause' : 'roll back'}</span>
    </div>
    <${ReasonBanner} rollout=${rollout} />
    <div class="ramp-served">
      <p><strong class="ramp-percent" data-testid="rollout-percent">${served}%</strong> served ${rollout.variant}; the rest ${rollout.control}</p>
      <div class="weight-track" aria-hidden="true"><div class="weight-fill" style=${{ width: `${served}%` }}></div></div>
    </div>
    <${Steps} rollout=${rollout} />
    <${NextLine} rollout=${rollout} analysis=${analysis} />
    <${Units} rollout=${rollout} analysis=${analysis} />
    <${Guardrails} experiment=${experiment} rollout=${rollout} analysis=${analysis} />
    ${admin && html`<${RampActions} experiment=${experiment} rollout=${rollout} onDone=${onDone} />`}
  </div>`;
}

/**
 * The overview's rollout section. `ramp` is useRollout's state; `draft` ({variant} or null) is an open
 * start form; `onExperiment(next)` takes the experiment read again (a completed rollout released it).
 */
export function RampSection({ experiment, ramp, draft, setDraft, onExperiment, refreshMs }) {
  const { api, admin } = useSession();
  // A rollout of an older version (released, then run again with new variants) no longer applies.
  const older = ramp.rollout && ramp.rollout.experimentVersion !== experiment.version ? ramp.rollout : null;
  const rollout = older ? null : ramp.rollout;
  const analysis = useRampAnalysis(experiment, rollout, refreshMs);
  const completedHere = rollout?.state === 'completed' && experiment.status === 'running';
  useEffect(() => {
    if (completedHere) api.get(experimentPath(experiment.slug)).then(onExperiment, () => {});
  }, [completedHere]);
  const canStart = admin && experiment.status === 'running' && !isLive(rollout);
  if (!ramp.loaded || (!ramp.rollout && !canStart)) return null;
  const started = (view) => {
    ramp.set(view);
    setDraft(null);
  };
  return html`<section class="ramp-section" aria-labelledby="ramp-title" data-testid="ramp-section">
    <h2 id="ramp-title">Rollout</h2>
    <${ErrorNote} error=${ramp.error} testid="rollout-error" />
    ${
      rollout &&
      html`<${RampView} experiment=${experiment} rollout=${rollout} analysis=${analysis.data} admin=${admin}
        onDone=${ramp.set} />`
    }
    ${
      older &&
      html`<p class="muted small" data-testid="rollout-older">
        The last rollout (of ${older.variant}, ${older.state.replace('_', ' ')}) ramped version
        ${` ${older.experimentVersion}`}; version ${experiment.version} has none.
      </p>`
    }
    <${ErrorNote} error=${analysis.error} testid="rollout-analysis-error" />
    ${
      canStart &&
      (draft
        ? html`<${RolloutForm} key=${draft.n} experiment=${experiment} preset=${draft.variant}
            onStarted=${started} onCancel=${() => setDraft(null)} />`
        : html`<p class="ramp-start">
            <button type="button" onClick=${() => setDraft({ variant: null, n: Date.now() })} data-testid="rollout-open">
              ${rollout ? 'Start a new rollout' : 'Start rollout'}
            </button>
            <span class="muted small"> Ship a variant to everyone in guarded steps.</span>
          </p>`)
    }
  </section>`;
}
