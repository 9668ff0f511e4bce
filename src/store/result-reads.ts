// Pages of results with what was said about them (issue 26): one query for the page (in commit order
// either way, or by a metric's value), then one for the feedback on its results and one for the
// contexts of their assignments: three queries a page, whatever its size.
import { type Kysely, type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import type { JsonObject } from '../core/json.js';
import { type Database, isoTime, type ResultsTable } from './schema.js';
import type { Result, ResultPage, ResultQuery } from './store.js';

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

export async function readResults(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  q: ResultQuery,
): Promise<ResultPage> {
  const desc = q.order === 'desc';
  const cmp = desc ? '<' : '>';
  let query = db.selectFrom('results as r').selectAll('r').where('r.experiment_id', '=', q.experimentId);
  if (q.uptoSeq !== undefined) query = query.where('r.seq', '<=', q.uptoSeq);
  if (q.variantKey !== undefined) query = query.where('r.variant_key', '=', q.variantKey);
  if (q.since !== undefined) query = query.where('r.created_at', '>=', q.since);
  if (q.until !== undefined) query = query.where('r.created_at', '<', q.until);
  const m = q.metric;
  const value = m && metricValueSql(dialect, m.name);
  if (value) {
    query = query.where(value, 'is not', null);
    const num = (n: number) => (dialect === 'postgres' ? sql`${n}::float8` : sql`${n}`);
    if (m.min !== undefined) query = query.where(sql<SqlBool>`${value} >= ${num(m.min)}`);
    if (m.max !== undefined) query = query.where(sql<SqlBool>`${value} <= ${num(m.max)}`);
  }
  const byValue = value !== undefined && m?.byValue === true;
  if (byValue && q.afterSeq !== undefined && q.afterValue !== undefined) {
    const at = dialect === 'postgres' ? sql`${q.afterValue}::float8` : sql`${q.afterValue}`;
    const op = sql.raw(cmp);
    query = query.where(
      sql<SqlBool>`(${value} ${op} ${at} OR (${value} = ${at} AND r.seq ${op} ${q.afterSeq}))`,
    );
  } else if (q.afterSeq !== undefined) {
    query = query.where('r.seq', cmp, q.afterSeq);
  }
  const direction = desc ? 'desc' : 'asc';
  const ordered = byValue
    ? query.select(value.as('metric_value')).orderBy(value, direction).orderBy('r.seq', direction)
    : query.orderBy('r.seq', direction);
  const rows = (await ordered.limit(q.limit + 1).execute()) as Array<
    Selectable<ResultsTable> & { metric_value?: number | string | null }
  >;
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
    .select(['target', 'metric', 'kind', 'value'])
    .where('experiment_id', '=', experimentId)
    .where('target', 'in', targets)
    .execute();
  const byTarget = new Map<string, Record<string, number | boolean>>();
  for (const f of said) {
    const values = byTarget.get(f.target) ?? {};
    values[f.metric] = f.kind === 'proportion' ? Number(f.value) === 1 : Number(f.value);
    byTarget.set(f.target, values);
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
    r.assignmentContext = (uuid !== undefined && contexts.get(uuid)) || null;
  }
}
