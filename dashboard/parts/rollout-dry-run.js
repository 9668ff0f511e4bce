// The start form's dry run (issue 38): the ramp as the form says it, played 1,000 times by the server
// (POST /experiment/:slug/rollout/simulate) before anything starts: how often a guardrail would stop it
// with identical arms (a false rollback), how long it takes to 100%, and with the experiment's observed
// effects how often it is rolled back. The server's refusal (no results yet, no guardrail) shows as it is.
import { useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { formatChance, formatCount, formatLift } from '../format.js';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';

const RUNS = 1000;

const chance = (s) => `${formatChance(s.chance)} (95%: ${formatChance(s.ci[0])}–${formatChance(s.ci[1])})`;

function minutes(m) {
  return m === null
    ? 'not within the horizon'
    : `after ${formatCount(m.p50)} min (p90 ${formatCount(m.p90)})`;
}

/** The answer in two sentences. */
export function dryRunWords(s) {
  const effects = s.guardrails.map((g) => `${g.metric} ${formatLift(g.effect)} (${g.effectFrom})`).join(', ');
  return [
    `Over ${formatCount(s.runs)} ramps at ${formatCount(Math.round(s.unitsPerHour))} units an hour: a false rollback in ` +
      `${chance(s.identicalArms.rollback)}; 100% ${minutes(s.identicalArms.minutesToFull)}.`,
    `With ${effects || 'no effect'}: rolled back in ${chance(s.withEffects.rollback)}; reaches 100% in ` +
      `${formatChance(s.withEffects.completed.chance)}.`,
  ];
}

/** A "Dry run" button for the form's ramp (`body`: the form's POST body, or null while the form is invalid). */
export function DryRun({ experiment, body }) {
  const { api } = useSession();
  const [answer, setAnswer] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const run = async () => {
    if (!body) return;
    setBusy(true);
    setError(null);
    try {
      setAnswer(
        await api.post(experimentPath(experiment.slug, '/rollout/simulate'), { ...body, runs: RUNS }),
      );
    } catch (err) {
      setAnswer(null);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="rollout-dry-run" data-testid="rollout-dry-run">
    <button type="button" onClick=${run} disabled=${busy || !body} data-testid="rollout-dry-run-button">
      ${busy ? 'Playing the ramp…' : 'Dry run'}
    </button>
    <span class="hint small"> plays this ramp ${formatCount(RUNS)} times on the experiment's own numbers; starts nothing</span>
    ${
      answer &&
      html`<div class="dry-run-result" aria-live="polite" data-testid="rollout-dry-run-result">
      ${dryRunWords(answer).map((line) => html`<p>${line}</p>`)}
    </div>`
    }
    <${ErrorNote} error=${error} testid="rollout-dry-run-error" />
  </div>`;
}
