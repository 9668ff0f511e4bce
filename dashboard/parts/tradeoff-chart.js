// The charts page's quality against cost: the means of two metrics per variant with their intervals,
// where each variant sits, from the analysis.
import { useMemo, useRef } from 'preact/hooks';
import { formatTick, formatValue } from '../format.js';
import { html } from '../html.js';
import { colorOf, Plot, zFor } from './plot.js';

/** Means with intervals of two metrics per variant: where each variant sits on quality and cost. */
export function TradeoffChart({ analysis, keys, quality, cost }) {
  const q = analysis.metrics.find((m) => m.name === quality);
  const c = analysis.metrics.find((m) => m.name === cost);
  const z = zFor(analysis.alpha);
  // mean ± z·sd/√n: the same normal interval the analysis uses for a mean (sd is per unit for ratios).
  const interval = (arm) =>
    arm?.mean === null || arm?.mean === undefined
      ? null
      : { mean: arm.mean, half: arm.stdDev === null || arm.n < 2 ? 0 : (z * arm.stdDev) / Math.sqrt(arm.n) };
  const points = keys
    .map((k) => ({
      key: k,
      x: interval(c?.variants.find((v) => v.key === k)),
      y: interval(q?.variants.find((v) => v.key === k)),
    }))
    .filter((p) => p.x && p.y)
    .sort((a, b) => a.x.mean - b.x.mean);
  // The chart is built once per shape; its ranges and whiskers read the latest points from here.
  const latest = useRef(points);
  latest.current = points;
  const data = useMemo(
    () => [
      points.map((p) => p.x.mean),
      ...keys.map((k) => points.map((p) => (p.key === k ? p.y.mean : null))),
    ],
    [analysis, quality, cost],
  );
  if (!q || !c) return html`<p class="muted">Pick two metrics with data.</p>`;
  const span = (get) => {
    const lo = Math.min(...latest.current.map((p) => get(p).mean - get(p).half));
    const hi = Math.max(...latest.current.map((p) => get(p).mean + get(p).half));
    const pad = (hi - lo) * 0.15 || Math.abs(hi) * 0.1 || 1;
    return [lo - pad, hi + pad];
  };
  const whiskers = (u) => {
    const { ctx } = u;
    ctx.save();
    ctx.lineWidth = 2;
    for (const p of latest.current) {
      ctx.strokeStyle = colorOf(keys, p.key);
      const x = u.valToPos(p.x.mean, 'x', true);
      const y = u.valToPos(p.y.mean, 'y', true);
      ctx.beginPath();
      ctx.moveTo(u.valToPos(p.x.mean - p.x.half, 'x', true), y);
      ctx.lineTo(u.valToPos(p.x.mean + p.x.half, 'x', true), y);
      ctx.moveTo(x, u.valToPos(p.y.mean - p.y.half, 'y', true));
      ctx.lineTo(x, u.valToPos(p.y.mean + p.y.half, 'y', true));
      ctx.stroke();
    }
    ctx.restore();
  };
  const make = () => ({
    scales: { x: { time: false, range: () => span((p) => p.x) }, y: { range: () => span((p) => p.y) } },
    series: [
      { label: cost, value: (_u, v) => formatValue(v, c.kind) },
      ...keys.map((k) => ({
        label: k,
        stroke: colorOf(keys, k),
        fill: colorOf(keys, k),
        paths: () => null,
        points: { show: true, size: 12, fill: colorOf(keys, k) },
        value: (_u, v) => formatValue(v, q.kind),
      })),
    ],
    axes: [
      { label: `${cost} (mean)`, values: (_u, t) => t.map((v) => formatTick(v, c.kind)) },
      { label: `${quality} (mean)`, size: 70, values: (_u, t) => t.map((v) => formatTick(v, q.kind)) },
    ],
    cursor: { show: false },
    // No cursor, so no value to follow: the legend names the variants, the caption gives the means.
    legend: { live: false },
    hooks: { draw: [whiskers] },
  });
  const words = points.map(
    (p) => `${p.key}: ${quality} ${formatValue(p.y.mean, q.kind)}, ${cost} ${formatValue(p.x.mean, c.kind)}`,
  );
  const level = `${Math.round((1 - analysis.alpha) * 1000) / 10}%`;
  return html`<figure>
    <${Plot}
      make=${make}
      shape=${`trade:${quality}:${cost}:${keys.join(',')}:${analysis.alpha}:${points.map((p) => p.key).join(',')}`}
      data=${data}
      testid="chart-tradeoff"
      label=${`${quality} against ${cost} per variant (means with ${level} intervals): ${words.join('; ')}. The means are in the scorecard.`}
    />
    <figcaption>
      ${`Mean ${quality} (up) against mean ${cost} (right) per variant, each with its ${level} interval (mean ± ${z.toFixed(2)} standard errors). ${words.join('; ')}.`}
    </figcaption>
  </figure>`;
}
