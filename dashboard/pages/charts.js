// Charts: exposures (assign calls) per variant over time, the cumulative effect of one metric with its band, and
// quality against cost per variant. Every number drawn here is in the scorecard too.
import { experimentPath, withQuery } from '../api.js';
import { href, navigate, useLoad, usePoll, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from '../parts/common.js';
import { ExperimentFrame } from '../parts/experiment-head.js';
import { orderMetrics } from '../parts/scorecard.js';
import { EffectChart, ExposuresChart } from '../parts/series-charts.js';
import { TradeoffChart } from '../parts/tradeoff-chart.js';
import { AnalysisOptions, analysisOptions, REFRESH_MS, useAnalysis } from './experiment.js';

/** The first metric whose name matches one of the patterns, in the patterns' order; else `fallback`. */
function guess(metrics, patterns, fallback) {
  for (const p of patterns) {
    const found = metrics.find((m) => p.test(m.name));
    if (found) return found.name;
  }
  return fallback?.name;
}

function Charts({ experiment, query }) {
  const { api } = useSession();
  const analysisState = useAnalysis(experiment, query);
  const analysis = analysisState.data;
  const o = analysisOptions(query);
  const metrics = analysis ? orderMetrics(analysis.metrics, experiment.metrics) : [];
  const metric =
    query.metric && metrics.some((m) => m.name === query.metric) ? query.metric : metrics[0]?.name;
  const ageDays = (Date.now() - Date.parse(experiment.createdAt)) / 86_400_000;
  // Minutes while the experiment is under 3 hours old (the API serves minutes for its first 6 hours).
  // Minutes cover mean and proportion metrics, per call or per user (not ratios or quantiles).
  const declared = experiment.metrics?.find((m) => m.name === metric);
  const minutes = declared?.numerator === undefined && (declared?.statistic ?? 'mean') === 'mean';
  const interval = ['minute', 'hour', 'day'].includes(query.interval)
    ? query.interval
    : ageDays > 3
      ? 'day'
      : ageDays * 24 < 3 && minutes
        ? 'minute'
        : 'hour';
  const read = (period) =>
    api.get(
      withQuery(experimentPath(experiment.slug, '/analysis/timeseries'), {
        metric,
        interval: period,
        method: o.method,
        alpha: o.alpha,
        control: o.control,
      }),
    );
  const series = useLoad(
    () => (metric ? read(interval) : Promise.resolve(null)),
    [experiment.slug, metric, interval, o.method, o.alpha, o.control],
  );
  usePoll(series.reload, REFRESH_MS, experiment.status === 'running' && Boolean(metric));

  const primary = metrics.find((m) => m.role === 'primary' && m.direction === 'increase');
  const quality =
    query.quality ??
    primary?.name ??
    guess(
      metrics,
      [/quality|judge|score|rating/i, /success|thumbs/i],
      metrics.find((m) => m.direction === 'increase'),
    );
  const cost =
    query.cost ??
    guess(
      metrics,
      [/cost/i, /tokens/i, /latency/i],
      metrics.find((m) => m.direction === 'decrease'),
    );
  const keys = experiment.variants.map((v) => v.key);
  const path = `/experiment/${experiment.slug}/charts`;
  const set = (name) => (e) => navigate(path, { ...query, [name]: e.currentTarget.value });
  const metricSelect = (name, value, label, testid) => html`<label class="field inline">
    <span>${label}</span>
    <select value=${value ?? ''} onChange=${set(name)} data-testid=${testid}>
      ${metrics.map((m) => html`<option value=${m.name}>${m.name}</option>`)}
    </select>
  </label>`;

  if (analysisState.error) return html`<${ErrorNote} error=${analysisState.error} />`;
  if (!analysis) return html`<p class="muted">Loading…</p>`;
  if (metrics.length === 0) {
    return html`<p class="empty">No metrics yet: charts appear once results with metrics are logged.</p>`;
  }
  return html`<div class="charts">
    <p class="muted small">
      Text alternative: every number drawn here is in the${' '}
      <a href=${href(`/experiment/${experiment.slug}`, { method: query.method, alpha: query.alpha, control: query.control })}>scorecard</a>.
    </p>
    <${AnalysisOptions}
      experiment=${experiment}
      query=${query}
      path=${path}
      extra=${html`<label class="field inline">
        <span>Interval</span>
        <select value=${series.data?.interval ?? interval} onChange=${set('interval')} data-testid="interval">
          <option value="minute">minute</option>
          <option value="hour">hour</option>
          <option value="day">day</option>
        </select>
      </label>`}
    />
    <${ErrorNote} error=${series.error} testid="series-error" />
    <section aria-labelledby="exposures-title">
      <h2 id="exposures-title">Exposures over time</h2>
      ${series.data ? html`<${ExposuresChart} series=${series.data} keys=${keys} analysis=${analysis} />` : html`<p class="muted">Loading…</p>`}
    </section>
    <section aria-labelledby="effect-title">
      <div class="section-head">
        <h2 id="effect-title">Cumulative effect</h2>
        ${metricSelect('metric', metric, 'Metric', 'effect-metric')}
      </div>
      ${
        series.data
          ? html`<${EffectChart} series=${series.data} keys=${keys} control=${series.data.control} unit=${analysis.metrics.find((m) => m.name === series.data.metric)?.unit ?? analysis.unit} />`
          : html`<p class="muted">Loading…</p>`
      }
    </section>
    <section aria-labelledby="tradeoff-title">
      <div class="section-head">
        <h2 id="tradeoff-title">Quality against cost</h2>
        <div class="toolbar">
          ${metricSelect('quality', quality, 'Quality', 'quality-metric')}
          ${metricSelect('cost', cost, 'Cost', 'cost-metric')}
        </div>
      </div>
      <${TradeoffChart} analysis=${analysis} keys=${keys} quality=${quality} cost=${cost} />
    </section>
  </div>`;
}

export function ChartsPage({ slug, query }) {
  return html`<${ExperimentFrame} slug=${slug} tab="charts"
    >${(experiment) => html`<${Charts} experiment=${experiment} query=${query} />`}</${ExperimentFrame}
  >`;
}
