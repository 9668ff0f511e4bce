// The memory store's pages of results (memory-store.ts): the same answers as result-reads.ts gives
// from SQL, worked out over the committed results in memory.

import type { ComparedRow } from '../core/compare.js';
import type { FeedbackRow } from '../core/feedback.js';
import type { JsonObject } from '../core/json.js';
import { metricValue } from '../core/result-values.js';
import { containsText, newestComments } from '../core/search.js';
import type { NewResult } from '../core/writes.js';
import type { ComparedQuery, Result, ResultPage, ResultQuery } from './result-types.js';

export interface MemoryResult {
  seq: number;
  experimentId: number;
  variantKey: string;
  createdAt: string;
  /** As read back, without feedback and assignment context (filled here); parsed only when looked at. */
  read(): Result;
}

export interface WhatWasSaid {
  /** The feedback rows of `target` ('l:<logId>' or 'a:<uuid>') in the experiment, by metric. */
  feedback(experimentId: number, target: string): Record<string, number | boolean> | undefined;
  /** The context the assignment with this UUID was made with. */
  context(experimentId: number, uuid: string): JsonObject | undefined;
  /** The comments of `target`'s feedback rows (one per metric: a comment may repeat). */
  comments(experimentId: number, target: string): Comment[];
}

type Comment = { feedbackId: string; comment: string | null; at: string };

/** What was said, from the memory store's feedback rows and assignment contexts (`<experimentId>\n<uuid>`). */
export function saidFrom(rows: Iterable<FeedbackRow>, contexts: Map<string, string>): WhatWasSaid {
  const byTarget = new Map<string, Record<string, number | boolean>>();
  const comments = new Map<string, Comment[]>();
  for (const f of rows) {
    const key = `${f.experimentId}\n${f.target}`;
    const values = byTarget.get(key) ?? {};
    values[f.metric] = f.kind === 'proportion' ? f.value === 1 : f.value;
    byTarget.set(key, values);
    if (f.comment !== null) {
      const list = comments.get(key) ?? [];
      list.push({ feedbackId: f.feedbackId, comment: f.comment, at: f.updatedAt });
      comments.set(key, list);
    }
  }
  return {
    feedback: (experimentId, target) => byTarget.get(`${experimentId}\n${target}`),
    comments: (experimentId, target) => comments.get(`${experimentId}\n${target}`) ?? [],
    context: (experimentId, uuid) => {
      const text = contexts.get(`${experimentId}\n${uuid}`);
      return text === undefined ? undefined : (JSON.parse(text) as JsonObject);
    },
  };
}

/** Every comment on `r`: on its logId and on its assignment. */
function commentsOn(experimentId: number, r: Result, said: WhatWasSaid): Comment[] {
  const uuid = r.assignmentId?.slice(0, 36);
  const onAssignment = uuid === undefined ? [] : said.comments(experimentId, `a:${uuid}`);
  return [...said.comments(experimentId, `l:${r.logId}`), ...onAssignment];
}

/** `r` with its feedback (logId's over its assignment's), its assignment's context and its newest comments. */
function withWhatWasSaid(experimentId: number, r: Result, said: WhatWasSaid): Result {
  const uuid = r.assignmentId?.slice(0, 36);
  const onAssignment = uuid === undefined ? undefined : said.feedback(experimentId, `a:${uuid}`);
  return {
    ...r,
    feedback: { ...onAssignment, ...said.feedback(experimentId, `l:${r.logId}`) },
    assignmentContext: (uuid !== undefined && said.context(experimentId, uuid)) || null,
    comments: newestComments(commentsOn(experimentId, r, said)),
  };
}

/** Whether the search text is in r's input or output (JSON text) or a comment on it, ignoring case. */
function found(experimentId: number, r: Result, said: WhatWasSaid, q: string): boolean {
  return (
    containsText(r.input && JSON.stringify(r.input), q) ||
    containsText(r.output && JSON.stringify(r.output), q) ||
    commentsOn(experimentId, r, said).some((c) => containsText(c.comment, q))
  );
}

