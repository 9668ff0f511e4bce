// OTLP trace exports in the OTLP JSON mapping (issue 39): an ExportTraceServiceRequest read into spans
// (core/trace-run.ts TraceSpan). Hex ids, 64-bit integers as strings (or numbers, as the JavaScript
// exporter sends them), AnyValue wrappers unwrapped, enums as numbers. A span that cannot be used is
// rejected with its reason (the answer's partialSuccess); a body that is not a trace export at all is a 400.
import { ValidationError } from './errors.js';
import type { Attributes, AttributeValue, TraceSpan } from './trace-run.js';

export interface DecodedExport {
  spans: TraceSpan[];
  /** Why each rejected span was: the first few reasons, and how many in all. */
  rejected: { count: number; reasons: string[] };
}

/** The longest attribute text kept (bytes); longer values are cut from the span, which is kept. */
export const MAX_VALUE_BYTES = 256 * 1024;
const MAX_DEPTH = 8;
const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const NANOS = /^\d{1,20}$/;

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: Json): Json[] => (Array.isArray(v) ? v : []);

class SpanProblem extends Error {}

/** An AnyValue unwrapped (undefined: an empty or unknown wrapper, left out). */
export function anyValue(v: Json, depth = 0): AttributeValue | undefined {
  if (!isObject(v) || depth > MAX_DEPTH) return undefined;
  if (typeof v.stringValue === 'string') {
    return Buffer.byteLength(v.stringValue) <= MAX_VALUE_BYTES ? v.stringValue : undefined;
  }
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  if (v.intValue !== undefined) {
    const n = typeof v.intValue === 'string' && /^-?\d+$/.test(v.intValue) ? Number(v.intValue) : v.intValue;
    return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
  }
  if (v.doubleValue !== undefined) {
    const n = typeof v.doubleValue === 'string' ? Number(v.doubleValue) : v.doubleValue;
    return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
  }
  if (typeof v.bytesValue === 'string') return v.bytesValue;
  if (isObject(v.arrayValue)) {
    return list(v.arrayValue.values)
      .map((x) => anyValue(x, depth + 1))
      .filter((x): x is AttributeValue => x !== undefined);
  }
  if (isObject(v.kvlistValue)) return attributes(v.kvlistValue.values, depth + 1);
  return undefined;
}

/** A KeyValue list as an object (a key given twice: the last). */
export function attributes(kvs: Json, depth = 0): Attributes {
  const out: Attributes = {};
  for (const kv of list(kvs)) {
    if (!isObject(kv) || typeof kv.key !== 'string') continue;
    const v = anyValue(kv.value, depth);
    if (v !== undefined) out[kv.key] = v;
  }
  return out;
}

function id(v: Json, pattern: RegExp, what: string): string {
  const s = typeof v === 'string' ? v.toLowerCase() : '';
  if (!pattern.test(s) || /^0+$/.test(s)) {
    throw new SpanProblem(`${what} must be ${pattern === TRACE_ID ? 32 : 16} hex digits, not all zero`);
  }
  return s;
}

function nanos(v: Json, what: string): string {
  // A number past 2^53 (a JSON exporter writing nanoseconds as a number) is read to within a few hundred ns.
  const s = typeof v === 'number' && Number.isInteger(v) && v >= 0 ? BigInt(v).toString() : v;
  if (typeof s !== 'string' || !NANOS.test(s))
    throw new SpanProblem(`${what} must be nanoseconds since the epoch`);
  return s;
}

function spanOf(raw: Json, resource: Attributes): TraceSpan {
  if (!isObject(raw)) throw new SpanProblem('a span must be an object');
  const traceId = id(raw.traceId, TRACE_ID, 'traceId');
  const spanId = id(raw.spanId, SPAN_ID, 'spanId');
  const parent = raw.parentSpanId;
  const parentSpanId =
    parent === undefined || parent === null || parent === '' ? null : id(parent, SPAN_ID, 'parentSpanId');
  const startTimeUnixNano = nanos(raw.startTimeUnixNano, 'startTimeUnixNano');
  const endTimeUnixNano = nanos(raw.endTimeUnixNano, 'endTimeUnixNano');
  if (BigInt(endTimeUnixNano) < BigInt(startTimeUnixNano))
    throw new SpanProblem('the span ends before it starts');
  const status = isObject(raw.status) ? raw.status : {};
  const code =
    typeof status.code === 'number'
      ? status.code
      : status.code === 'STATUS_CODE_ERROR'
        ? 2
        : status.code === 'STATUS_CODE_OK'
          ? 1
          : 0;
  return {
    traceId,
    spanId,
    parentSpanId,
    name: typeof raw.name === 'string' ? raw.name : '',
    startTimeUnixNano,
    endTimeUnixNano,
    attributes: { ...resource, ...attributes(raw.attributes) },
    events: list(raw.events)
      .filter(isObject)
      .map((e) => ({
        name: typeof e.name === 'string' ? e.name : '',
        timeUnixNano:
          typeof e.timeUnixNano === 'string' || typeof e.timeUnixNano === 'number'
            ? String(e.timeUnixNano)
            : '0',
        attributes: attributes(e.attributes),
      })),
    status: {
      code,
      ...(typeof status.message === 'string' && status.message !== '' ? { message: status.message } : {}),
    },
  };
}

/** Reads an ExportTraceServiceRequest in the OTLP JSON mapping. */
export function decodeTraceExport(body: Json): DecodedExport {
  if (!isObject(body)) throw new ValidationError('body must be an OTLP ExportTraceServiceRequest object');
  for (const other of ['resourceLogs', 'resourceMetrics', 'resourceProfiles']) {
    if (body[other] !== undefined && body.resourceSpans === undefined) {
      const path =
        other === 'resourceLogs'
          ? '/v1/logs'
          : other === 'resourceMetrics'
            ? '/v1/metrics'
            : '/v1development/profiles';
      throw new ValidationError(
        `this is an OTLP ${other} export (for ${path}); only traces are accepted here, at /v1/traces`,
      );
    }
  }
  if (body.resourceSpans !== undefined && !Array.isArray(body.resourceSpans)) {
    throw new ValidationError('resourceSpans must be an array');
  }
  const spans: TraceSpan[] = [];
  const rejected = { count: 0, reasons: [] as string[] };
  for (const rs of list(body.resourceSpans)) {
    const resource = isObject(rs) && isObject(rs.resource) ? attributes(rs.resource.attributes) : {};
    for (const ss of isObject(rs) ? list(rs.scopeSpans) : []) {
      for (const raw of isObject(ss) ? list(ss.spans) : []) {
        try {
          spans.push(spanOf(raw, resource));
        } catch (err) {
          if (!(err instanceof SpanProblem)) throw err;
          rejected.count++;
          if (rejected.reasons.length < 5) rejected.reasons.push(err.message);
        }
      }
    }
  }
  return { spans, rejected };
}
