// The schemas of results: logging one or many, late feedback, a page of results, the export.
import { type Static, Type } from 'typebox';
import type { JsonObject } from '../../core/json.js';
import { MAX_ASSIGNMENT_ID, UserId } from './assign.js';
import { JsonObjectSchema } from './common.js';
import { ASSIGNMENT_ID, LOG_EXAMPLE, LOG_ID, RESULT_EXAMPLE } from './examples.js';
import { TraceSummarySchema } from './traces.js';

export const METRIC_NAME_RULE = '1-128 characters, no control characters';
const METRIC_NAME = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f]+$' };

/** Each metric name becomes a rollup row per variant and version: bounded, so analysis stays instant. */
export const MAX_METRICS_PER_RESULT = 256;

export const LogBody = Type.Object(
  {
    variantKey: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(JsonObjectSchema),
    output: Type.Optional(JsonObjectSchema),
    metrics: Type.Optional(
      Type.Unsafe<JsonObject>({
        type: 'object',
        additionalProperties: true,
        maxProperties: MAX_METRICS_PER_RESULT,
        // Names are keys of the rollups (a btree key on PostgreSQL): bounded alike on both databases.
        propertyNames: METRIC_NAME,
        description: `Up to ${MAX_METRICS_PER_RESULT} named values; numbers are analysed as means, true/false as proportions. Names: ${METRIC_NAME_RULE}`,
      }),
    ),
    context: Type.Optional(JsonObjectSchema),
    userId: Type.Optional(UserId),
    assignmentId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_ASSIGNMENT_ID,
        description: "The assign answer's assignmentId: the variant it names is checked against variantKey",
      }),
    ),
    timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'Client time, ISO 8601' })),
    runId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'An offline run this result answers (POST /experiment/{slug}/runs): never counted online',
      }),
    ),
    itemId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: "With runId: the dataset item's id" }),
    ),
    trial: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 20,
        description: "With runId: which of the run's trials (1-based)",
      }),
    ),
  },
  { examples: [LOG_EXAMPLE] },
);
export type LogBody = Static<typeof LogBody>;

export const LogResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'Always true: the result is committed' }),
    logId: Type.String({ description: "UUIDv7 of the stored result (the Result's logId)" }),
    warning: Type.Optional(
      Type.String({
        description:
          'Set when variantKey matches no variant, or a metric is stored but not analysed (not a number or true/false, or beyond the per-experiment cap); several are joined with "; "',
      }),
    ),
  },
  {
    title: 'LogResponse',
    description: 'The result is committed',
    examples: [{ success: true, logId: LOG_ID }],
  },
);

export const FeedbackBody = Type.Object(
  {
    assignmentId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_ASSIGNMENT_ID,
        description: 'The assignment the feedback is about',
      }),
    ),
    logId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Or the result it is about (exactly one of the two)',
      }),
    ),
    metrics: Type.Unsafe<JsonObject>({
      type: 'object',
      minProperties: 1,
      maxProperties: MAX_METRICS_PER_RESULT,
      propertyNames: METRIC_NAME,
      additionalProperties: true,
      description:
        'Numbers or true/false. Sending a metric again for the same assignment or result replaces its value',
    }),
    comment: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { examples: [{ assignmentId: ASSIGNMENT_ID, metrics: { thumbs_up: true, judge_score: 0.8 } }] },
);

export const FeedbackResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'Always true: the feedback is committed' }),
    feedbackId: Type.String({ description: 'UUIDv7 of this submission' }),
  },
  {
    title: 'FeedbackResponse',
    description: 'The feedback is committed and counted for the variant of its assignment or result',
    examples: [{ success: true, feedbackId: '01972ff1-0b3e-7c55-9d0e-2a4c1e6f8b73' }],
  },
);

export const LogManyBody = Type.Object(
  { results: Type.Array(LogBody, { minItems: 1, maxItems: 1000 }) },
  {
    examples: [
      {
        results: [
          { variantKey: 'A', metrics: { rating: 4 } },
          { variantKey: 'B', metrics: { rating: 5 } },
        ],
      },
    ],
  },
);

export const LogManyResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'Always true: every result is committed' }),
    logIds: Type.Array(Type.String(), { description: 'The logIds, in the order of the results sent' }),
    warnings: Type.Optional(
      Type.Array(Type.String(), { description: 'Set when some variantKeys match no variant' }),
    ),
  },
  {
    title: 'LogManyResponse',
    description: 'Every result is committed, in one transaction',
    examples: [{ success: true, logIds: [LOG_ID, '01972ff0-fa57-71a9-a3f0-6e2b8d4c5a90'] }],
  },
);

