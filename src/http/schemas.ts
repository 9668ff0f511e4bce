// Route schemas (TypeBox): they validate requests, serialize responses and generate the OpenAPI document.
import { type Static, Type } from 'typebox';
import { ASSIGNMENT_MODES, STATUSES } from '../core/experiment.js';
import type { JsonObject } from '../core/json.js';

/** Any JSON object; its contents are the client's. */
export const JsonObjectSchema = Type.Unsafe<JsonObject>({ type: 'object', additionalProperties: true });

export const ErrorSchema = Type.Object({ error: Type.String() }, { $id: 'Error' });

export const HealthResponse = Type.Object({ status: Type.String() });

export const SlugParams = Type.Object({ slug: Type.String({ maxLength: 1000 }) });

const StatusSchema = Type.Enum([...STATUSES], {
  type: 'string',
  description: 'draft → running; running ↔ paused; running/paused → completed; any → archived',
});
const AssignmentModeSchema = Type.Enum([...ASSIGNMENT_MODES], {
  type: 'string',
  description: "'random' (default): an independent weighted draw per call; 'sticky': hash of seed + userId",
});

export const VariantSchema = Type.Object({
  key: Type.String({ description: 'A-Z a-z 0-9 . _ -, 1-64 characters, unique in the experiment' }),
  payload: JsonObjectSchema,
  trafficPercent: Type.Number({ description: 'Share of traffic in [0, 100]; all variants sum to 100' }),
});

export const ExperimentSchema = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  status: StatusSchema,
  active: Type.Boolean({ description: "true exactly when status is 'running'" }),
  assignment: AssignmentModeSchema,
  seed: Type.String(),
  variants: Type.Array(VariantSchema),
  version: Type.Integer({ description: 'Bumped whenever the variants change' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const NameSchema = Type.String({ maxLength: 200 });
const DescriptionSchema = Type.String({ maxLength: 10_000 });

export const CreateExperimentBody = Type.Object({
  slug: Type.String({
    description: '1-100 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit',
  }),
  name: Type.Optional(NameSchema),
  description: Type.Optional(DescriptionSchema),
  status: Type.Optional(StatusSchema),
  assignment: Type.Optional(AssignmentModeSchema),
  seed: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  variants: Type.Array(VariantSchema, { minItems: 1, maxItems: 100 }),
});

export const UpdateExperimentBody = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    variants: Type.Optional(Type.Array(VariantSchema, { minItems: 1, maxItems: 100 })),
    name: Type.Optional(NameSchema),
    description: Type.Optional(DescriptionSchema),
  },
  { minProperties: 1 },
);

export const ListExperimentsQuery = Type.Object({ status: Type.Optional(StatusSchema) });

const UserId = Type.String({ minLength: 1, maxLength: 512 });

export const AssignBody = Type.Object({
  userId: UserId,
  context: Type.Optional(JsonObjectSchema),
});

export const AssignResponse = Type.Object({
  variant: Type.String(),
  payload: JsonObjectSchema,
  assignmentId: Type.String({
    description: 'UUIDv7; send it back with log to join the result to this exposure',
  }),
});

/** Each metric name becomes a rollup row per variant and version: bounded, so analysis stays instant. */
export const MAX_METRICS_PER_RESULT = 256;

export const LogBody = Type.Object({
  variantKey: Type.String({ minLength: 1, maxLength: 256 }),
  input: Type.Optional(JsonObjectSchema),
  output: Type.Optional(JsonObjectSchema),
  metrics: Type.Optional(
    Type.Unsafe<JsonObject>({
      type: 'object',
      additionalProperties: true,
      maxProperties: MAX_METRICS_PER_RESULT,
      description: `Up to ${MAX_METRICS_PER_RESULT} named values; numbers are analysed as means, true/false as proportions`,
    }),
  ),
  context: Type.Optional(JsonObjectSchema),
  userId: Type.Optional(UserId),
  assignmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'Client time, ISO 8601' })),
});
export type LogBody = Static<typeof LogBody>;

export const LogResponse = Type.Object({
  success: Type.Boolean(),
  logId: Type.String(),
  warning: Type.Optional(Type.String()),
});

export const LogManyBody = Type.Object({ results: Type.Array(LogBody, { minItems: 1, maxItems: 1000 }) });

export const LogManyResponse = Type.Object({
  success: Type.Boolean(),
  logIds: Type.Array(Type.String()),
  warnings: Type.Optional(Type.Array(Type.String())),
});

export const ResultSchema = Type.Object({
  logId: Type.String(),
  variantKey: Type.String(),
  userId: Type.Union([Type.String(), Type.Null()]),
  assignmentId: Type.Union([Type.String(), Type.Null()]),
  input: Type.Union([JsonObjectSchema, Type.Null()]),
  output: Type.Union([JsonObjectSchema, Type.Null()]),
  metrics: Type.Union([JsonObjectSchema, Type.Null()]),
  context: Type.Union([JsonObjectSchema, Type.Null()]),
  timestamp: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  experimentVersion: Type.Integer(),
});

export const ListResultsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  variant: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'createdAt >= since' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'createdAt < until' })),
});

export const ListResultsResponse = Type.Object({
  results: Type.Array(ResultSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const ExportQuery = Type.Object({
  format: Type.Optional(Type.Enum(['ndjson', 'csv'], { type: 'string', default: 'ndjson' })),
});

/** The error responses every keyed route may give, for the OpenAPI document. */
export const errorResponses = {
  400: ErrorSchema,
  401: ErrorSchema,
  404: ErrorSchema,
  500: ErrorSchema,
};
