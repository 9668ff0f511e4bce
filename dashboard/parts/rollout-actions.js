// The ramp's buttons for admin keys (issue 38): Approve (a step waits for one), Pause (running), Resume
// (paused), Roll back (live, after a confirm that takes a reason). Each is PATCH /experiment/:slug/rollout;
// a refusal (409: the rollout moved meanwhile; 400) is shown as the server's own sentence.
import { useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';
import { approvalWaiting, isLive } from './rollout-data.js';

// "rollout" in the labels: the experiment's own Pause and Resume are on the same page.
const LABEL = { approve: 'Approve', pause: 'Pause rollout', resume: 'Resume rollout', rollback: 'Roll back' };

/** The actions the rollout's state allows (the server's rule: src/core/rollout.ts actionMove). */
export function allowedActions(rollout) {
  if (!isLive(rollout)) return [];
  const actions = [];
  if (approvalWaiting(rollout) !== -1) actions.push('approve');
  if (rollout.state === 'running') actions.push('pause');
  if (rollout.state === 'paused') actions.push('resume');
  actions.push('rollback');
  return actions;
}

export function RampActions({ experiment, rollout, onDone }) {
  const { api } = useSession();
  const [busy, setBusy] = useState(null);
  const [error, setError] = useState(null);
  const [confirming, setConfirming] = useState(false);
  const [reason, setReason] = useState('');
  const actions = allowedActions(rollout);
  if (actions.length === 0) return null;

  const act = async (action) => {
    setBusy(action);
    setError(null);
    try {
      const body = { action };
      if (action === 'rollback' && reason.trim()) body.reason = reason.trim();
      onDone(await api.patch(experimentPath(experiment.slug, '/rollout'), body));
      setConfirming(false);
      setReason('');
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  const waiting = approvalWaiting(rollout);
  const title = (action) =>
    action === 'approve' ? `Approve step ${waiting + 1} (${rollout.steps[waiting].percent}%)` : undefined;
  return html`<div class="ramp-actions" role="group" aria-label="Rollout actions">
    ${actions.map(
      (action) => html`<button
        type="button"
        class=${action === 'approve' ? 'primary' : action === 'rollback' ? 'danger' : ''}
        disabled=${busy !== null}
        title=${title(action)}
        aria-expanded=${action === 'rollback' ? String(confirming) : undefined}
        onClick=${() => (action === 'rollback' ? setConfirming(true) : act(action))}
        data-testid=${`rollout-${action}`}
      >
        ${busy === action ? `${LABEL[action]}…` : action === 'approve' ? `Approve ${rollout.steps[waiting].percent}%` : LABEL[action]}
      </button>`,
    )}
    ${
      confirming &&
      html`<div class="confirm" role="alertdialog" aria-label="Roll back this rollout?">
        <p>Everyone goes back to ${rollout.control} at once; the rollout ends (a new one can start).</p>
        <label class="field">
          <span>Why (optional, kept in the history)</span>
          <input type="text" maxlength="2000" value=${reason} placeholder="support tickets up"
            onInput=${(e) => setReason(e.currentTarget.value)} data-testid="rollout-reason-input" />
        </label>
        <button type="button" class="danger" disabled=${busy !== null} onClick=${() => act('rollback')}
          data-testid="rollout-confirm-rollback">Roll back to ${rollout.control}</button>
        <button type="button" onClick=${() => setConfirming(false)}>Cancel</button>
      </div>`
    }
    <${ErrorNote} error=${error} testid="rollout-action-error" />
  </div>`;
}
