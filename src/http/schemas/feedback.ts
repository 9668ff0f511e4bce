// The schemas of POST /feedback (issue 26): feedback for many experiments at once. Each item is the
// single route's body (FeedbackBody) plus the experiment it is for, and is checked on its own: an item
// that does not fit is rejected by its index, never the whole request.
import { Type } from 'typebox';
import { ASSIGNMENT_ID, LOG_ID } from './examples.js';
import { FeedbackBody } from './results.js';

/** Most items in one request, as for POST /experiment/:slug/logs. */
export const MAX_FEEDBACK_ITEMS = 1000;

export const FeedbackItem = Type.Object(
  {
    experiment: Type.String({
      minLength: 1,
      maxLength: 1000,
      description: "The experiment's slug (the single route's path parameter)",
    }),
    ...FeedbackBody.properties,
  },
  {
    title: 'FeedbackItem',
    description:
      "One item of POST /feedback: the experiment, then exactly the single route's body, checked and upserted the same way",
    examples: [{ experiment: 'checkout-prompt', assignmentId: ASSIGNMENT_ID, metrics: { thumbs_up: true } }],
  },
);

export const FeedbackBatchBody = Type.Object(
  {
    feedback: Type.Array(
      // Any value passes the envelope; the handler checks each against FeedbackItem and rejects the
      // ones that fail by their index (the anyOf shows the documented shape).
      Type.Unsafe<unknown>({
        anyOf: [FeedbackItem, {}],
        description: 'A FeedbackItem; one that is not is rejected by its index, the others still count',
      }),
      { minItems: 1, maxItems: MAX_FEEDBACK_ITEMS },
    ),
  },
  {
    examples: [
      {
        feedback: [
          { experiment: 'checkout-prompt', assignmentId: ASSIGNMENT_ID, metrics: { rating: 4 } },
          {
            experiment: 'support-agent',
            logId: LOG_ID,
            metrics: { thumbs_up: false },
            comment: 'wrong order id',
          },
        ],
      },
    ],
  },
);

export const FeedbackBatchResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'Always true: every accepted item is committed' }),
    accepted: Type.Integer({ description: 'How many items are committed (all those not rejected)' }),
    rejected: Type.Array(
      Type.Object({
        index: Type.Integer({ description: "The item's position in `feedback`, from 0" }),
        error: Type.String({
          description: 'Why it was not taken: what its single request would have answered',
        }),
      }),
      { description: 'The items not taken, in order; empty when all were' },
    ),
  },
  {
    title: 'FeedbackBatchResponse',
    description: 'The accepted items are committed (with the Idempotency-Key answer, if one was sent)',
    examples: [
      {
        success: true,
        accepted: 1,
        rejected: [
          {
            index: 1,
            error:
              "experiment 'support-agent' has no result with logId '01972ff0-fa54-7d12-8b6e-0c4f9a2e31d8'",
          },
        ],
      },
    ],
  },
);
