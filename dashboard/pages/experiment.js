// Experiment overview: the verdict first ("Ship B" when B wins), a banner when the sample ratio is off, the
// rollout (its ramp view, or the form that starts one), the scorecard with its method, alpha and control,
// then the variants and how they changed, and who changed what (the history). Refreshes itself while running.
import { useState } from 'preact/hooks';
import { experimentPath, withQuery } from '../api.js';
import { formatCount, formatP, formatTime } from '../format.js';
import { navigate, useLoad, usePoll, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, VerdictBadge } from '../parts/common.js';
import { ExperimentFrame } from '../parts/experiment-head.js';
import { ExposedCount, exposedOf, sum } from '../parts/exposed.js';
import { History } from '../parts/history.js';
import { RampSection } from '../parts/rollout.js';
import { controlOf, isLive, useRollout } from '../parts/rollout-data.js';
import { Scorecard } from '../parts/scorecard.js';
import { Segments } from '../parts/segments.js';
import { VariantCards, Versions } from '../parts/variants.js';

export const REFRESH_MS = 5000;
export const ALPHAS = ['0.01', '0.05', '0.1'];
export const METHODS = ['frequentist', 'sequential', 'bayesian'];
/** '' asks for the server's default (BH across secondary and undeclared metrics). */
export const CORRECTIONS = ['', 'none', 'holm', 'bh'];
const CORRECTION_OPTIONS = { '': 'default', none: 'none', holm: 'Holm', bh: 'BH' };

/** The analysis options a page was opened with, as the API's query parameters. */
export function analysisOptions(query) {
  return {
    method: METHODS.includes(query.method) ? query.method : 'frequentist',
    alpha: query.alpha && Number(query.alpha) > 0 && Number(query.alpha) < 0.5 ? query.alpha : '0.05',
    control: query.control || undefined,
    correction: CORRECTIONS.includes(query.correction) ? query.correction || undefined : undefined,
  };
}

/** The segment asked for, when the experiment declares it (else none: the server would refuse it). */
export function segmentOf(experiment, query) {
  return query.segment && (experiment.segments ?? []).includes(query.segment) ? query.segment : undefined;
}

/** A select of the declared segments ('' for none): the page then shows the analysis per value too. */
function SegmentPicker({ experiment, query, path }) {
  const segments = experiment.segments ?? [];
  if (segments.length === 0) return null;
  const pick = (e) => navigate(path, { ...query, segment: e.currentTarget.value || undefined });
  return html`<label class="field inline">
    <span>Segment</span>
    <select value=${segmentOf(experiment, query) ?? ''} onChange=${pick} data-testid="segment-picker">
      <option value="">none</option>
      ${segments.map((k) => html`<option value=${k}>${k}</option>`)}
    </select>
  </label>`;
}

/** Method, alpha and control: kept in the address, so a link shows the same reading. */
export function AnalysisOptions({ experiment, query, path, extra = null }) {
  const o = analysisOptions(query);
  const set = (name) => (e) => navigate(path, { ...query, [name]: e.currentTarget.value });
  const alphas = ALPHAS.includes(o.alpha) ? ALPHAS : [...ALPHAS, o.alpha];
  return html`<div class="toolbar options" role="group" aria-label="Analysis options">
    <label class="field inline">
      <span>Method</span>
      <select value=${o.method} onChange=${set('method')} data-testid="method">
        ${METHODS.map((m) => html`<option value=${m}>${m}</option>`)}
      </select>
    </label>
    <label class="field inline">
      <span>Alpha</span>
      <select value=${o.alpha} onChange=${set('alpha')} data-testid="alpha">
        ${alphas.map((a) => html`<option value=${a}>${a} (${Math.round((1 - Number(a)) * 1000) / 10}%)</option>`)}
      </select>
    </label>
    <label class="field inline">
      <span>Control</span>
      <select value=${o.control ?? experiment.variants[0]?.key} onChange=${set('control')} data-testid="control">
        ${experiment.variants.map((v) => html`<option value=${v.key}>${v.key}</option>`)}
      </select>
    </label>
    <label class="field inline">
      <span>Correction</span>
      <select value=${o.correction ?? ''} onChange=${set('correction')} data-testid="correction"
        disabled=${o.method === 'bayesian'} title=${o.method === 'bayesian' ? 'Bayesian readings have no p-values to correct' : undefined}>
        ${CORRECTIONS.map((c) => html`<option value=${c}>${CORRECTION_OPTIONS[c]}</option>`)}
      </select>
    </label>
    ${extra}
  </div>`;
}

