// The trace a result was read from (issue 39): what the results view shows of a run that came in on
// /v1/traces (core/trace-result.ts TraceSummary).
import { Type } from 'typebox';

const SpanSummarySchema = Type.Object({
  spanId: Type.String(),
  parentSpanId: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  operation: Type.Union([Type.String(), Type.Null()], { description: 'gen_ai.operation.name' }),
  model: Type.Union([Type.String(), Type.Null()]),
  startMs: Type.Number({ description: "Milliseconds after the run's first span started" }),
  durationMs: Type.Number(),
  error: Type.Boolean(),
  inputTokens: Type.Optional(Type.Number()),
  outputTokens: Type.Optional(Type.Number()),
});

export const TraceSummarySchema = Type.Object(
  {
    traceId: Type.String({ description: '32 hex digits' }),
    rootSpanId: Type.String({ description: "The run's root span (its latency_ms)" }),
    spanCount: Type.Integer({ description: 'Spans in the run so far' }),
    models: Type.Array(Type.String(), { description: 'The models it called, in order of first call' }),
    input: Type.Union([Type.String(), Type.Null()], {
      description: "The first model call's gen_ai.input.messages (JSON text, within TRACE_MESSAGE_BYTES)",
    }),
    output: Type.Union([Type.String(), Type.Null()], {
      description: "The last model call's gen_ai.output.messages (JSON text, within TRACE_MESSAGE_BYTES)",
    }),
    spans: Type.Array(SpanSummarySchema, { maxItems: 50, description: 'Its first 50 spans by start time' }),
  },
  {
    description:
      'Present on results read from OpenTelemetry traces (POST /v1/traces): the run as its latest spans read it',
  },
);
