// The schemas of assign: the user to assign, the variant assigned and the exposure's id.
import { Type } from 'typebox';
import type { JsonObject } from '../../core/json.js';
import { JsonObjectSchema } from './common.js';
import { ASSIGNMENT_ID, VARIANT_B } from './examples.js';

export const UserId = Type.String({ minLength: 1, maxLength: 512 });

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
    inExperiment: Type.Boolean({
      description:
        "False when the unit did not enter (an override, the layer, targeting or coverage): served the default (or the override's) variant, no exposure recorded, its results never analysed",
    }),
    reason: Type.Optional(
      Type.Enum(['override', 'layer', 'targeting', 'coverage'], {
        type: 'string',
        description: 'Why the unit did not enter (absent when it entered)',
      }),
    ),
  },
  {
    title: 'Assignment',
    description: 'The variant this user gets now, and the id of this exposure',
    examples: [{ variant: 'B', payload: VARIANT_B.payload, assignmentId: ASSIGNMENT_ID, inExperiment: true }],
  },
);