/** GET analysis with the page's options; kept while reloading, refreshed every few seconds while running. */
export function useAnalysis(experiment, query) {
  const { api } = useSession();
  const o = analysisOptions(query);
  const segment = segmentOf(experiment, query);
  const state = useLoad(
    () => api.get(withQuery(experimentPath(experiment.slug, '/analysis'), { ...o, segment })),
    [
      experiment.slug,
      experiment.version,
      experiment.status,
      o.method,
      o.alpha,
      o.control,
      o.correction,
      segment,
    ],
  );
  usePoll(state.reload, REFRESH_MS, experiment.status === 'running');
  return state;
}

/** The variant "Ship" offers: the verdict's winner, unless it is the control or a rollout is live. */
function winnerToShip(experiment, analysis, rollout) {
  const { verdict } = analysis;
  if (verdict.status !== 'winner' || verdict.variant === controlOf(experiment)) return null;
  // A pooled analysis may name a variant only an earlier version had.
  if (!experiment.variants.some((v) => v.key === verdict.variant)) return null;
  return experiment.status === 'running' && !isLive(rollout) ? verdict.variant : null;
}

function Verdict({ analysis, ship, onShip }) {
  const { verdict } = analysis;
  const exposed = exposedOf(analysis);
  return html`<section
    class=${`verdict tone-${verdict.status}`}
    data-testid="verdict"
    data-status=${verdict.status}
    aria-labelledby="verdict-title"
  >
    <h2 id="verdict-title" class="visually-hidden">Verdict</h2>
    <${VerdictBadge} verdict=${verdict} />
    <p class="sentence" data-testid="verdict-summary">${verdict.summary}</p>
    ${
      ship &&
      html`<p class="ship-line">
        <button type="button" class="primary" onClick=${() => onShip(ship)} data-testid="ship-winner">Ship ${ship}</button>
        <span class="muted small"> to everyone in guarded steps (a rollout)</span>
      </p>`
    }
    <p class="muted small">
      ${`${analysis.method}, alpha ${analysis.alpha}, control ${analysis.control}, ${analysis.unit === 'user' ? 'users' : 'calls'} as units · exposed: `}<${ExposedCount}
        unit=${exposed.unit} units=${sum(exposed.counts)} calls=${sum(analysis.exposures)}
        testid="exposed-total" callsTestid="exposures-total" />
    </p>
    <${SrmLine} analysis=${analysis} />
  </section>`;
}

/**
 * What the sample-ratio check counted: users (sticky experiments) or assign calls, per variant. A server
 * without srm.unit counted calls, the exposures.
 */
export function srmCounts(analysis) {
  const unit = analysis.srm.unit === 'user' ? 'user' : 'call';
  const counts = analysis.srm.counts ?? analysis.exposures;
  return { unit, units: unit === 'user' ? 'users' : 'calls', counts };
}

function countsText(experiment, counts) {
  return experiment.variants.map((v) => `${v.key} ${formatCount(counts[v.key] ?? 0)}`).join(', ');
}

function SrmLine({ analysis }) {
  const { units, counts } = srmCounts(analysis);
  const keys = Object.keys(counts);
  const seen = keys.map((k) => `${k} ${formatCount(counts[k])}`).join(', ');
  const { pValue, mismatch } = analysis.srm;
  const text =
    pValue === null
      ? `Sample ratio not checked yet: no ${units} to count.`
      : `Sample ratio, ${units} per variant: ${seen || 'none'}; ${mismatch ? 'MISMATCH' : 'as the weights ask'} (chi-square ${formatP(pValue)}).`;
  return html`<p class="muted small" data-testid="srm-line" data-unit=${analysis.srm.unit ?? 'call'}>${text}</p>`;
}

