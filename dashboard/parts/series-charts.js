// The charts page's time series: exposures (assign calls) per variant per period, and the cumulative
// effect of one metric with its band, from GET …/analysis/timeseries.
import { useMemo } from 'preact/hooks';
import { formatCount, formatLift, formatTime } from '../format.js';
import { html } from '../html.js';
import { exposedOf } from './exposed.js';
import { colorOf, latest, Plot } from './plot.js';

const seconds = (iso) => Date.parse(iso) / 1000;
const STEP = { minute: 60, hour: 3600, day: 86_400 };

/** A time axis that stays readable with one period (uPlot would otherwise span 1,000 days from it). */
function timeScale(interval) {
  const range = (u, min, max) => {
    const xs = u.data[0];
    const one = xs.length > 0 && xs[0] === xs[xs.length - 1];
    return one ? [xs[0] - STEP[interval], xs[0] + STEP[interval]] : [min, max];
  };
  return { time: true, range };
}

/** The x legend: a period's start in the viewer's time zone (the latest one until the cursor moves). */
const timeValue = latest((t) => (t === null ? '—' : formatTime(new Date(t * 1000).toISOString())));

/** Always 0 in the y range, so the zero line (no effect) is on the chart; 10% room around the data. */
function withZero(_u, min, max) {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [-1, 1];
  const lo = Math.min(0, min);
  const hi = Math.max(0, max);
  const pad = (hi - lo) * 0.1 || 1;
  return [lo - pad, hi + pad];
}

/** The zero line of an effect chart, drawn under the series. */
function zeroLine(u) {
  const y = Math.round(u.valToPos(0, 'y', true));
  const { left, width, top, height } = u.bbox;
  if (y < top || y > top + height) return;
  const { ctx } = u;
  ctx.save();
  ctx.strokeStyle = '#6b7280';
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(left, y);
  ctx.lineTo(left + width, y);
  ctx.stroke();
  ctx.restore();
}

/** Every period from the first to the last: a period the API leaves out had no exposures, so it is a 0. */
function everyPeriod(series) {
  const step = STEP[series.interval];
  const at = new Map(series.periods.map((b) => [seconds(b.start), b]));
  const times = [...at.keys()];
  if (times.length === 0) return [];
  const [first, last] = [times[0], times[times.length - 1]];
  // A year of hours at most; beyond that, only the periods the API sent.
  if ((last - first) / step > 9000) return times.map((t) => [t, at.get(t).exposures]);
  const out = [];
  for (let t = first; t <= last; t += step) out.push([t, at.get(t)?.exposures ?? {}]);
  return out;
}

/**
 * Assign calls per variant and period (the series counts exposures per period). A sticky experiment's
 * users are counted once over its whole life, not per period: the caption gives those totals beside the calls.
 */
