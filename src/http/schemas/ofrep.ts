// The schemas of OpenFeature's remote evaluation (OFREP 0.3.0, open-feature/protocol service/openapi.yaml):
// its field names, reasons and error codes, plus the `error` field every 4xx of this API carries.
import { Type } from 'typebox';
import type { JsonObject } from '../../core/json.js';
import { JsonObjectSchema } from './common.js';
import { ASSIGNMENT_ID, VARIANT_B } from './examples.js';

/** Both ways of presenting a key: x-api-key (the protocol's ApiKeyAuth) and Authorization: Bearer. */
export const OFREP_SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

const CONTEXT_EXAMPLE = { targetingKey: 'user-42', plan: 'pro' };

export const OfrepFlagParams = Type.Object({
  key: Type.String({
    maxLength: 1000,
    description: "The flag key: the experiment's slug",
    examples: ['checkout-prompt'],
  }),
});

export const OfrepRequest = Type.Object(
  {
    context: Type.Optional(
      Type.Unsafe<JsonObject>({
        ...JsonObjectSchema,
        description:
          'The evaluation context: targetingKey is the user id (required, 1-512 characters), the rest is ' +
          "the assignment's context (segments, stored with the exposure)",
      }),
    ),
  },
  {
    title: 'OfrepEvaluationRequest',
    description: 'An OFREP evaluation request',
    examples: [{ context: CONTEXT_EXAMPLE }],
  },
);

const EVALUATION = {
  key: 'checkout-prompt',
  reason: 'SPLIT',
  variant: 'B',
  value: VARIANT_B.payload,
  metadata: { experimentVersion: 1, assignmentId: ASSIGNMENT_ID, inExperiment: true },
};

export const OfrepEvaluation = Type.Object(
  {
    key: Type.String({ description: "The flag key (the experiment's slug)" }),
    reason: Type.Enum(['SPLIT', 'TARGETING_MATCH', 'DEFAULT'], {
      type: 'string',
      description:
        'SPLIT: the unit entered and the variant was drawn; TARGETING_MATCH: a QA override served it; DEFAULT: the unit did not enter (layer, targeting or coverage) and gets the default variant',
    }),
    variant: Type.String({ description: "The variant's key" }),
    value: Type.Unsafe<JsonObject>({
      type: 'object',
      additionalProperties: true,
      description: "The variant's payload (an object: read it with getObjectValue)",
    }),
    metadata: Type.Object({
      experimentVersion: Type.Integer({ description: 'The experiment version the variant was drawn under' }),
      assignmentId: Type.String({
        description:
          'Send it with log or feedback. Single evaluation: the exposure is recorded. Bulk: post it to ' +
          'POST /exposures when the flag is first read',
      }),
      inExperiment: Type.Boolean({ description: 'False when the unit did not enter: never analysed' }),
      entryReason: Type.Optional(
        Type.Enum(['override', 'layer', 'targeting', 'coverage'], {
          type: 'string',
          description: 'Why the unit did not enter (absent when it entered)',
        }),
      ),
    }),
  },
  {
    title: 'OfrepEvaluation',
    description: 'One flag evaluated (OFREP evaluationSuccess)',
    examples: [EVALUATION],
  },
);

export const OfrepBulkEvaluation = Type.Object(
  { flags: Type.Array(OfrepEvaluation, { description: 'Every running experiment the key may see, by key' }) },
  {
    title: 'OfrepBulkEvaluation',
    description: 'Every flag evaluated (OFREP bulkEvaluationSuccess); no exposure recorded',
    examples: [{ flags: [EVALUATION] }],
  },
);

const failureFields = {
  errorCode: Type.String({
    enum: ['PARSE_ERROR', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT', 'GENERAL'],
    description: 'An OpenFeature error code',
  }),
  errorDetails: Type.String({ description: 'What is wrong, in words' }),
  error: Type.String({ description: 'The same words (every 4xx of this API has an error field)' }),
};

export const OfrepFailure = Type.Object(
  { key: Type.String({ description: 'The flag key' }), ...failureFields },
  {
    title: 'OfrepEvaluationFailure',
    description: 'The request cannot be evaluated (OFREP evaluationFailure)',
    examples: [
      {
        key: 'checkout-prompt',
        errorCode: 'TARGETING_KEY_MISSING',
        errorDetails: 'context.targetingKey (the user id) is missing',
        error: 'context.targetingKey (the user id) is missing',
      },
    ],
  },
);

export const OfrepBulkFailure = Type.Object(failureFields, {
  title: 'OfrepBulkEvaluationFailure',
  description: 'The request cannot be evaluated (OFREP bulkEvaluationFailure)',
  examples: [
    {
      errorCode: 'INVALID_CONTEXT',
      errorDetails: 'body/context must be object',
      error: 'body/context must be object',
    },
  ],
});

const NOT_FOUND =
  "experiment 'checkout-prompt' is paused: only a running or released experiment serves assignments";

export const OfrepFlagNotFound = Type.Object(
  {
    key: Type.String({ description: 'The flag key' }),
    errorCode: Type.Literal('FLAG_NOT_FOUND'),
    errorDetails: Type.String({ description: 'Which: no such experiment, or its status when not running' }),
    error: Type.String({ description: 'The same words' }),
  },
  {
    title: 'OfrepFlagNotFound',
    description: 'No running experiment with this slug: the provider answers the code default',
    examples: [
      { key: 'checkout-prompt', errorCode: 'FLAG_NOT_FOUND', errorDetails: NOT_FOUND, error: NOT_FOUND },
    ],
  },
);
