// Route schemas (TypeBox): they validate requests, serialize responses and generate the OpenAPI document.
// A schema with a `title` is one of the document's named schemas (components.schemas, see nameSchemas);
// `examples` become the document's examples. Neither keyword changes validation or serialization.
import { isDeepStrictEqual } from 'node:util';
import { type Static, Type } from 'typebox';
import { ASSIGNMENT_MODES, STATUSES } from '../core/experiment.js';
import type { JsonObject } from '../core/json.js';

// The examples tell one story, the README's: a prompt experiment, one user assigned and one result logged.
const VARIANT_A = { key: 'A', payload: { prompt: 'You are a helpful assistant.' }, trafficPercent: 50 };
const VARIANT_B = { key: 'B', payload: { prompt: 'You are a concise assistant.' }, trafficPercent: 50 };
const EXPERIMENT_EXAMPLE = {
  slug: 'checkout-prompt',
  name: 'Checkout prompt',
  description: 'Does a concise prompt answer as well, for less?',
  status: 'running',
  active: true,
  assignment: 'random',
  seed: 'checkout-prompt',
  variants: [VARIANT_A, VARIANT_B],
  metrics: [],
  version: 1,
  createdAt: '2025-06-02T09:14:03.512Z',
  updatedAt: '2025-06-02T09:14:03.512Z',
};
const ASSIGNMENT_ID = '01972ff0-f582-7a3c-9e41-52b8c6d0e7f3.1.1.dXNlci00Mg==.65958bf8';
const LOG_ID = '01972ff0-fa54-7d12-8b6e-0c4f9a2e31d8';
const METRICS_EXAMPLE = { latency_ms: 812, tokens: 153, cost_usd: 0.0021, rating: 5 };
const LOG_EXAMPLE = {
  variantKey: 'B',
  userId: 'user-42',
  assignmentId: ASSIGNMENT_ID,
  input: { question: 'Where is my order?' },
  output: { answer: 'It ships today.' },
  metrics: METRICS_EXAMPLE,
  context: { plan: 'pro' },
  timestamp: '2025-06-02T09:20:11.200Z',
};
const RESULT_EXAMPLE = {
  logId: LOG_ID,
  variantKey: 'B',
  knownVariant: true,
  userId: 'user-42',
  assignmentId: ASSIGNMENT_ID,
  assignedVariant: null,
  input: LOG_EXAMPLE.input,
  output: LOG_EXAMPLE.output,
  metrics: METRICS_EXAMPLE,
  context: LOG_EXAMPLE.context,
  timestamp: LOG_EXAMPLE.timestamp,
  createdAt: '2025-06-02T09:20:11.348Z',
  experimentVersion: 1,
};

/** Any JSON object; its contents are the client's. */
export const JsonObjectSchema = Type.Unsafe<JsonObject>({ type: 'object', additionalProperties: true });

export const ErrorSchema = Type.Object(
  { error: Type.String({ description: 'What is wrong, in words; never internals' }) },
  { $id: 'Error', title: 'Error', description: 'Every error answer' },
);

/** An error status as the document shows it: the one Error schema, what the status means, an example. */
function errorResponse(meaning: string, example: string) {
  return { ...ErrorSchema, 'x-response-description': meaning, examples: [{ error: example }] };
}

export const HealthResponse = Type.Object(
  { status: Type.String({ description: "'ok' from /healthz, 'ready' from /readyz" }) },
  { title: 'Health', description: 'The probe passed', examples: [{ status: 'ok' }] },
);

export const SlugParams = Type.Object({
  slug: Type.String({ maxLength: 1000, description: "The experiment's slug", examples: ['checkout-prompt'] }),
});

const StatusSchema = Type.Enum([...STATUSES], {
  type: 'string',
  description: 'draft → running; running ↔ paused; running/paused → completed; any → archived',
});
const AssignmentModeSchema = Type.Enum([...ASSIGNMENT_MODES], {
  type: 'string',
  description: "'random' (default): an independent weighted draw per call; 'sticky': hash of seed + userId",
});

export const VariantSchema = Type.Object(
  {
    key: Type.String({ description: 'A-Z a-z 0-9 . _ -, 1-64 characters, unique in the experiment' }),
    payload: Type.Unsafe<JsonObject>({
      type: 'object',
      additionalProperties: true,
      description: 'What the agent runs for this variant (a prompt, a model config): any JSON object',
    }),
    trafficPercent: Type.Number({ description: 'Share of traffic in [0, 100]; all variants sum to 100' }),
  },
  { title: 'Variant', description: 'One arm of an experiment', examples: [VARIANT_A] },
);

