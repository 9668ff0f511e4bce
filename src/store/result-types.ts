// The shapes results are read in (the API's Result, the queries of its pages and of a comparison) and what
// feedback on a result needs to know of it: the Store's result reads (store.ts), for both stores.

import type { JsonObject } from '../core/json.js';
import type { ResultComment } from '../core/search.js';
import type { TraceSummary } from '../core/trace-result.js';
import type { NewResult } from '../core/writes.js';

/** A result as read back (the API's shape). */
export interface Result {
  logId: string;
  variantKey: string;
  /** Whether variantKey named a variant of the experiment when the result was logged. */
  knownVariant: boolean;
  userId: string | null;
  assignmentId: string | null;
  /** Flag: the variant the assignmentId was issued for, when it is not variantKey (null otherwise). */
  assignedVariant: string | null;
  input: JsonObject | null;
  output: JsonObject | null;
  metrics: JsonObject | null;
  context: JsonObject | null;
  timestamp: string | null;
  createdAt: string;
  experimentVersion: number;
  /**
   * The latest feedback on this result, by metric: given on its logId, else on its assignmentId
   * (numbers as numbers, proportions as true/false); {} when none.
   */
  feedback: Record<string, number | boolean>;
  /** The context the assign of its assignmentId received (assign, or the exposure a client sent); null when none is known. */
  assignmentContext: JsonObject | null;
  /** The newest comments given with feedback on it (its logId or its assignmentId), newest first; [] when none. */
  comments: ResultComment[];
  /** Read from an OpenTelemetry trace (issue 39): the run as its latest spans read it. */
  trace?: TraceSummary;
  /** An offline run's result (issue 40): the run, the dataset item and the trial it answers. */
  run?: { id: string; itemId: string; trial: number };
}

/** Only results with a value for `name` (feedback first, then their own metric; core/result-values.ts), within min/max. */
export interface MetricFilter {
  name: string;
  min?: number;
  max?: number;
  /** Ordered by that value (then by position), not by position alone. */
  byValue?: boolean;
}

export interface ResultQuery {
  experimentId: number;
  /** Only results after this position (exclusive) in the query's order: for `desc`, before it. */
  afterSeq?: number;
  /** With `metric.byValue`: the value at afterSeq's result (the page starts after that pair). */
  afterValue?: number;
  /** Commit order, oldest first (`asc`, the default) or newest first. */
  order?: 'asc' | 'desc';
  metric?: MetricFilter;
  /** Only results at or before this position (export snapshots). */
  uptoSeq?: number;
  variantKey?: string;
  /** createdAt >= since */
  since?: string;
  /** createdAt < until */
  until?: string;
  /** Only results whose input, output or a comment on them holds this text, ignoring case (core/search.ts). */
  search?: string;
  /** One offline run's results (issue 40); absent: only online results. */
  runId?: string;
  limit: number;
}

/** One variant's results for a comparison (core/compare.ts), newest first. */
export interface ComparedQuery {
  experimentId: number;
  variantKey: string;
  /** The score of each result: this metric's value (feedback first, then its own; true/false as 1/0). */
  metric?: string;
  /** Only results before this position (exclusive). */
  beforeSeq?: number;
  /** Only results at or before this position (a comparison read page after page stays the same). */
  uptoSeq?: number;
  since?: string;
  until?: string;
  limit: number;
}

export interface ResultPage {
  results: Result[];
  /** Position of the last result returned, for the next page; null when nothing was returned. */
  lastSeq: number | null;
  /** With `metric.byValue`: the last result's value. */
  lastValue?: number | null;
  hasMore: boolean;
}

/** What feedback on a result needs to know of it. */
export interface ResultTarget {
  version: number;
  variantKey: string;
  userId: string | null;
  /** The assignment id it was logged with, and its own context: where feedback on it finds its segments. */
  assignmentId: string | null;
  context: JsonObject | null;
  /** It answers an offline run (issue 40): feedback on it is stored, never counted online. */
  offline?: true;
}

/** A result as feedback on it sees it (the memory store's; the SQL store reads the same columns). */
export function resultTarget(r: NewResult): ResultTarget {
  const { version, variantKey, userId, assignmentId } = r;
  return {
    version,
    variantKey,
    userId,
    assignmentId,
    context: r.context && JSON.parse(r.context),
    ...(r.offline === undefined ? {} : { offline: true as const }),
  };
}
