// Routes for results: log one, log many, read a page, export all.
import { Readable } from 'node:stream';
import { shownMetric } from '../core/result-values.js';
import type { CompareService } from '../services/compare.js';
import type { FeedbackReceipt, FeedbackService } from '../services/feedback.js';
import type { LogReceipt, LogsAnswer, Result, ResultService } from '../services/results.js';
import { type Route, route, Stream } from './route.js';
import { errorResponses, SlugParams } from './schemas/common.js';
import { CompareQuery, CompareResponse } from './schemas/compare.js';
import {
  ExportQuery,
  ExportResponse,
  FeedbackBody,
  FeedbackResponse,
  ListResultsQuery,
  ListResultsResponse,
  LogBody,
  LogManyBody,
  LogManyResponse,
  LogResponse,
} from './schemas/results.js';

const CSV_COLUMNS = [
  'logId',
  'variantKey',
  'knownVariant',
  'userId',
  'assignmentId',
  'assignedVariant',
  'experimentVersion',
  'timestamp',
  'createdAt',
  'input',
  'output',
  'metrics',
  'context',
  'feedback',
  'assignmentContext',
  'comments',
] as const;

/** Text a spreadsheet would run as a formula: it begins with = + - @, a tab or a carriage return. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell. Text that a spreadsheet would read as a formula gets a leading `'` (OWASP's rule for CSV
 * injection): a userId or an answer such as `=HYPERLINK(…)` opens as text. Numbers and true/false stay
 * as they are (-3 is a number, not a formula); JSON objects start with `{` or `[`.
 */
function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * One row per result: the fields (JSON objects as JSON text), then one column per analysed metric,
 * `metric:<name>`, holding its number or true/false (the feedback given on it, else its own value:
 * core/result-values.ts), so a spreadsheet can pivot on metrics directly.
 */
function csvLine(result: Result, metricNames: readonly string[]): string {
  const cells = CSV_COLUMNS.map((c) => csvCell(result[c]));
  for (const name of metricNames) {
    const value = shownMetric(result, name);
    cells.push(value === undefined ? '' : String(value));
  }
  return `${cells.join(',')}\r\n`;
}

async function* lines(
  exported: { metricNames: string[]; results: AsyncGenerator<Result> },
  format: 'ndjson' | 'csv',
): AsyncGenerator<string> {
  const { metricNames, results } = exported;
  if (format === 'csv') {
    const header = [...CSV_COLUMNS, ...metricNames.map((m) => csvCell(`metric:${m}`))];
    yield `${header.join(',')}\r\n`;
  }
  for await (const r of results) yield format === 'csv' ? csvLine(r, metricNames) : `${JSON.stringify(r)}\n`;
}

const logAnswer = (r: LogReceipt) => ({ success: true, ...r });

/** Batches of up to 1000 results being read, parsed or committed at once; more wait unread. */
const CONCURRENT_BATCHES = 16;

