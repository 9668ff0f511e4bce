// An agent whose runs reach agentsplit as OpenTelemetry traces (README, "Traces (OpenTelemetry)"): it asks
// agentsplit for a variant, runs a stand-in model call and a tool call under one invoke_agent span that
// carries the assignment id, and exports the spans (OTLP/HTTP, protobuf) to agentsplit's /v1/traces. The run
// becomes one result of the experiment, its tokens, tool calls, latency and cost as feedback metrics.
//
//   AGENTSPLIT_URL=http://127.0.0.1:3000 AGENTSPLIT_API_KEY=<a key with assign and log> \
//     node examples/otel/agent.mjs <experiment slug>
//
// Environment: AGENTSPLIT_URL (default http://127.0.0.1:3000), AGENTSPLIT_API_KEY, AGENTSPLIT_EXPERIMENT
// (the slug, when not given as the argument), AGENTSPLIT_USER (default user-42). A variant's payload may
// name the model ({"model": "gpt-4o-mini"}). Packages: @opentelemetry/api, @opentelemetry/sdk-trace-base,
// @opentelemetry/resources, @opentelemetry/exporter-trace-otlp-proto.
import {
  context,
  DiagConsoleLogger,
  DiagLogLevel,
  diag,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

const url = (process.env.AGENTSPLIT_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
const key = process.env.AGENTSPLIT_API_KEY ?? '';
const slug = process.argv[2] ?? process.env.AGENTSPLIT_EXPERIMENT;
const userId = process.env.AGENTSPLIT_USER ?? 'user-42';
if (!slug || !key) {
  console.error('usage: AGENTSPLIT_API_KEY=<key> node examples/otel/agent.mjs <experiment slug>');
  process.exit(2);
}

// 1. Which variant does this user get? The answer's assignmentId joins the trace to the experiment.
const res = await fetch(`${url}/experiment/${encodeURIComponent(slug)}/assign`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': key },
  body: JSON.stringify({ userId }),
});
if (!res.ok) {
  console.error(`assign answered ${res.status}: ${await res.text()}`);
  process.exit(1);
}
const { variant, payload, assignmentId } = await res.json();
const model = payload?.model ?? 'gpt-4o-mini';

// 2. Spans go to agentsplit's OTLP endpoint, in batches, with the key as a header. Export failures (a wrong
// key, the server away) are printed as warnings, not thrown.
diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'support-agent' }),
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: `${url}/v1/traces`, headers: { 'x-api-key': key } })),
  ],
});
const tracer = provider.getTracer('support-agent', '1.0.0');

/** A stand-in for an LLM call: a fixed answer and token counts, after a short wait. */
async function fakeModel(question) {
  await new Promise((ok) => setTimeout(ok, 120));
  return { text: 'Your order ships today.', inputTokens: 24 + question.length, outputTokens: 9 };
}

/** A stand-in for a tool. */
async function trackOrder(orderId) {
  await new Promise((ok) => setTimeout(ok, 30));
  return { orderId, status: 'shipped' };
}

// 3. One run: an invoke_agent span with the assignment id, and under it a model call and a tool call.
const question = 'Where is my order 1234?';
const root = tracer.startSpan('invoke_agent support-agent', {
  attributes: { 'gen_ai.operation.name': 'invoke_agent', 'agentsplit.assignment_id': assignmentId },
});
const inRun = trace.setSpan(context.active(), root);

const chat = tracer.startSpan(
  `chat ${model}`,
  { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model } },
  inRun,
);
const reply = await fakeModel(question);
chat.setAttributes({
  'gen_ai.usage.input_tokens': reply.inputTokens,
  'gen_ai.usage.output_tokens': reply.outputTokens,
});
chat.end();

const tool = tracer.startSpan(
  'execute_tool track_order',
  { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'track_order' } },
  inRun,
);
try {
  await trackOrder('1234');
} catch (err) {
  tool.setStatus({ code: SpanStatusCode.ERROR, message: String(err) });
  tool.setAttribute('error.type', err?.name ?? 'Error');
}
tool.end();
root.end();

// 4. Send what is still batched before the process ends.
await provider.shutdown();

console.log(`assignment ${assignmentId} (variant ${variant})`);
console.log(`trace ${root.spanContext().traceId}`);
console.log(
  `sent ${model}: input_tokens ${reply.inputTokens}, output_tokens ${reply.outputTokens}, tool_calls 1`,
);