export function listMemoryResults(all: MemoryResult[], q: ResultQuery, said: WhatWasSaid): ResultPage {
  const desc = q.order === 'desc';
  const m = q.metric;
  const byValue = m?.byValue === true;
  const after = (seq: number, value: number | undefined) => {
    if (q.afterSeq === undefined) return true;
    if (byValue && q.afterValue !== undefined && value !== undefined && value !== q.afterValue) {
      return desc ? value < q.afterValue : value > q.afterValue;
    }
    return desc ? seq < q.afterSeq : seq > q.afterSeq;
  };
  const matching: Array<{ seq: number; value: number | undefined; result: Result }> = [];
  // In the page's order, stopping once it is full, except by value (every result is looked at).
  const inOrder = desc && !byValue ? [...all].reverse() : all;
  for (const c of inOrder) {
    if (!byValue && matching.length > q.limit) break;
    if (c.experimentId !== q.experimentId) continue;
    if (q.uptoSeq !== undefined && c.seq > q.uptoSeq) continue;
    if (q.variantKey !== undefined && c.variantKey !== q.variantKey) continue;
    if (q.since !== undefined && c.createdAt < q.since) continue;
    if (q.until !== undefined && c.createdAt >= q.until) continue;
    if (!byValue && !after(c.seq, undefined)) continue;
    const read = c.read();
    if (q.search !== undefined && !found(q.experimentId, read, said, q.search)) continue;
    const result = withWhatWasSaid(q.experimentId, read, said);
    const value = m === undefined ? undefined : metricValue(result, m.name);
    if (m !== undefined) {
      if (value === undefined) continue;
      if (m.min !== undefined && value < m.min) continue;
      if (m.max !== undefined && value > m.max) continue;
    }
    if (!after(c.seq, value)) continue;
    matching.push({ seq: c.seq, value, result });
  }
  const sign = desc ? -1 : 1;
  matching.sort((a, b) =>
    byValue && a.value !== b.value ? sign * ((a.value ?? 0) - (b.value ?? 0)) : sign * (a.seq - b.seq),
  );
  const hasMore = matching.length > q.limit;
  const page = matching.slice(0, q.limit);
  const last = page.at(-1);
  return {
    results: page.map((p) => p.result),
    lastSeq: last?.seq ?? null,
    ...(byValue ? { lastValue: last?.value ?? null } : {}),
    hasMore,
  };
}

/** The memory store's committed results as these reads take them (each parsed only when looked at). */
export function readable(committed: ReadonlyArray<{ seq: number; result: NewResult }>): MemoryResult[] {
  return committed.map((c) => ({
    seq: c.seq,
    experimentId: c.result.experimentId,
    variantKey: c.result.variantKey,
    createdAt: c.result.createdAt,
    read: () => toResult(c.result),
  }));
}

/** listCompared over the results in memory: the same rows result-reads.ts readCompared gives. */
export function listMemoryCompared(all: MemoryResult[], q: ComparedQuery, said: WhatWasSaid): ComparedRow[] {
  const rows: ComparedRow[] = [];
  for (let i = all.length - 1; i >= 0 && rows.length < q.limit; i--) {
    const c = all[i]!;
    if (c.experimentId !== q.experimentId || c.variantKey !== q.variantKey) continue;
    if (q.beforeSeq !== undefined && c.seq >= q.beforeSeq) continue;
    if (q.uptoSeq !== undefined && c.seq > q.uptoSeq) continue;
    if (q.since !== undefined && c.createdAt < q.since) continue;
    if (q.until !== undefined && c.createdAt >= q.until) continue;
    const r = withWhatWasSaid(q.experimentId, c.read(), said);
    const score = q.metric === undefined ? undefined : metricValue(r, q.metric);
    rows.push({
      seq: c.seq,
      logId: r.logId,
      input: r.input,
      output: r.output,
      createdAt: r.createdAt,
      score: score ?? null,
    });
  }
  return rows;
}

function parse(text: string | null): JsonObject | null {
  return text === null ? null : (JSON.parse(text) as JsonObject);
}

/** A committed result as read back, before what was said about it is added. */
export function toResult(r: NewResult): Result {
  return {
    logId: r.logId,
    variantKey: r.variantKey,
    knownVariant: r.knownVariant,
    userId: r.userId,
    assignmentId: r.assignmentId,
    assignedVariant: r.assignedVariant ?? null,
    input: parse(r.input),
    output: parse(r.output),
    metrics: parse(r.metrics),
    context: parse(r.context),
    timestamp: r.timestamp,
    createdAt: r.createdAt,
    experimentVersion: r.version,
    feedback: {},
    assignmentContext: null,
    comments: [],
  };
}