export function resultRoutes(
  results: ResultService,
  feedback: FeedbackService,
  compare: CompareService,
): Route[] {
  const tags = ['results'];
  return [
    route({
      method: 'POST',
      url: '/experiment/:slug/log',
      scope: 'log',
      fast: true,
      schema: {
        tags,
        summary: 'Log the result of running a variant',
        description:
          'Answers 200 only once the result is committed. A variantKey that matches no variant is stored, ' +
          'flagged, and answered with a warning. Paused and completed experiments still accept results.',
        params: SlugParams,
        body: LogBody,
        response: { 200: LogResponse, ...errorResponses },
      },
      idempotent: true,
      handle: ({ params, body, idempotency }) =>
        results.log(params.slug, body, idempotency && ((r) => idempotency(logAnswer(r)))).then(logAnswer),
    }),
    route({
      method: 'POST',
      url: '/experiment/:slug/logs',
      scope: 'log',
      fast: true,
      concurrency: CONCURRENT_BATCHES,
      schema: {
        tags,
        summary: 'Log up to 1000 results at once (all or nothing)',
        params: SlugParams,
        body: LogManyBody,
        response: { 200: LogManyResponse, ...errorResponses },
      },
      idempotent: true,
      handle: async ({ params, body, idempotency }) => {
        const answer = ({ logIds, warnings }: LogsAnswer) =>
          warnings.length > 0 ? { success: true, logIds, warnings } : { success: true, logIds };
        return answer(
          await results.logMany(params.slug, body.results, idempotency && ((a) => idempotency(answer(a)))),
        );
      },
    }),
    route({
      method: 'POST',
      url: '/experiment/:slug/feedback',
      scope: 'log',
      schema: {
        tags,
        summary: 'Send late feedback on an assignment or a result (a rating, a thumbs-up, a judge score)',
        description:
          'Counts for the variant of the assignment or result it names, and joins its user in sticky ' +
          'experiments. Sending the same metric for the same target again replaces the value: retries and ' +
          'corrections never double-count. Answers 200 only once committed; an id the service never issued is 404.',
        params: SlugParams,
        body: FeedbackBody,
        response: { 200: FeedbackResponse, ...errorResponses },
      },
      idempotent: true,
      handle: async ({ params, body, idempotency }) => {
        const answer = (r: FeedbackReceipt) => ({ success: true, ...r });
        return answer(await feedback.give(params.slug, body, idempotency && ((r) => idempotency(answer(r)))));
      },
    }),
    route({
      method: 'GET',
      url: '/experiment/:slug/results',
      scope: 'read',
      schema: {
        tags,
        summary: 'Read results a page at a time: oldest or newest first, or by a metric (worst first)',
        description:
          'Each result carries `feedback` (the latest given on its logId, else on its assignmentId) and ' +
          '`assignmentContext` (the context its assignment was made with). `metric` keeps the results that have ' +
          'a value for it (feedback first, then their own metric; true/false as 1/0), within `min`/`max`; ' +
          '`sort=metric` orders by that value. A cursor only continues the order and sort it was made for (else 400).',
        params: SlugParams,
        querystring: ListResultsQuery,
        response: { 200: ListResultsResponse, ...errorResponses },
      },
      handle: ({ params, query }) => results.list(params.slug, query),
    }),
    route({
      method: 'GET',
      url: '/experiment/:slug/results/compare',
      scope: 'read',
      schema: {
        tags,
        summary: "Two variants' results side by side, grouped by input: n, mean score and win rate per input",
        description:
          'Inputs match as the same JSON whatever the key order. Per input: results per variant, their mean ' +
          'score (`metric`: feedback first, then their own value; true/false as 1/0), the win rate of a over b ' +
          'and the newest outputs of each. Reads at most the newest 20,000 results of each variant ' +
          '(`scanned`; `truncated` says when there were more). 400 when a equals b or names no variant.',
        params: SlugParams,
        querystring: CompareQuery,
        response: { 200: CompareResponse, ...errorResponses },
      },
      handle: ({ params, query }) => compare.compare(params.slug, query),
    }),
    route({
      method: 'GET',
      url: '/experiment/:slug/results/export',
      scope: 'read',
      schema: {
        tags,
        summary: 'Stream every result as NDJSON or CSV',
        params: SlugParams,
        querystring: ExportQuery,
        response: {
          200: ExportResponse,
          400: errorResponses[400],
          401: errorResponses[401],
          404: errorResponses[404],
        },
      },
      handle: async ({ params, query }) => {
        const format = query.format === 'csv' ? 'csv' : 'ndjson';
        const all = await results.exportAll(params.slug);
        // Streamed NDJSON or CSV, never serialized by a schema (ExportResponse documents `content`).
        return new Stream(Readable.from(lines(all, format)), {
          'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
          'content-disposition': `attachment; filename="${params.slug}-results.${format}"`,
        });
      },
    }),
  ];
}
