// What track() logs for a run: the timing, the error flag, and the run's output, metrics and context.
import { isObject } from './assignment.js';
import type { Assignment, JsonValue, LogEntry, Run } from './types.js';

/**
 * The result of a run of `a` started at `start` (performance.now()); `failed`: `fn` threw `err`.
 * Undefined for a default assignment (nothing to count it for). Sets the run's metrics' latency_ms and error.
 */
export function runEntry<P>(
  a: Assignment<P>,
  run: Run,
  start: number,
  err: unknown,
  failed: boolean,
): LogEntry | undefined {
  if (!a || a.source === 'default' || !a.variant) return undefined;
  const metrics: Record<string, JsonValue> = isObject(run.metrics)
    ? (run.metrics as Record<string, JsonValue>)
    : {};
  if (metrics.latency_ms === undefined)
    metrics.latency_ms = Math.round((performance.now() - start) * 1000) / 1000;
  if (failed) metrics.error = true;
  else if (metrics.error === undefined) metrics.error = false;
  let output = run.output;
  if (failed && output === undefined) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    output = { error: message.slice(0, 2000) };
  }
  const entry: LogEntry = { variantKey: a.variant, userId: a.userId, metrics };
  if (a.assignmentId) entry.assignmentId = a.assignmentId;
  if (run.input !== undefined) entry.input = run.input;
  if (output !== undefined) entry.output = output;
  if (run.context !== undefined) entry.context = run.context;
  return entry;
}
