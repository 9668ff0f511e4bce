// How large one analysis or time-series answer may grow (issue 34): counted in figures, one metric of one
// variant in one segment value or period (about half a kilobyte of JSON and tens of microseconds of work
// each). Past the bound the request is refused with how to narrow it, before the work is done.
import { UnprocessableError } from './errors.js';

/** The most figures one answer holds: ~10 MB of JSON, about a second of one core. */
export const MAX_ANSWER_FIGURES = 20_000;

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Refuses an analysis of `metrics` × `variants` × (the whole + `segments` values) figures past the bound,
 * naming the product and the query parameters that narrow it.
 */
export function checkFigures(size: { metrics: number; variants: number; segments: number }): void {
  const figures = size.metrics * size.variants * (1 + size.segments);
  if (figures <= MAX_ANSWER_FIGURES) return;
  const product =
    size.segments > 0
      ? `${count(size.metrics)} metrics × ${count(size.variants)} variants × ${count(size.segments + 1)} (the whole and ${count(size.segments)} segment values)`
      : `${count(size.metrics)} metrics × ${count(size.variants)} variants`;
  const narrow =
    size.segments > 0
      ? 'name fewer metrics with metrics=a,b, show fewer values with segmentValues=N, or leave out segment='
      : 'name fewer metrics with metrics=a,b, or read one version with version=N';
  throw new UnprocessableError(
    `the answer would hold ${count(figures)} figures (${product}); at most ${count(MAX_ANSWER_FIGURES)} fit one answer: ${narrow}`,
  );
}

/** Refuses a time series of `periods` × `variants` points past the bound. */
export function checkPoints(size: {
  periods: number;
  variants: number;
  interval: 'minute' | 'hour' | 'day';
}): void {
  const points = size.periods * size.variants;
  if (points <= MAX_ANSWER_FIGURES) return;
  const narrow = size.interval !== 'day' ? 'read it per day with interval=day' : 'read the analysis instead';
  throw new UnprocessableError(
    `the series would hold ${count(points)} points (${count(size.periods)} periods × ${count(size.variants)} variants); at most ${count(MAX_ANSWER_FIGURES)} fit one answer: ${narrow}`,
  );
}