export const MetricDefinitionSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'The name results log the metric under' }),
    direction: Type.Enum(['increase', 'decrease'], { type: 'string', description: 'Which way is better' }),
    role: Type.Optional(
      Type.Enum(['primary', 'secondary', 'guardrail'], {
        type: 'string',
        description:
          "primary: decides the verdict (the first one declared); guardrail: must not get worse by more than its threshold, kept out of corrections; default 'secondary'",
      }),
    ),
    kind: Type.Optional(
      Type.Enum(['mean', 'proportion'], {
        type: 'string',
        description: 'Numbers are means, true/false proportions',
      }),
    ),
    minimumDetectableEffect: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 10,
        description:
          'The smallest relative change worth detecting (0.05 = 5%): the analysis says how many more units it needs',
      }),
    ),
    threshold: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 10,
        description:
          'Guardrails: the relative change in the worse direction tolerated (0.05 = at most 5% worse). ' +
          'Default 0. The guardrail passes when the whole interval is within it, fails when the whole ' +
          'interval is beyond it, and is inconclusive otherwise',
      }),
    ),
    statistic: Type.Optional(
      Type.Enum(['mean', 'p50', 'p90', 'p95', 'p99'], {
        type: 'string',
        description:
          'Numeric metrics: what the comparison, verdict and charts use: the mean (default) or a quantile ' +
          '(from write-time sketches, 1% relative accuracy)',
      }),
    ),
  },
  {
    title: 'MetricDefinition',
    description:
      'What an experiment declares about one metric: changing it changes the reading, never the data',
    examples: [{ name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.05 }],
  },
);
const MetricDefinitions = Type.Array(MetricDefinitionSchema, { maxItems: 50 });

export const ExperimentSchema = Type.Object(
  {
    slug: Type.String({ description: 'Unique; names the experiment in every URL' }),
    name: Type.String({ description: 'Default: the slug' }),
    description: Type.String(),
    status: StatusSchema,
    active: Type.Boolean({ description: "true exactly when status is 'running'" }),
    assignment: AssignmentModeSchema,
    seed: Type.String({ description: 'What sticky assignment hashes with the userId (default: the slug)' }),
    variants: Type.Array(VariantSchema),
    metrics: MetricDefinitions,
    version: Type.Integer({ description: 'Bumped whenever the variants change' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Experiment', description: 'An experiment and its variants', examples: [EXPERIMENT_EXAMPLE] },
);

export const ExperimentListResponse = Type.Object(
  {
    experiments: Type.Array(ExperimentSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description:
        'Pass back as cursor for the next page; null on the last page. A page may hold fewer than limit ' +
        'experiments (it ends before 1 MB of JSON): follow nextCursor, never count.',
    }),
  },
  {
    title: 'ExperimentList',
    description: 'A page of experiments, oldest first',
    examples: [{ experiments: [EXPERIMENT_EXAMPLE], nextCursor: null }],
  },
);

const NameSchema = Type.String({ maxLength: 200 });
const DescriptionSchema = Type.String({ maxLength: 10_000 });

export const CreateExperimentBody = Type.Object(
  {
    slug: Type.String({
      description: '1-100 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit',
    }),
    name: Type.Optional(NameSchema),
    description: Type.Optional(DescriptionSchema),
    status: Type.Optional(StatusSchema),
    assignment: Type.Optional(AssignmentModeSchema),
    seed: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    variants: Type.Array(VariantSchema, { minItems: 1, maxItems: 100 }),
    metrics: Type.Optional(MetricDefinitions),
  },
  {
    examples: [
      {
        slug: 'checkout-prompt',
        name: 'Checkout prompt',
        status: 'running',
        variants: [VARIANT_A, VARIANT_B],
      },
    ],
  },
);

export const UpdateExperimentBody = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    variants: Type.Optional(Type.Array(VariantSchema, { minItems: 1, maxItems: 100 })),
    metrics: Type.Optional(MetricDefinitions),
    name: Type.Optional(NameSchema),
    description: Type.Optional(DescriptionSchema),
  },
  { minProperties: 1, examples: [{ description: 'Does a concise prompt answer as well, for less?' }] },
);

export const ListExperimentsQuery = Type.Object({
  status: Type.Optional(StatusSchema),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 50,
      description:
        'Experiments per page at most; a page also ends before its JSON passes 1 MB (at least one)',
      examples: [20],
    }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: "The previous page's nextCursor", examples: ['ZTo1MA'] }),
  ),
});

const UserId = Type.String({ minLength: 1, maxLength: 512 });

/**
 * An assignment id carries its user in base64: 512 characters of 4 UTF-8 bytes each make 2,732, plus
 * the UUID, version, variant and check (core/assignment-id.ts).
 */
export const MAX_ASSIGNMENT_ID = 2800;

export const AssignBody = Type.Object(
  {
    userId: UserId,
    context: Type.Optional(JsonObjectSchema),
  },
  { examples: [{ userId: 'user-42', context: { plan: 'pro' } }] },
);

export const AssignResponse = Type.Object(
  {
    variant: Type.String({ description: "The assigned variant's key" }),
    payload: Type.Unsafe<JsonObject>({
      type: 'object',
      additionalProperties: true,
      description: "The assigned variant's payload, as stored",
    }),
    assignmentId: Type.String({
      description: 'UUIDv7; send it back with log to join the result to this exposure',
    }),
  },
  {
    title: 'Assignment',
    description: 'The variant this user gets now, and the id of this exposure',
    examples: [{ variant: 'B', payload: VARIANT_B.payload, assignmentId: ASSIGNMENT_ID }],
  },
);

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
    description: 'A page of results, oldest first',
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
        'logId,variantKey,userId,assignmentId,experimentVersion,timestamp,createdAt,input,output,metrics,context\r\n' +
        `${LOG_ID},B,user-42,${ASSIGNMENT_ID},1,2025-06-02T09:20:11.200Z,2025-06-02T09:20:11.348Z,` +
        '"{""question"":""Where is my order?""}","{""answer"":""It ships today.""}",' +
        '"{""latency_ms"":812,""tokens"":153,""cost_usd"":0.0021,""rating"":5}","{""plan"":""pro""}"\r\n',
    },
  },
};

