// The value a result has for a metric, as the results list filters and sorts by it and the CSV shows
// it: what was said about it later (feedback on its logId, else on its assignmentId) before what it was
// logged with; true/false count as 1/0. Pure; the SQL store computes the same in results-reads.ts.
import type { JsonObject } from './json.js';

export interface ValuedResult {
  metrics: JsonObject | null;
  /** Already merged: feedback on the logId over feedback on the assignmentId. */
  feedback: Record<string, number | boolean>;
}

function numeric(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return undefined;
}

/** The number `name` has on `r`, undefined when neither its feedback nor its metrics give one. */
export function metricValue(r: ValuedResult, name: string): number | undefined {
  if (Object.hasOwn(r.feedback, name)) return numeric(r.feedback[name]);
  return r.metrics && Object.hasOwn(r.metrics, name) ? numeric(r.metrics[name]) : undefined;
}

/** The value as shown (CSV cell): feedback's or the metric's own number or true/false. */
export function shownMetric(r: ValuedResult, name: string): number | boolean | undefined {
  if (Object.hasOwn(r.feedback, name)) return r.feedback[name];
  const own = r.metrics && Object.hasOwn(r.metrics, name) ? r.metrics[name] : undefined;
  return typeof own === 'number' || typeof own === 'boolean' ? own : undefined;
}