export const ResultSchema = Type.Object(
  {
    logId: Type.String(),
    variantKey: Type.String(),
    knownVariant: Type.Boolean({
      description: 'Whether variantKey named a variant when logged (false: stored, flagged, not analysed)',
    }),
    userId: Type.Union([Type.String(), Type.Null()]),
    assignmentId: Type.Union([Type.String(), Type.Null()]),
    assignedVariant: Type.Union([Type.String(), Type.Null()], {
      description:
        'Flag: the variant the assignmentId was issued for, when it is not variantKey; null otherwise',
    }),
    input: Type.Union([JsonObjectSchema, Type.Null()]),
    output: Type.Union([JsonObjectSchema, Type.Null()]),
    metrics: Type.Union([JsonObjectSchema, Type.Null()]),
    context: Type.Union([JsonObjectSchema, Type.Null()]),
    timestamp: Type.Union([Type.String(), Type.Null()], { description: "The client's time, as sent" }),
    createdAt: Type.String({ description: 'When the service stored it' }),
    experimentVersion: Type.Integer({ description: "The experiment's version when it was logged" }),
    feedback: Type.Record(Type.String(), Type.Union([Type.Number(), Type.Boolean()]), {
      description:
        'The latest feedback on this result by metric: given on its logId, else on its assignmentId (true/false as sent); {} when none',
    }),
    assignmentContext: Type.Union([JsonObjectSchema, Type.Null()], {
      description:
        'The context its assignmentId was assigned with (POST /assign, or the exposure a client sent to POST /exposures); null when none is known',
    }),
    comments: Type.Array(
      Type.Object({
        text: Type.String(),
        at: Type.String({ description: 'When the comment was given (ISO 8601)' }),
      }),
      {
        maxItems: 5,
        description:
          'The 5 newest comments sent with feedback on it (on its logId or its assignmentId), newest first; [] when none',
      },
    ),
    trace: Type.Optional(TraceSummarySchema),
    run: Type.Optional(
      Type.Object(
        { id: Type.String(), itemId: Type.String(), trial: Type.Integer({ minimum: 1 }) },
        {
          description:
            "Present on an offline run's results: the run, the dataset item and the trial it answers",
        },
      ),
    ),
  },
  {
    title: 'Result',
    description: 'A logged result, its JSON objects as they were sent (absent ones null)',
    examples: [RESULT_EXAMPLE],
  },
);

export const ListResultsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Results per page' }),
  ),
  cursor: Type.Optional(
    Type.String({
      maxLength: 200,
      description: "The previous page's nextCursor",
      examples: ['cjoxMDA'],
    }),
  ),
  variant: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'Only this variantKey', examples: ['B'] }),
  ),
  since: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'createdAt >= since',
      examples: ['2025-06-02T00:00:00Z'],
    }),
  ),
  until: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'createdAt < until',
      examples: ['2025-06-03T00:00:00Z'],
    }),
  ),
  order: Type.Optional(
    Type.Enum(['asc', 'desc'], {
      type: 'string',
      default: 'asc',
      description:
        'asc: oldest first (or lowest value first with sort=metric); desc: newest (or highest) first',
      examples: ['desc'],
    }),
  ),
  metric: Type.Optional(
    Type.String({
      ...METRIC_NAME,
      description:
        "Only results with a number or true/false (as 1/0) for this metric: feedback on the logId, else on the assignmentId, else the result's own metric",
      examples: ['rating'],
    }),
  ),
  run: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        "One offline run's results (POST /experiment/{slug}/runs); without it, only online results",
      examples: ['019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b'],
    }),
  ),
  q: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        'Only results whose input or output (their JSON text) or a comment given with feedback on them contains this text, ignoring case; 3 to 200 characters (shorter is 400)',
      examples: ['refund'],
    }),
  ),
  min: Type.Optional(Type.Number({ description: 'With metric: its value >= min', examples: [1] })),
  max: Type.Optional(Type.Number({ description: 'With metric: its value <= max', examples: [2] })),
  sort: Type.Optional(
    Type.Enum(['time', 'metric'], {
      type: 'string',
      default: 'time',
      description:
        "time: commit order; metric: by the metric's value (then commit order), e.g. worst first. Each page of a metric read scans the experiment's results",
      examples: ['metric'],
    }),
  ),
});

export const ListResultsResponse = Type.Object(
  {
    results: Type.Array(ResultSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass it as cursor for the next page; null on the last one',
    }),
  },
  {
    title: 'ResultPage',
    description: 'A page of results, oldest first unless order=desc or sort=metric',
    examples: [{ results: [RESULT_EXAMPLE], nextCursor: 'cjoxMDA' }],
  },
);

export const ExportQuery = Type.Object({
  format: Type.Optional(
    Type.Enum(['ndjson', 'csv'], {
      type: 'string',
      default: 'ndjson',
      description: 'ndjson: one Result as JSON per line; csv: a header row, then one row per Result',
      examples: ['csv'],
    }),
  ),
});

/**
 * The export's success as the document shows it: a stream, never serialized (the handler returns a
 * Stream), so `content` by media type; Fastify accepts it, and compile.ts compiles no serializer for it.
 */
export const ExportResponse = {
  description: 'Every result committed when the export began, oldest first, streamed',
  content: {
    'application/x-ndjson': {
      schema: { type: 'string', description: 'One Result as JSON per line' },
      example: `${JSON.stringify(RESULT_EXAMPLE)}\n`,
    },
    'text/csv': {
      schema: {
        type: 'string',
        description: 'A header row, then one row per Result; JSON objects as JSON text',
      },
      example:
        'logId,variantKey,knownVariant,userId,assignmentId,assignedVariant,experimentVersion,timestamp,createdAt,input,output,metrics,context,feedback,assignmentContext,comments,metric:rating,metric:tokens\r\n' +
        `${LOG_ID},B,true,user-42,${ASSIGNMENT_ID},,1,2025-06-02T09:20:11.200Z,2025-06-02T09:20:11.348Z,` +
        '"{""question"":""Where is my order?""}","{""answer"":""It ships today.""}",' +
        '"{""latency_ms"":812,""tokens"":153}","{""plan"":""pro""}","{""rating"":5}","{""plan"":""pro""}",[],5,153\r\n',
    },
  },
};