/** The error responses every keyed route may give, for the OpenAPI document. */
export const errorResponses = {
  400: errorResponse(
    'The request (body, query string or path) is not valid',
    'body/variants/0/trafficPercent must be number',
  ),
  401: errorResponse('The x-api-key header is missing or wrong', 'Unauthorized'),
  403: errorResponse(
    'The key lacks the scope this route needs, or is limited to other experiments',
    "this key lacks the 'log' scope (it has: 'assign')",
  ),
  404: errorResponse('No such experiment (or route)', "no experiment with slug 'checkout-prompt'"),
  429: errorResponse(
    'Over the rate limit: retry after the Retry-After header (RateLimit and RateLimit-Policy say the limit)',
    'rate limit exceeded: this key may make 100 requests per second; retry in 1 s',
  ),
  500: errorResponse('Unexpected; the details are in the server log', 'Internal Server Error'),
};

/** 409, for the routes that change an experiment: `example` is this route's conflict. */
export function conflictResponse(example: string) {
  return errorResponse("Conflicts with the experiment's current state", example);
}

/** 503, when the database does not answer. */
export const unavailableResponse = errorResponse(
  'The database does not answer; retry',
  'the database is unreachable',
);

type Json = Record<string, unknown>;

function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Where a schema holds subschemas; every other keyword's value is data (examples, enum, default), whose
// objects may well have a `title` of their own and must be left alone.
const SUBSCHEMA = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'];
const SUBSCHEMA_LISTS = ['items', 'prefixItems', 'anyOf', 'oneOf', 'allOf'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties'];

/** `schema` with every titled schema in it, itself included, moved to `named` and referenced. */
function referenceTitled(schema: unknown, named: Json): unknown {
  if (!isJsonObject(schema)) return schema;
  const out: Json = { ...schema };
  for (const k of SUBSCHEMA) if (isJsonObject(out[k])) out[k] = referenceTitled(out[k], named);
  for (const k of SUBSCHEMA_LISTS) {
    const list = out[k];
    if (Array.isArray(list)) out[k] = list.map((s) => referenceTitled(s, named));
  }
  for (const k of SUBSCHEMA_MAPS) {
    const map = out[k];
    if (isJsonObject(map)) {
      out[k] = Object.fromEntries(Object.entries(map).map(([n, s]) => [n, referenceTitled(s, named)]));
    }
  }
  if (typeof out.title !== 'string') return out;
  const name = out.title;
  const seen = named[name];
  if (seen === undefined) {
    named[name] = out;
  } else {
    // The same schema is converted once per use: where it is a whole body its example moved to the
    // media type, where nested it kept it. Anything else differing is two schemas sharing a title.
    const { example: seenExample, ...seenRest } = seen as Json;
    const { example, ...rest } = out;
    if (!isDeepStrictEqual(seenRest, rest)) throw new Error(`two different schemas are titled '${name}'`);
    if (seenExample === undefined && example !== undefined) (seen as Json).example = example;
  }
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * @fastify/swagger's transformObject: every schema with a title in a request or response body becomes
 * components.schemas[title], referenced where it was. The route schemas keep their schemas inline, so
 * validation and serialization are untouched. Parameters are left inline (their schemas lose their
 * descriptions to the parameter, so copies would differ, and Swagger UI shows them better inline).
 */
export function nameSchemas<T extends object>(document: T): T {
  const doc = document as Json;
  const components = (isJsonObject(doc.components) ? doc.components : {}) as Json;
  const named: Json = {};
  const paths = isJsonObject(doc.paths) ? doc.paths : {};
  for (const item of Object.values(paths)) {
    if (!isJsonObject(item)) continue;
    for (const operation of Object.values(item)) {
      if (!isJsonObject(operation)) continue;
      const bodies = [
        (operation.requestBody as Json | undefined)?.content,
        ...Object.values((operation.responses as Json | undefined) ?? {}).map((r) => (r as Json).content),
      ];
      for (const content of bodies) {
        if (!isJsonObject(content)) continue;
        for (const media of Object.values(content)) {
          if (isJsonObject(media) && 'schema' in media) media.schema = referenceTitled(media.schema, named);
        }
      }
    }
  }
  const schemas = isJsonObject(components.schemas) ? components.schemas : {};
  for (const name of Object.keys(named)) {
    if (Object.hasOwn(schemas, name)) throw new Error(`components.schemas already has '${name}'`);
  }
  return { ...doc, components: { ...components, schemas: { ...schemas, ...named } } } as T;
}
