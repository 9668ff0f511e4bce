// OTLP/HTTP in protobuf (issue 39): an ExportTraceServiceRequest's bytes read into the OTLP JSON mapping
// (core/otlp-json.ts reads both encodings from there), and the answers written back in protobuf. protobufjs
// over the vendored opentelemetry-proto files (vendor/opentelemetry-proto, v1.9.0, Apache-2.0).
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { ValidationError } from '../core/errors.js';

// The repository's vendor/ directory, the same from src/http and dist/http.
const PROTO_DIR = fileURLToPath(new URL('../../vendor/opentelemetry-proto/', import.meta.url));
const SERVICE = 'opentelemetry/proto/collector/trace/v1/trace_service.proto';

let types: { request: protobuf.Type; response: protobuf.Type; status: protobuf.Type } | undefined;

/** The message types, loaded once on first use (imports resolved inside the vendored tree). */
function load() {
  if (types) return types;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => PROTO_DIR + target;
  root.loadSync(SERVICE, { keepCase: false });
  // google.rpc.Status (the OTLP error body): code, message; details (Any) are never sent.
  const status = new protobuf.Type('Status')
    .add(new protobuf.Field('code', 1, 'int32'))
    .add(new protobuf.Field('message', 2, 'string'));
  root.define('google.rpc').add(status);
  types = {
    request: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    status: root.lookupType('google.rpc.Status'),
  };
  return types;
}

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** Ids (bytes, read as base64) turned to hex, as the JSON mapping writes them. */
function hexIds(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(hexIds);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] = ID_KEYS.has(k) && typeof x === 'string' ? Buffer.from(x, 'base64').toString('hex') : hexIds(x);
  }
  return out;
}

/**
 * The request in the OTLP JSON mapping: 64-bit integers as decimal text, ids as hex, enums as numbers,
 * other bytes as base64, fields left at their defaults absent. Bytes that are not such a message: a 400.
 */
export function decodeTraceRequest(bytes: Uint8Array): unknown {
  const { request } = load();
  let message: protobuf.Message;
  try {
    message = request.decode(bytes);
  } catch (err) {
    throw new ValidationError(
      `body is not an OTLP ExportTraceServiceRequest in protobuf: ${(err as Error).message}`,
    );
  }
  return hexIds(request.toObject(message, { longs: String, bytes: String, enums: Number }));
}

/** ExportTraceServiceResponse: empty on full success, else partialSuccess {rejectedSpans, errorMessage}. */
export function encodeTraceResponse(partial?: { rejectedSpans: number; errorMessage: string }): Uint8Array {
  const { response } = load();
  return response.encode(response.fromObject(partial ? { partialSuccess: partial } : {})).finish();
}

/** google.rpc.Status, the body of an OTLP error answer. */
export function encodeStatus(code: number, message: string): Uint8Array {
  const { status } = load();
  return status.encode(status.fromObject({ code, message })).finish();
}
