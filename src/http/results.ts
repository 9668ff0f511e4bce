// Routes for results: log one, log many, read a page, export all.
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { ResultService } from '../services/results.js';
import type { Result } from '../store/store.js';
import { createAdmission } from './admission.js';
import {
  ErrorSchema,
  ExportQuery,
  errorResponses,
  ListResultsQuery,
  ListResultsResponse,
  LogBody,
  LogManyBody,
  LogManyResponse,
  LogResponse,
  SlugParams,
} from './schemas.js';
import type { Typed } from './typed.js';

const CSV_COLUMNS = [
  'logId',
  'variantKey',
  'userId',
  'assignmentId',
  'experimentVersion',
  'timestamp',
  'createdAt',
  'input',
  'output',
  'metrics',
  'context',
] as const;

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csvLine(result: Result): string {
  return `${CSV_COLUMNS.map((c) => csvCell(result[c])).join(',')}\r\n`;
}

async function* lines(results: AsyncGenerator<Result>, format: 'ndjson' | 'csv'): AsyncGenerator<string> {
  if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\r\n`;
  for await (const r of results) yield format === 'csv' ? csvLine(r) : `${JSON.stringify(r)}\n`;
}

/** Batches of up to 1000 results being parsed or committed at once; more wait unread (see admission.ts). */
const CONCURRENT_BATCHES = 16;

export function resultRoutes(results: ResultService): FastifyPluginAsync {
  return async (plain) => {
    const app = plain as Typed;
    const tags = ['results'];
    const batches = createAdmission(CONCURRENT_BATCHES);

    app.post(
      '/experiment/:slug/log',
      {
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
      },
      async (request) => ({ success: true, ...(await results.log(request.params.slug, request.body)) }),
    );

    app.post(
      '/experiment/:slug/logs',
      {
        schema: {
          tags,
          summary: 'Log up to 1000 results at once (all or nothing)',
          params: SlugParams,
          body: LogManyBody,
          response: { 200: LogManyResponse, ...errorResponses },
        },
        preParsing: batches.preParsing,
      },
      async (request) => {
        // The parsed batch is not needed once it is rows: let it be collected while the commit is awaited.
        const pending = results.logMany(request.params.slug, request.body.results);
        (request as { body: unknown }).body = undefined;
        const { logIds, warnings } = await pending;
        return warnings.length > 0 ? { success: true, logIds, warnings } : { success: true, logIds };
      },
    );

    app.get(
      '/experiment/:slug/results',
      {
        schema: {
          tags,
          summary: 'Read results, oldest first, a page at a time',
          params: SlugParams,
          querystring: ListResultsQuery,
          response: { 200: ListResultsResponse, ...errorResponses },
        },
      },
      async (request) => results.list(request.params.slug, request.query),
    );

    app.get(
      '/experiment/:slug/results/export',
      {
        schema: {
          tags,
          summary: 'Stream every result as NDJSON or CSV',
          params: SlugParams,
          querystring: ExportQuery,
          response: { 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        const format = request.query.format === 'csv' ? 'csv' : 'ndjson';
        const all = await results.exportAll(request.params.slug);
        const slug = request.params.slug;
        reply
          .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
          .header('content-disposition', `attachment; filename="${slug}-results.${format}"`);
        return reply.send(Readable.from(lines(all, format)) as never);
      },
    );
  };
}
