// An experiment's history (issue 27): who changed what and when, newest first, from
// GET /experiment/:slug/events ("Updated by release-bot at 14:02: status running → paused").
import { experimentPath, withQuery } from '../api.js';
import { formatTime } from '../format.js';
import { useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';
import { decisionWhat } from './decision.js';

/** Events read at most (pages of 100): the page shows the latest of them. */
const MAX_EVENTS = 1000;

/** Who acted, in words: the key's name, or the guardrail monitor. */
export function actorWords(actor) {
  if (actor?.kind === 'monitor') return 'the guardrail monitor';
  if (actor?.kind === 'schedule') return "the rollout's schedule";
  return actor?.name ?? 'an unknown key';
}

function shortText(value) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 60 ? `'${text.slice(0, 57)}…'` : `'${text}'`;
}

/** ", shipped B: as good, cheaper" (or "" without a decision). */
function decisionWords(decision) {
  if (!decision) return '';
  return `, ${decisionWhat(decision)}${decision.note ? `: ${decision.note}` : ''}`;
}

/** What an experiment.updated event changed, field by field. */
function updatedWords(data) {
  const before = data.before ?? {};
  const after = data.after ?? {};
  const parts = [];
  for (const field of Object.keys(after)) {
    if (field === 'version') continue;
    if (field === 'variants') {
      parts.push(
        before.version !== undefined ? `variants (version ${before.version} → ${after.version})` : 'variants',
      );
    } else if (field === 'decision') {
      parts.push(`decision ${after.decision ? decisionWords(after.decision).slice(2) : 'removed'}`);
    } else if (field === 'metrics' || field === 'segments') {
      const names = (list) =>
        (list ?? []).map((m) => (typeof m === 'string' ? m : m.name)).join(', ') || 'none';
      parts.push(`${field} ${names(before[field])} → ${names(after[field])}`);
    } else {
      parts.push(`${field} ${shortText(before[field])} → ${shortText(after[field])}`);
    }
  }
  return parts.join('; ');
}

const ROLLOUT_VERBS = {
  'rollout.created': 'created (its first step waits for an approval)',
  'rollout.started': 'started',
  'rollout.approved': 'approved',
  'rollout.step_advanced': 'moved on',
  'rollout.paused': 'paused',
  'rollout.resumed': 'resumed',
  'rollout.rolled_back': 'rolled back',
  'rollout.completed': 'completed',
};

/** "Rollout of B moved on by the rollout's schedule at <time>: 25% served B" (and why, when it stopped). */
function rolloutSentence(event, who, when) {
  const d = event.data;
  const verb = ROLLOUT_VERBS[event.type] ?? event.type.slice('rollout.'.length);
  const step = d.approvedStep === undefined ? '' : ` step ${d.approvedStep + 1}`;
  const why = d.reason ? `; ${d.reason}` : '';
  const served =
    d.state === 'rolled_back' || (d.state === 'pending' && d.percent === 0)
      ? `everyone gets ${d.control}`
      : d.percent === 100
        ? `everyone gets ${d.variant}`
        : `${d.percent}% served ${d.variant}`;
  return `Rollout of ${d.variant} ${verb}${step} by ${who} at ${when}: ${served}${why}`;
}

/** One event as a sentence: "Updated by <actor> at <time>: <what>". */
export function eventSentence(event) {
  const who = actorWords(event.actor);
  const when = formatTime(event.at);
  switch (event.type) {
    case 'experiment.created':
      return `Created by ${who} at ${when}`;
    case 'experiment.status_changed':
      if (event.data.reason && event.data.to === 'paused') {
        return `Paused by ${who} at ${when}: ${event.data.reason}`;
      }
      return `Updated by ${who} at ${when}: status ${event.data.from} → ${event.data.to}${decisionWords(event.data.decision)}`;
    case 'guardrail.failed':
      return `Guardrail ${event.data.metric} failed, found by ${who} at ${when}: ${event.data.summary}`;
    case 'srm.detected':
      return `Sample-ratio mismatch found by ${who} at ${when}: ${event.data.summary}`;
    case 'verdict.changed':
      return `Verdict ${event.data.from} → ${event.data.to}, found by ${who} at ${when}: ${event.data.summary}`;
    case 'experiment.updated':
      return `Updated by ${who} at ${when}: ${updatedWords(event.data)}`;
    case 'experiment.deleted':
      return `Deleted by ${who} at ${when}`;
    default:
      if (event.type.startsWith('rollout.')) return rolloutSentence(event, who, when);
      return `${event.type} by ${who} at ${when}`;
  }
}

async function readHistory(api, slug) {
  const events = [];
  let cursor;
  do {
    const page = await api.get(withQuery(experimentPath(slug, '/events'), { limit: 100, cursor }));
    events.push(...page.events);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && events.length < MAX_EVENTS);
  return { events, more: cursor !== undefined };
}

/** The history, newest first; read again whenever the experiment (or `stamp`: its rollout) changes. */
export function History({ experiment, stamp }) {
  const { api } = useSession();
  const { data, error } = useLoad(
    () => readHistory(api, experiment.slug),
    [experiment.slug, experiment.updatedAt, stamp],
  );
  return html`<section aria-labelledby="history-title" data-testid="history">
    <h2 id="history-title">History</h2>
    <${ErrorNote} error=${error} testid="history-error" />
    ${
      data &&
      html`<ol class="history" reversed>
      ${[...data.events]
        .reverse()
        .map(
          (e) =>
            html`<li data-testid="history-event" data-type=${e.type} key=${e.id}>${eventSentence(e)}</li>`,
        )}
    </ol>
    ${data.more && html`<p class="muted small">The first ${data.events.length} changes are read; newer ones are in GET /experiment/${experiment.slug}/events.</p>`}`
    }
  </section>`;
}
