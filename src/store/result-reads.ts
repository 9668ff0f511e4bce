// Pages of results with what was said about them (issue 26): one query for the page (in commit order
// either way, or by a metric's value), then one for the feedback on its results and one for the
// contexts of their assignments: three queries a page, whatever its size. A read by a metric's value on
// SQLite reads in steps that give the event loop back (scanSqlite): no index holds that value.
import { type Kysely, type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import type { ComparedRow } from '../core/compare.js';
import type { JsonObject } from '../core/json.js';
import { newestComments } from '../core/search.js';
import { commonText, searchCondition } from './result-search.js';
import type { ComparedQuery, Result, ResultPage, ResultQuery } from './result-types.js';
import { type Database, isoTime, type ResultsTable } from './schema.js';

function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** The UUID that names an assignment (its forms share it; assignment_contexts and feedback key by it). */
const uuidOf = (assignmentId: string) => assignmentId.slice(0, 36);

function toResult(row: Selectable<ResultsTable>): Result {
  return {
    logId: row.log_id,
    variantKey: row.variant_key,
    // 0/1 on SQLite, a boolean on PostgreSQL.
    knownVariant: Boolean(row.known_variant),
    userId: row.user_id,
    assignmentId: row.assignment_id,
    assignedVariant: row.assigned_variant ?? null,
    input: json<JsonObject | null>(row.input),
    output: json<JsonObject | null>(row.output),
    metrics: json<JsonObject | null>(row.metrics),
    context: json<JsonObject | null>(row.context),
    timestamp: row.client_timestamp === null ? null : isoTime(row.client_timestamp),
    createdAt: isoTime(row.created_at),
    experimentVersion: Number(row.experiment_version),
    feedback: {},
    assignmentContext: null,
    comments: [],
    ...(row.run_id === null || row.run_id === undefined
      ? {}
      : { run: { id: row.run_id, itemId: row.item_id ?? '', trial: Number(row.trial ?? 1) } }),
  };
}

/**
 * The SQL of core/result-values.ts metricValue for results row `r`: feedback on its logId, else on its
 * assignment, else its own number (true/false as 1/0); NULL when none.
 */
function metricValueSql(dialect: 'sqlite' | 'postgres', name: string): RawBuilder<number | null> {
  const fb = (target: ReturnType<typeof sql>) =>
    sql`(SELECT f.value FROM feedback f WHERE f.experiment_id = r.experiment_id AND f.target = ${target} AND f.metric = ${name})`;
  if (dialect === 'sqlite') {
    return sql<
      number | null
    >`COALESCE(${fb(sql`'l:' || r.log_id`)}, ${fb(sql`'a:' || substr(r.assignment_id, 1, 36)`)},
      (SELECT CASE j.type WHEN 'integer' THEN j.value WHEN 'real' THEN j.value WHEN 'true' THEN 1 WHEN 'false' THEN 0 END
       FROM json_each(r.metrics) j WHERE j.key = ${name}))`;
  }
  const own = sql`(r.metrics -> ${name}::text)`;
  return sql<
    number | null
  >`COALESCE(${fb(sql`'l:' || r.log_id`)}, ${fb(sql`'a:' || substr(r.assignment_id, 1, 36)`)},
    CASE json_typeof(${own}) WHEN 'number' THEN (${own} #>> '{}')::float8
      WHEN 'boolean' THEN CASE WHEN (${own} #>> '{}') = 'true' THEN 1.0 ELSE 0.0 END END)`;
}

/** Results one step of a SQLite metric read looks at: a few milliseconds of the event loop each. */
const SCAN_CHUNK = 1000;

type Filtered = ReturnType<typeof filtered>;

/** The results of the query's experiment that its variant, time and text filters keep (no order, no cursor). */
function filtered(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', q: ResultQuery, common = false) {
  let query = db.selectFrom('results as r').where('r.experiment_id', '=', q.experimentId);
  // Online results, or one offline run's (issue 40): never both.
  query = q.runId === undefined ? query.where('r.run_id', 'is', null) : query.where('r.run_id', '=', q.runId);
  if (q.uptoSeq !== undefined) query = query.where('r.seq', '<=', q.uptoSeq);
  if (q.variantKey !== undefined) query = query.where('r.variant_key', '=', q.variantKey);
  if (q.since !== undefined) query = query.where('r.created_at', '>=', q.since);
  if (q.until !== undefined) query = query.where('r.created_at', '<', q.until);
  if (q.search !== undefined) query = query.where(searchCondition(dialect, q.experimentId, q.search, common));
  return query;
}

/** Whether (value, seq) comes after the cursor's pair in the query's order. */
function afterCursor(q: ResultQuery, v: number, seq: number): boolean {
  const desc = q.order === 'desc';
  if (q.afterSeq === undefined) return true;
  if (q.metric?.byValue === true && q.afterValue !== undefined && v !== q.afterValue) {
    return desc ? v < q.afterValue : v > q.afterValue;
  }
  return desc ? seq < q.afterSeq : seq > q.afterSeq;
}

/**
 * SQLite, a metric read: its reads run on the event loop, and no index holds a metric's value, so the
 * results are read in steps of SCAN_CHUNK (their position and value only) with a turn of the event loop
 * between steps; the page's rows are read at the end. Answers the page's (seq, value) pairs, in order.
 */
async function scanSqlite(
  base: Filtered,
  q: ResultQuery,
  value: RawBuilder<number | null>,
): Promise<Array<{ seq: number; v: number }>> {
  const m = q.metric!;
  const byValue = m.byValue === true;
  const desc = q.order === 'desc';
  // By time, the scan goes in the page's order and stops once the page is full; by value, it reads all.
  const scanDesc = !byValue && desc;
  const picked: Array<{ seq: number; v: number }> = [];
  const sign = desc ? -1 : 1;
  const compare = (a: { seq: number; v: number }, b: { seq: number; v: number }) =>
    sign * (a.v - b.v || a.seq - b.seq);
  let pos = !byValue ? q.afterSeq : undefined;
  for (;;) {
    let step = base.select(['r.seq']).select(value.as('v'));
    if (pos !== undefined) step = step.where('r.seq', scanDesc ? '<' : '>', pos);
    const rows = await step
      .orderBy('r.seq', scanDesc ? 'desc' : 'asc')
      .limit(SCAN_CHUNK)
      .execute();
    for (const row of rows) {
      const v = row.v === null ? null : Number(row.v);
      const seq = Number(row.seq);
      if (v === null || (m.min !== undefined && v < m.min) || (m.max !== undefined && v > m.max)) continue;
      if (byValue && !afterCursor(q, v, seq)) continue;
      picked.push({ seq, v });
    }
    if (byValue && picked.length > 4 * (q.limit + 1)) {
      picked.sort(compare);
      picked.length = q.limit + 1;
    }
    if ((!byValue && picked.length > q.limit) || rows.length < SCAN_CHUNK) break;
    pos = Number(rows[rows.length - 1]!.seq);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (byValue) picked.sort(compare);
  return picked.slice(0, q.limit + 1);
}

export async function readResults(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  q: ResultQuery,
): Promise<ResultPage> {
  const desc = q.order === 'desc';
  const direction = desc ? 'desc' : 'asc';
  const m = q.metric;
  const value = m && metricValueSql(dialect, m.name);
  const byValue = value !== undefined && m?.byValue === true;
  let rows: Array<Selectable<ResultsTable> & { metric_value?: number | string | null }>;
  if (value && dialect === 'sqlite') {
    const pairs = await scanSqlite(filtered(db, dialect, q), q, value);
    const seqs = pairs.map((p) => p.seq);
    const read =
      seqs.length === 0
        ? []
        : await db.selectFrom('results as r').selectAll('r').where('r.seq', 'in', seqs).execute();
    const bySeq = new Map(read.map((r) => [Number(r.seq), r]));
    rows = pairs.map((p) => ({ ...bySeq.get(p.seq)!, metric_value: p.v }));
  } else {
    const common = q.search !== undefined && dialect === 'postgres' && !byValue;
    let query = filtered(
      db,
      dialect,
      q,
      common && (await commonText(db, q.experimentId, q.search!)),
    ).selectAll('r');
    const cmp = desc ? '<' : '>';
    if (value) {
      query = query.where(value, 'is not', null);
      if (m.min !== undefined) query = query.where(sql<SqlBool>`${value} >= ${sql`${m.min}::float8`}`);
      if (m.max !== undefined) query = query.where(sql<SqlBool>`${value} <= ${sql`${m.max}::float8`}`);
    }
    if (byValue && q.afterSeq !== undefined && q.afterValue !== undefined) {
      const at = sql`${q.afterValue}::float8`;
      const op = sql.raw(cmp);
      query = query.where(
        sql<SqlBool>`(${value} ${op} ${at} OR (${value} = ${at} AND r.seq ${op} ${q.afterSeq}))`,
      );
    } else if (q.afterSeq !== undefined) {
      query = query.where('r.seq', cmp, q.afterSeq);
    }
    const ordered = byValue
      ? query.select(value.as('metric_value')).orderBy(value, direction).orderBy('r.seq', direction)
      : query.orderBy('r.seq', direction);
    rows = await ordered.limit(q.limit + 1).execute();
  }
  const hasMore = rows.length > q.limit;
  const page = hasMore ? rows.slice(0, q.limit) : rows;
  const last = page[page.length - 1];
  const results = page.map(toResult);
  await joinWhatWasSaid(db, q.experimentId, results);
  return {
    results,
    lastSeq: last ? Number(last.seq) : null,
    ...(byValue ? { lastValue: last?.metric_value == null ? null : Number(last.metric_value) } : {}),
    hasMore,
  };
}

/** One variant's results with their score, newest first (core/compare.ts groups them). */
export async function readCompared(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  q: ComparedQuery,
): Promise<ComparedRow[]> {
  const { metric, beforeSeq, ...kept } = q;
  let query = filtered(db, dialect, kept)
    .select(['r.seq', 'r.log_id', 'r.input', 'r.output', 'r.created_at'])
    .select((metric === undefined ? sql<null>`NULL` : metricValueSql(dialect, metric)).as('score'));
  if (beforeSeq !== undefined) query = query.where('r.seq', '<', beforeSeq);
  const rows = await query.orderBy('r.seq', 'desc').limit(q.limit).execute();
  return rows.map((row) => ({
    seq: Number(row.seq),
    logId: row.log_id,
    input: json<JsonObject | null>(row.input),
    output: json<JsonObject | null>(row.output),
    createdAt: isoTime(row.created_at),
    score: row.score === null ? null : Number(row.score),
  }));
}

/** Fills each result's feedback (logId's over its assignment's) and its assignment's context, in two queries. */
export async function joinWhatWasSaid(
  db: Kysely<Database>,
  experimentId: number,
  results: Result[],
): Promise<void> {
  if (results.length === 0) return;
  const uuids = [...new Set(results.flatMap((r) => (r.assignmentId ? [uuidOf(r.assignmentId)] : [])))];
  const targets = [...results.map((r) => `l:${r.logId}`), ...uuids.map((u) => `a:${u}`)];
  const said = await db
    .selectFrom('feedback')
    .select(['target', 'metric', 'kind', 'value', 'feedback_id', 'comment', 'updated_at'])
    .where('experiment_id', '=', experimentId)
    .where('target', 'in', targets)
    .execute();
  const byTarget = new Map<string, Record<string, number | boolean>>();
  const comments = new Map<string, Array<{ feedbackId: string; comment: string | null; at: string }>>();
  for (const f of said) {
    const values = byTarget.get(f.target) ?? {};
    values[f.metric] = f.kind === 'proportion' ? Number(f.value) === 1 : Number(f.value);
    byTarget.set(f.target, values);
    if (f.comment !== null) {
      const list = comments.get(f.target) ?? [];
      list.push({ feedbackId: f.feedback_id, comment: f.comment, at: isoTime(f.updated_at) });
      comments.set(f.target, list);
    }
  }
  const contexts = new Map<string, JsonObject>();
  if (uuids.length > 0) {
    const rows = await db
      .selectFrom('assignment_contexts')
      .select(['assignment_uuid', 'context'])
      .where('experiment_id', '=', experimentId)
      .where('assignment_uuid', 'in', uuids)
      .execute();
    for (const c of rows) contexts.set(c.assignment_uuid, json<JsonObject>(c.context));
  }
  for (const r of results) {
    const uuid = r.assignmentId ? uuidOf(r.assignmentId) : undefined;
    const onAssignment = uuid === undefined ? undefined : byTarget.get(`a:${uuid}`);
    r.feedback = { ...onAssignment, ...byTarget.get(`l:${r.logId}`) };
    r.comments = newestComments([
      ...(comments.get(`l:${r.logId}`) ?? []),
      ...((uuid !== undefined && comments.get(`a:${uuid}`)) || []),
    ]);
    r.assignmentContext = (uuid !== undefined && contexts.get(uuid)) || null;
  }
}
