// A fake agent instrumented with the real OpenTelemetry SDK (issue 39): one run is an invoke_agent span
// carrying the assignment id, two chat spans with GenAI usage, and a tool span that failed. Exported by
// whichever exporter the test hands it (OTLP JSON or protobuf), through a batch processor flushed by hand.
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';

export function agentProvider(exporter: SpanExporter): BasicTracerProvider {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'fake-agent' }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 60_000 })],
  });
}

/** The usage the fake agent's model calls report, to compare the run with. */
export const AGENT_CALLS = [
  { model: 'gpt-4o', input: 1200, output: 80, cacheRead: 1000 },
  { model: 'gpt-4o-mini', input: 300, output: 40, cacheRead: 0 },
];

/**
 * Emits one run of the fake agent for `assignmentId`; answers its trace id. With `at` (ms since the epoch)
 * every span starts and ends at fixed offsets from it (root 0–800 ms, chat 10–410, tool 420–470, chat
 * 480–780), so two runs read the same latency.
 */
export function runAgent(provider: BasicTracerProvider, assignmentId: string, at?: number): string {
  const tracer = provider.getTracer('fake-agent', '1.0.0');
  const time = (ms: number) => (at === undefined ? undefined : at + ms);
  const root = tracer.startSpan('invoke_agent support-bot', {
    kind: SpanKind.INTERNAL,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'agentsplit.assignment_id': assignmentId },
    startTime: time(0),
  });
  const parent = trace.setSpan(context.active(), root);
  const starts: Record<string, number> = { chat: 10, execute_tool: 420 };
  let chats = 0;
  const child = (name: string, attributes: Record<string, string | number>): Span => {
    const op = String(attributes['gen_ai.operation.name']);
    const start = op === 'chat' && chats++ > 0 ? 480 : starts[op]!;
    return tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes, startTime: time(start) }, parent);
  };
  const [first, second] = AGENT_CALLS;
  const chat1 = child('chat gpt-4o', {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': first!.model,
    'gen_ai.usage.input_tokens': first!.input,
    'gen_ai.usage.output_tokens': first!.output,
    'gen_ai.usage.cache_read.input_tokens': first!.cacheRead,
  });
  chat1.end(time(410));
  const tool = child('execute_tool track_order', {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'track_order',
  });
  tool.setStatus({ code: SpanStatusCode.ERROR, message: 'timeout' });
  tool.setAttribute('error.type', 'timeout');
  tool.end(time(470));
  const chat2 = child('chat gpt-4o-mini', {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': second!.model,
    'gen_ai.usage.input_tokens': second!.input,
    'gen_ai.usage.output_tokens': second!.output,
  });
  chat2.addEvent('gen_ai.evaluation.result', {
    'gen_ai.evaluation.name': 'helpfulness',
    'gen_ai.evaluation.score.value': 1,
  });
  chat2.end(time(780));
  root.end(time(800));
  return root.spanContext().traceId;
}
