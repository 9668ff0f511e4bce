// An offline run's comparison (issue 40, GET /runs/:id/comparison): the verdict sentence first, as the
// overview shows the experiment's, then starting the winner online (parts/run-launch.js), the control and
// alpha (kept in the address), the table of every metric and variant (parts/run-table.js), every sentence
// of the verdict, and the items that changed most with both outputs (parts/run-changed.js).
import { useEffect } from 'preact/hooks';
import { withQuery } from '../api.js';
import { formatCount, formatTime } from '../format.js';
import { href, navigate, useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Loading, VerdictBadge } from '../parts/common.js';
import { ExperimentFrame } from '../parts/experiment-head.js';
import { ChangedItems } from '../parts/run-changed.js';
import { StartOnline, winnerOf } from '../parts/run-launch.js';
import { RunTable } from '../parts/run-table.js';
import { datasetHref } from './datasets.js';
import { ALPHAS } from './experiment.js';

/** A sentence whose `names` in backticks read as code. */
export function Sentence({ text }) {
  return text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part));
}

/** The badge's reading: a winner on the primary metric, no results yet, or no winner yet. */
function badgeOf(comparison, declared) {
  const { winner } = winnerOf(comparison, declared);
  if (winner) return { status: 'winner', variant: winner.variant, summary: comparison.verdict.summary };
  const results = comparison.variants.reduce((n, v) => n + v.results, 0);
  return { status: results === 0 ? 'not-enough-data' : 'no-winner-yet', summary: comparison.verdict.summary };
}

function Verdict({ comparison, declared, children }) {
  const verdict = badgeOf(comparison, declared);
  const counts = comparison.variants.map((v) => `${v.key} ${formatCount(v.results)}`).join(', ');
  return html`<section class=${`verdict tone-${verdict.status}`} data-testid="run-verdict" data-status=${verdict.status}
    aria-labelledby="run-verdict-title">
    <h2 id="run-verdict-title" class="visually-hidden">Verdict</h2>
    <${VerdictBadge} verdict=${verdict} />
    <p class="sentence" data-testid="run-verdict-summary"><${Sentence} text=${comparison.verdict.summary} /></p>
    ${children}
    <p class="muted small" data-testid="run-verdict-line">
      ${`Paired comparison over ${formatCount(comparison.items)} items, alpha ${comparison.alpha}, control ${comparison.control} · results: ${counts}`}
    </p>
  </section>`;
}

function Options({ run, comparison, query, path, reload, loading }) {
  const set = (name) => (e) => navigate(path, { ...query, [name]: e.currentTarget.value });
  const alpha = String(comparison.alpha);
  const alphas = ALPHAS.includes(alpha) ? ALPHAS : [...ALPHAS, alpha];
  return html`<div class="toolbar options" role="group" aria-label="Comparison options">
    ${
      run.variants.length > 2 &&
      html`<label class="field inline">
        <span>Control</span>
        <select value=${comparison.control} onChange=${set('control')} data-testid="run-control">
          ${run.variants.map((v) => html`<option value=${v}>${v}</option>`)}
        </select>
      </label>`
    }
    <label class="field inline">
      <span>Alpha</span>
      <select value=${alpha} onChange=${set('alpha')} data-testid="run-alpha">
        ${alphas.map((a) => html`<option value=${a}>${a} (${Math.round((1 - Number(a)) * 1000) / 10}%)</option>`)}
      </select>
    </label>
    <button type="button" onClick=${reload} disabled=${loading} data-testid="run-refresh">
      ${loading ? 'Reading…' : 'Refresh'}
    </button>
  </div>`;
}

function Comparison({ experiment, changed, id, query }) {
  const { api } = useSession();
  const params = { control: query.control || undefined, alpha: query.alpha || undefined };
  const state = useLoad(
    () => api.get(withQuery(`/runs/${encodeURIComponent(id)}/comparison`, params)),
    [id, params.control, params.alpha],
  );
  const comparison = state.data;
  if (!comparison) {
    return state.error
      ? html`<${ErrorNote} error=${state.error} />`
      : html`<${Loading} what="Comparing the run's variants" />`;
  }
  const { run } = comparison;
  const declared = experiment.metrics ?? [];
  const path = `/experiment/${experiment.slug}/runs/${id}`;
  return html`<div class="run-comparison" data-testid="run-comparison" data-run-id=${run.id} aria-busy=${String(state.loading)}>
    <p class="crumbs small"><a href=${href(`/experiment/${experiment.slug}/runs`)}>Offline runs</a> / <span class="mono">${run.id}</span></p>
    <p class="muted small" data-testid="run-summary">
      ${`Variants ${run.variants.join(', ')} over `}<a class="mono" href=${datasetHref(run.dataset, run.version)}>${run.dataset}</a>
      ${` version ${run.version} (${formatCount(run.items)} items), ${run.trials} ${run.trials === 1 ? 'trial' : 'trials'} each · opened ${formatTime(run.createdAt)}`}
    </p>
    <${ErrorNote} error=${state.error} />
    <${Verdict} comparison=${comparison} declared=${declared}>
      <${StartOnline} key=${`${comparison.control}/${comparison.alpha}`} experiment=${experiment} comparison=${comparison}
        declared=${declared} onChanged=${changed} />
    </${Verdict}>
    <section aria-labelledby="per-metric-title">
      <h2 id="per-metric-title">Per metric</h2>
      <${Options} run=${run} comparison=${comparison} query=${query} path=${path} reload=${state.reload} loading=${state.loading} />
      <${RunTable} comparison=${comparison} declared=${declared} />
      ${
        comparison.verdict.sentences.length > 1 &&
        html`<details class="warnings" data-testid="run-sentences">
          <summary>Every comparison in words (${comparison.verdict.sentences.length})</summary>
          <ul>
            ${comparison.verdict.sentences.map((s) => html`<li><${Sentence} text=${s} /></li>`)}
          </ul>
        </details>`
      }
    </section>
    <${ChangedItems} comparison=${comparison} run=${run} />
  </div>`;
}

export function RunPage({ slug, id, query }) {
  return html`<${ExperimentFrame} slug=${slug} tab="runs"
    >${(experiment, changed) => html`<${Comparison} experiment=${experiment} changed=${changed} id=${id} query=${query} />`}</${ExperimentFrame}
  >`;
}

/** `#/runs/<id>`: finds the run's experiment and opens its comparison there. */
export function RunRedirect({ id, query }) {
  const { api } = useSession();
  const state = useLoad(() => api.get(`/runs/${encodeURIComponent(id)}`), [id]);
  useEffect(() => {
    if (state.data)
      location.replace(href(`/experiment/${state.data.experiment}/runs/${state.data.id}`, query));
  }, [state.data]);
  return state.error
    ? html`<${ErrorNote} error=${state.error} />`
    : html`<${Loading} what="Finding the run" />`;
}
