// What acted, first (issue 36 item 3): a paused, completed, released or archived experiment opens with who
// set that status (a key's name, the guardrail monitor, or the rollout's schedule: "Released B to everyone
// by the rollout's schedule"), when (ago and the time), and why (the monitor: the guardrail's metric,
// interval and threshold; a key: its decision and note). Read from the history:
// GET /experiment/:slug/events?type=experiment.status_changed (its newest), and for a monitor pause the
// guardrail.failed finding behind it.
import { experimentPath, withQuery } from '../api.js';
import { formatAgo, formatInterval, formatLift, formatShare, formatTest, formatTime } from '../format.js';
import { useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { decisionWhat } from './decision.js';
import { actorWords } from './history.js';

/** Statuses a person (or the monitor) set: a draft was created so, a running one shows its results. */
const QUIET = new Set(['draft', 'running']);
const VERBS = {
  paused: 'Paused',
  completed: 'Completed',
  released: 'Released',
  archived: 'Archived',
  running: 'Started',
};

/** Every event of one type, oldest first (status changes and failures are few: a page or two). */
async function eventsOfType(api, slug, type) {
  const events = [];
  let cursor;
  do {
    const page = await api.get(withQuery(experimentPath(slug, '/events'), { type, limit: 100, cursor }));
    events.push(...page.events);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && events.length < 1000);
  return events;
}

/** The newest change to `status`, and for a monitor's pause the guardrail failure it names. */
async function readChange(api, slug, status) {
  const changes = await eventsOfType(api, slug, 'experiment.status_changed');
  const change = changes.findLast((e) => e.data.to === status);
  if (change?.actor?.kind !== 'monitor') return { change, failure: null };
  const failures = await eventsOfType(api, slug, 'guardrail.failed');
  const reason = String(change.data.reason ?? '');
  const failure =
    failures.findLast((f) => f.at <= change.at && reason.startsWith(`${f.data.metric} guardrail`)) ?? null;
  return { change, failure };
}

/** "error_rate: B vs A, 90% Welch t interval [+4.1%, +12.3%], threshold 2%" */
function failureWords(f) {
  const d = f.data;
  const ci = d.effect?.relative?.ci;
  const interval = ci ? `${formatTest(d.test) || 'interval'} ${formatInterval(ci)}` : null;
  const threshold = d.threshold > 0 ? `threshold ${formatShare(d.threshold)}` : 'threshold 0 (any loss)';
  const lift = d.effect?.relative?.estimate;
  return [
    `${d.metric}: ${d.variant} vs ${d.control}`,
    lift === undefined || lift === null ? null : `lift ${formatLift(lift)}`,
    interval,
    threshold,
  ]
    .filter(Boolean)
    .join(', ');
}

function why(change, failure) {
  const d = change.data;
  if (failure) return failureWords(failure);
  if (d.reason) return d.reason;
  if (d.decision) return `${decisionWhat(d.decision)}${d.decision.note ? `: ${d.decision.note}` : ''}`;
  return null;
}

export function StatusBanner({ experiment }) {
  const { api } = useSession();
  const quiet = QUIET.has(experiment.status);
  const { data } = useLoad(
    () => (quiet ? Promise.resolve(null) : readChange(api, experiment.slug, experiment.status)),
    [experiment.slug, experiment.status, experiment.updatedAt],
  );
  if (quiet || !data?.change || data.change.data.to !== experiment.status) return null;
  const { change, failure } = data;
  const monitor = change.actor?.kind === 'monitor';
  const reason = why(change, failure);
  const verb =
    change.data.to === 'released' && experiment.releasedVariant
      ? `Released ${experiment.releasedVariant} to everyone`
      : (VERBS[change.data.to] ?? change.data.to);
  return html`<div
    class=${`banner status-banner ${monitor ? 'danger' : 'info'}`}
    role="status"
    data-testid="status-banner"
    data-actor=${change.actor?.kind === 'schedule' ? 'schedule' : monitor ? 'monitor' : 'key'}
  >
    <p>
      <strong data-testid="status-who">${verb} by ${actorWords(change.actor)}</strong>
      <span> ${formatAgo(Date.now() - Date.parse(change.at))} </span>
      <span class="muted small">(${formatTime(change.at)})</span>
    </p>
    ${reason && html`<p class="status-why" data-testid="status-why">Why: ${reason}</p>`}
    ${
      monitor &&
      change.data.reason &&
      failure &&
      html`<p class="muted small" data-testid="status-reason">${change.data.reason}</p>`
    }
  </div>`;
}