export function ExposuresChart({ series, keys, analysis }) {
  const data = useMemo(() => {
    const periods = everyPeriod(series);
    return [periods.map(([t]) => t), ...keys.map((k) => periods.map(([, e]) => e[k] ?? 0))];
  }, [series, keys.join(',')]);
  const totals = keys.map(
    (k) => `${k} ${formatCount(series.periods.reduce((a, b) => a + (b.exposures[k] ?? 0), 0))}`,
  );
  const exposed = exposedOf(analysis);
  const users =
    exposed.unit === 'user'
      ? ` Distinct users exposed (over the whole experiment, not per ${series.interval}): ${keys
          .map((k) => `${k} ${formatCount(exposed.counts[k] ?? 0)}`)
          .join(', ')}.`
      : '';
  const one = series.periods.length === 1;
  const make = () => ({
    scales: { x: timeScale(series.interval), y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
    series: [
      { value: timeValue },
      ...keys.map((k) => ({
        label: k,
        stroke: colorOf(keys, k),
        width: 2,
        // One period is one point: drawn large enough to see.
        points: one ? { show: true, size: 9, fill: colorOf(keys, k) } : { size: 5 },
        value: latest((v) => (v === null ? '—' : formatCount(v))),
      })),
    ],
    axes: [{}, { label: `assign calls per ${series.interval}`, size: 60 }],
  });
  return html`<figure>
    <${Plot}
      make=${make}
      shape=${`exp:${keys.join(',')}:${one}`}
      data=${data}
      testid="chart-exposures"
      label=${`Assign calls per variant per ${series.interval}; in total ${totals.join(', ')}.${users} The totals are on the overview.`}
    />
    <figcaption data-testid="exposures-caption" data-unit=${exposed.unit}>
      Exposures: assign calls per variant in each ${series.interval}${exposed.unit === 'user' ? ' (a user who calls again counts again)' : ''}. Totals: ${totals.join(', ')}.${users}
    </figcaption>
  </figure>`;
}

export function EffectChart({ series, keys, control, unit }) {
  // The series names its unit: users (a sticky experiment's per-user sums, as the analysis reads them) or
  // calls; a server that does not say counted calls. Where the scorecard's unit differs, so do its numbers.
  const seriesUnit = series.unit === 'user' ? 'user' : 'call';
  const unitText = seriesUnit === 'user' ? 'users as units' : 'calls as units';
  const where =
    unit === seriesUnit
      ? `${unitText}, as in the scorecard`
      : `${unitText} (the scorecard has ${unit === 'user' ? 'users' : 'calls'} as units, so its numbers differ)`;
  const treatments = keys.filter((k) => k !== control);
  // The relative effect in %; where the control mean is 0 there is none, and the line breaks.
  const pct = (x) => (x === null || x === undefined ? null : x * 100);
  const data = useMemo(() => {
    const cols = [series.periods.map((b) => seconds(b.start))];
    for (const k of treatments) {
      const of = (b) => b.variants.find((v) => v.key === k)?.relative;
      cols.push(series.periods.map((b) => pct(of(b)?.estimate)));
      cols.push(series.periods.map((b) => pct(of(b)?.ci[0])));
      cols.push(series.periods.map((b) => pct(of(b)?.ci[1])));
    }
    return cols;
  }, [series, treatments.join(','), control]);
  // One period is one point per series: no line or band to draw yet, so the points and a whisker show it.
  const one = series.periods.length === 1;
  const shown = latest((v) => (v === null ? '—' : `${v > 0 ? '+' : ''}${v.toFixed(1)}%`));
  const whisker = (u) => {
    if (!one) return;
    const { ctx } = u;
    ctx.save();
    ctx.lineWidth = 2;
    treatments.forEach((k, i) => {
      const [lo, hi] = [u.data[3 * i + 2][0], u.data[3 * i + 3][0]];
      if (lo === null || hi === null) return;
      const x = u.valToPos(u.data[0][0], 'x', true);
      ctx.strokeStyle = colorOf(keys, k);
      ctx.beginPath();
      ctx.moveTo(x, u.valToPos(lo, 'y', true));
      ctx.lineTo(x, u.valToPos(hi, 'y', true));
      ctx.stroke();
    });
    ctx.restore();
  };
  const make = () => ({
    scales: { x: timeScale(series.interval), y: { range: withZero } },
    series: [
      { value: timeValue },
      ...treatments.flatMap((k) => {
        const color = colorOf(keys, k);
        const bound = (label) => ({
          label,
          stroke: color,
          width: 1,
          dash: [4, 4],
          points: one ? { show: true, size: 7, fill: color } : {},
          value: shown,
        });
        return [
          {
            label: `${k} vs ${control}`,
            stroke: color,
            width: 2,
            points: one ? { show: true, size: 10, fill: color } : {},
            value: shown,
          },
          bound(`${k} low`),
          bound(`${k} high`),
        ];
      }),
    ],
    bands: treatments.map((k, i) => ({ series: [3 * i + 3, 3 * i + 2], fill: `${colorOf(keys, k)}22` })),
    axes: [
      {},
      { label: `${series.metric}: lift (%)`, size: 60, values: (_u, ticks) => ticks.map((t) => `${t}%`) },
    ],
    hooks: { drawClear: [zeroLine], draw: [whisker] },
  });
  const last = series.periods.at(-1);
  const now = treatments.map((k) => {
    const v = last?.variants.find((x) => x.key === k);
    return `${k}: ${formatLift(v?.relative?.estimate ?? null)}`;
  });
  return html`<figure>
    <${Plot}
      make=${make}
      shape=${`eff:${series.metric}:${control}:${treatments.join(',')}:${one}`}
      data=${data}
      testid="chart-effect"
      extraClass="effect-plot"
      label=${`Cumulative lift of ${series.metric} against ${control} per ${series.interval}, with its interval; now ${now.join(', ')}, ${where}.`}
    />
    <figcaption>
      Cumulative relative effect of <strong>${series.metric}</strong>
      ${` against ${control} at the end of each ${series.interval}, with its ${series.method} interval (the band); the line at 0 is no effect. Latest: ${now.join(', ')}. `}
      <span data-testid="series-unit" data-unit=${seriesUnit}>Unit: ${where}.</span>
      ${one && ` One ${series.interval} so far: a point with its interval; the line and band start with the second.`}
      ${series.method !== 'sequential' && ' Reading a fixed-horizon interval over and over inflates false positives: the sequential method stays valid at every look.'}
    </figcaption>
  </figure>`;
}
