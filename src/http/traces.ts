// POST /v1/traces (issue 39, ADR 0045): OTLP/HTTP trace exports, in protobuf or the OTLP JSON mapping,
// gzip or not. The answer is an ExportTraceServiceResponse in the request's encoding (partialSuccess for
// spans that could not be used); the route's own errors are google.rpc.Status in that encoding too (in
// JSON also with this API's `error` field). Key, scope and rate-limit refusals keep the pipeline's bodies.
import type { IncomingHttpHeaders } from 'node:http';
import type { DecodedExport } from '../core/otlp-json.js';
import { decodeTraceExport } from '../core/otlp-json.js';
import type { ExportAnswer, TraceService } from '../services/traces.js';
import { refusal } from './auth.js';
import { parseJsonBody } from './body.js';
import { decodeTraceRequest, encodeStatus, encodeTraceResponse } from './otlp-protobuf.js';
import { PlainText, type Route, type RouteFailure, route } from './route.js';
import { errorResponses, unavailableResponse } from './schemas/common.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** Exports being read or written at once; more wait unread (their decoding holds the event loop). */
const CONCURRENT_EXPORTS = 4;

/** google.rpc.Code for an HTTP status (OTLP clients ignore it; it says the same in gRPC's words). */
const RPC_CODES: Record<number, number> = {
  400: 3,
  403: 7,
  404: 5,
  413: 8,
  415: 3,
  429: 8,
  500: 13,
  503: 14,
};

const isProtobuf = (headers: IncomingHttpHeaders) =>
  (headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase() === PROTOBUF;

/** An error of this route in the request's encoding. */
function statusBody(f: RouteFailure) {
  const code = RPC_CODES[f.status] ?? 2;
  if (isProtobuf(f.headers)) return { type: PROTOBUF, body: Buffer.from(encodeStatus(code, f.message)) };
  return JSON.stringify({ error: f.message, code, message: f.message });
}

/** The answer in the request's encoding: empty on full success, partialSuccess otherwise. */
function exportAnswer(protobuf: boolean, a: ExportAnswer): PlainText {
  const partial = a.rejectedSpans > 0 || a.errorMessage !== '' ? a : undefined;
  if (protobuf) return new PlainText(Buffer.from(encodeTraceResponse(partial)), PROTOBUF);
  const body =
    partial === undefined
      ? {}
      : {
          partialSuccess: {
            rejectedSpans: String(partial.rejectedSpans),
            errorMessage: partial.errorMessage,
          },
        };
  return new PlainText(JSON.stringify(body), JSON_TYPE);
}

const ANSWER_EXAMPLE = {
  partialSuccess: {
    rejectedSpans: '1',
    errorMessage: 'span 3: traceId must be 32 hex digits (got "xyz")',
  },
};

const TracesResponse = {
  description:
    'ExportTraceServiceResponse in the encoding of the request: empty ({} in JSON) when every span was used; ' +
    'partialSuccess with rejectedSpans (malformed spans) and errorMessage (why, and warnings such as spans ' +
    'that carry no agentsplit key yet) otherwise. Exporters do not retry a partial success.',
  content: {
    [JSON_TYPE]: {
      schema: {
        type: 'object',
        properties: {
          partialSuccess: {
            type: 'object',
            properties: { rejectedSpans: { type: 'string' }, errorMessage: { type: 'string' } },
          },
        },
      },
      example: ANSWER_EXAMPLE,
    },
    [PROTOBUF]: {
      schema: { type: 'string', format: 'binary', description: 'ExportTraceServiceResponse (protobuf)' },
      example: '',
    },
  },
};

export function traceRoutes(traces: Pick<TraceService, 'ingest'>, limit: number): Route[] {
  return [
    route({
      method: 'POST',
      url: '/v1/traces',
      scope: 'log',
      concurrency: CONCURRENT_EXPORTS,
      bytes: { types: [PROTOBUF, JSON_TYPE], gzip: true, limit },
      schema: {
        tags: ['results'],
        summary: 'Receive OpenTelemetry traces (OTLP/HTTP): each agent run becomes a result',
        description:
          'The OTLP/HTTP trace endpoint (protobuf or JSON, gzip or not; the key in x-api-key or ' +
          '`Authorization: Bearer`). The spans of one trace that share `agentsplit.assignment_id` (on a span, ' +
          'an ancestor, or the resource), or `agentsplit.experiment` + `agentsplit.variant` + `user.id`, become ' +
          'one result of that experiment; its metrics (latency_ms, error, input_tokens, output_tokens, ' +
          'tool_calls, tool_errors, ttft_ms, cost_usd, cache and reasoning tokens) and gen_ai.evaluation.result ' +
          'events are written as feedback on it, and replaced as later spans arrive. Spans repeated by a retry ' +
          'count once. Errors are google.rpc.Status in the encoding of the request; 503 and 429 carry Retry-After.',
        response: {
          200: TracesResponse,
          400: errorResponses[400],
          401: errorResponses[401],
          403: errorResponses[403],
          413: errorResponses[400],
          415: errorResponses[400],
          429: errorResponses[429],
          503: unavailableResponse,
        },
      },
      errorBody: statusBody,
      handle: async ({ raw, principal }) => {
        const protobuf = raw!.type === PROTOBUF;
        const bytes = raw!.bytes;
        const decoded: DecodedExport = decodeTraceExport(
          protobuf ? decodeTraceRequest(bytes) : (parseJsonBody(bytes) ?? {}),
        );
        const may = (slug: string) => refusal(principal, { scope: 'log' }, { slug }) === null;
        return exportAnswer(protobuf, await traces.ingest(decoded, may));
      },
    }),
  ];
}