function SrmBanner({ analysis, experiment }) {
  if (!analysis.srm.mismatch) return null;
  const { units, counts } = srmCounts(analysis);
  const seen = countsText(experiment, counts);
  const wanted = experiment.variants.map((v) => `${v.key} ${v.trafficPercent}%`).join(', ');
  // The test mixes each version's weights by its units; the current weights are what a reader knows.
  const versions = analysis.versions.length > 1 ? ' (each version with its own weights)' : '';
  const Units = units[0].toUpperCase() + units.slice(1);
  return html`<div class="banner danger" role="alert" data-testid="srm-banner">
    <strong>Sample ratio mismatch.</strong>
    ${` ${Units} per variant: ${seen}; the weights ask for ${wanted}${versions}: a chi-square test says this split is no accident (${formatP(analysis.srm.pValue)}). `}
    Assignment or logging is broken somewhere: no effect below can be trusted until that is explained.
  </div>`;
}

function Warnings({ warnings }) {
  if (!warnings.length) return null;
  return html`<details class="warnings" data-testid="warnings">
    <summary>${warnings.length} ${warnings.length === 1 ? 'note' : 'notes'} on the numbers</summary>
    <ul>
      ${warnings.map((w) => html`<li>${w}</li>`)}
    </ul>
  </details>`;
}

function Freshness({ state, running }) {
  if (!state.at) return null;
  return html`<p class="freshness muted small" data-testid="freshness" data-loading=${String(state.loading)}>
    <span class=${`dot ${state.loading ? 'busy' : running ? 'live' : ''}`} aria-hidden="true"></span>
    Updated ${formatTime(new Date(state.at).toISOString())}${running ? ` · refreshes every ${REFRESH_MS / 1000} s` : ''}
  </p>`;
}

function Overview({ experiment, query, changed }) {
  const { admin } = useSession();
  const state = useAnalysis(experiment, query);
  const ramp = useRollout(experiment, REFRESH_MS);
  // An open start form: { variant (preset, or null for the default), n (a new form each time) }.
  const [draft, setDraft] = useState(null);
  const analysis = state.data;
  const path = `/experiment/${experiment.slug}`;
  const ship = admin && analysis && ramp.loaded ? winnerToShip(experiment, analysis, ramp.rollout) : null;
  return html`<div class="overview">
    ${analysis && html`<${Verdict} analysis=${analysis} ship=${ship} onShip=${(variant) => setDraft({ variant, n: Date.now() })} />`}
    ${analysis && html`<${SrmBanner} analysis=${analysis} experiment=${experiment} />`}
    <${RampSection} experiment=${experiment} ramp=${ramp} draft=${draft} setDraft=${setDraft}
      onExperiment=${changed} refreshMs=${REFRESH_MS} />
    <${ErrorNote} error=${state.error} testid="analysis-error" />
    <section aria-labelledby="scorecard-title">
      <div class="section-head">
        <h2 id="scorecard-title">Scorecard</h2>
        <${Freshness} state=${state} running=${experiment.status === 'running'} />
      </div>
      <${AnalysisOptions} experiment=${experiment} query=${query} path=${path}
        extra=${html`<${SegmentPicker} experiment=${experiment} query=${query} path=${path} />`} />
      ${analysis ? html`<${Scorecard} analysis=${analysis} declared=${experiment.metrics} />` : !state.error && html`<p class="muted">Loading the analysis…</p>`}
      ${analysis && html`<${Warnings} warnings=${analysis.warnings} />`}
    </section>
    ${analysis && html`<${Segments} analysis=${analysis} declared=${experiment.metrics} />`}
    <section aria-labelledby="variants-title">
      <h2 id="variants-title">Variants</h2>
      <${VariantCards} experiment=${experiment} analysis=${analysis} />
      <h3>Changes between versions</h3>
      <${Versions} experiment=${experiment} />
    </section>
    <${History} experiment=${experiment} stamp=${ramp.rollout?.updatedAt} />
  </div>`;
}

export function ExperimentPage({ slug, query }) {
  return html`<${ExperimentFrame} slug=${slug} tab="overview"
    >${(experiment, changed) => html`<${Overview} experiment=${experiment} query=${query} changed=${changed} />`}</${ExperimentFrame}
  >`;
}
