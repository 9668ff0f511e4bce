// "Start online experiment from the winner" (issue 40): when a variant of an offline run is significantly
// better than the control on the primary metric (Holm-adjusted, at the comparison's alpha), an admin can,
// after confirming, PATCH the experiment to run online with the control and that winner only, half the
// traffic each (the other variants removed: a new version) and status running. The server decides: a
// refusal (a completed or archived experiment, a live rollout, overrides naming a removed variant) is
// shown as it says it. Without a winner, the reason the button is absent.
import { useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { href, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';
import { primaryMetric } from './run-table.js';

/**
 * `{ winner, metric, reason }`: the treatment that beats the control on the primary metric (the largest
 * gain when several do), or null and why not.
 */
export function winnerOf(comparison, declared = []) {
  const control = comparison.control;
  const metric = primaryMetric(comparison, declared);
  if (!metric)
    return {
      winner: null,
      metric: null,
      reason: `No metric in this run yet: no variant beats ${control} yet.`,
    };
  if (!metric.direction) {
    return {
      winner: null,
      metric,
      reason: `${metric.name} declares no direction, so no variant beats ${control} yet: declare whether it should increase or decrease (Edit).`,
    };
  }
  const gain = (c) => (metric.direction === 'increase' ? 1 : -1) * c.difference.estimate;
  const better = metric.comparisons.filter((c) => c.significant && c.better === true);
  if (better.length === 0) {
    return {
      winner: null,
      metric,
      reason: `No variant beats ${control} yet on ${metric.name} (significantly, Holm-adjusted at alpha ${comparison.alpha}): nothing to start online.`,
    };
  }
  const winner = better.reduce((best, c) => (gain(c) > gain(best) ? c : best));
  return { winner, metric, reason: null };
}

/** The PATCH body: the control and the winner from the experiment as it is now, 50% each, running. */
export function onlineBody(experiment, control, winner) {
  const variants = [control, winner].map((key) => {
    const v = experiment.variants.find((x) => x.key === key);
    if (!v) {
      throw new Error(
        `variant ${key} is no longer in the experiment (its variants are ${experiment.variants.map((x) => x.key).join(', ')})`,
      );
    }
    return { key: v.key, payload: v.payload, trafficPercent: 50 };
  });
  return { variants, status: 'running' };
}

export function StartOnline({ experiment, comparison, declared, onChanged }) {
  const { api, admin } = useSession();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [done, setDone] = useState(null);
  const { winner, metric, reason } = winnerOf(comparison, declared);
  const control = comparison.control;
  if (!winner) {
    return html`<p class="muted launch-line" data-testid="no-winner">${reason}</p>`;
  }
  const others = experiment.variants.map((v) => v.key).filter((k) => k !== control && k !== winner.variant);
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      // The variants as they are now (payloads may have changed since the page loaded).
      const current = await api.get(experimentPath(experiment.slug));
      const next = await api.patch(
        experimentPath(experiment.slug),
        onlineBody(current, control, winner.variant),
      );
      setDone(next);
      setConfirming(false);
      onChanged(next);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const what = `${experiment.slug} online with ${control} and ${winner.variant} only, 50% each`;
  if (done) {
    return html`<p class="ok launch-line" role="status" data-testid="start-online-done">
      ${`${done.slug} is ${done.status} online with ${done.variants.map((v) => `${v.key} ${v.trafficPercent}%`).join(', ')} (version ${done.version}). `}
      <a href=${href(`/experiment/${done.slug}`)}>See its scorecard</a>
    </p>`;
  }
  return html`<div class="launch-line" data-testid="start-online-box">
    ${
      admin
        ? html`<button type="button" class="primary" disabled=${busy} aria-expanded=${String(confirming)}
            onClick=${() => setConfirming(true)} data-testid="start-online">
            Start online experiment: ${control} vs ${winner.variant}
          </button>`
        : html`<p class="muted small">An admin key can start ${what}.</p>`
    }
    <span class="muted small">${` ${winner.variant} beats ${control} on ${metric.name}: run both online, 50% each (asks first).`}</span>
    ${
      confirming &&
      html`<div class="confirm" role="alertdialog" aria-label="Start the online experiment?" data-testid="start-online-confirm">
        <p>
          ${`Run ${what}, status running (it is ${experiment.status} now).`}
          ${others.length > 0 && ` ${others.join(', ')} ${others.length === 1 ? 'is' : 'are'} removed from the experiment (a new version).`}
        </p>
        <button type="button" class="primary" disabled=${busy} onClick=${start} data-testid="confirm-start-online">
          ${busy ? 'Starting…' : 'Start online'}
        </button>
        <button type="button" disabled=${busy} onClick=${() => setConfirming(false)}>Cancel</button>
      </div>`
    }
    <${ErrorNote} error=${error} testid="start-online-error" />
  </div>`;
}
