// A uPlot chart as a preact component: made once per shape of options, fed new data in place (no flicker),
// resized with its container.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { html } from '../html.js';

export const PALETTE = [
  '#2563eb',
  '#ea580c',
  '#16a34a',
  '#9333ea',
  '#db2777',
  '#0891b2',
  '#ca8a04',
  '#4b5563',
];

/** A colour per variant, in the experiment's order. */
export function colorOf(keys, key) {
  const i = keys.indexOf(key);
  return PALETTE[(i === -1 ? keys.length : i) % PALETTE.length];
}

/**
 * `make(width)` builds the uPlot options; `shape` is a string that changes when they must be rebuilt
 * (series added, another metric); `data` is uPlot's aligned data. `label` is the chart's text alternative.
 */
export function Plot({ make, shape, data, label, testid, extraClass = '', height = 260 }) {
  const box = useRef(null);
  const chart = useRef(null);
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    const el = box.current;
    const width = Math.max(el.clientWidth, 280);
    const u = new uPlot({ ...make(width), width, height }, latest.current, el);
    chart.current = u;
    const resize = new ResizeObserver(() => {
      const w = Math.max(el.clientWidth, 280);
      if (Math.abs(w - u.width) > 2) u.setSize({ width: w, height });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      chart.current = null;
    };
  }, [shape, height]);

  useEffect(() => {
    chart.current?.setData(data);
  }, [data]);

  return html`<div class=${`plot ${extraClass}`} ref=${box} role="img" aria-label=${label} data-testid=${testid}></div>`;
}

/**
 * A legend value that shows the latest point while the cursor is away (uPlot passes idx null then, and
 * would print "--"): the last non-null value of the series.
 */
export function latest(format) {
  return (u, v, sidx, idx) => {
    if (idx !== null && idx !== undefined) return format(v);
    const col = u.data[sidx] ?? [];
    for (let i = col.length - 1; i >= 0; i--)
      if (col[i] !== null && col[i] !== undefined) return format(col[i]);
    return format(null);
  };
}

/** The normal quantile for a two-sided interval at 1 − alpha (Abramowitz–Stegun 26.2.23, error < 5e-4). */
export function zFor(alpha) {
  const p = alpha / 2;
  const t = Math.sqrt(-2 * Math.log(p));
  return (
    t -
    (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t ** 3)
  );
}
