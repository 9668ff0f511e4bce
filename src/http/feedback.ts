// POST /feedback (issue 26): late feedback for many assignments or results, across experiments, in one
// request and one commit. Each item is checked as its own POST /experiment/:slug/feedback would be (the
// body's schema, the key's experiments, then the service's rules); an item that would have been refused
// is rejected by its index and the others are committed.
import type { Static } from 'typebox';
import type { Principal } from '../core/keys.js';
import type { FeedbackBatchItem, FeedbackBatchReceipt, FeedbackService } from '../services/feedback.js';
import { refusal } from './auth.js';
import { describeValidation } from './errors.js';
import { type Route, route } from './route.js';
import { errorResponses, unavailableResponse } from './schemas/common.js';
import {
  FeedbackBatchBody,
  FeedbackBatchResponse,
  FeedbackItem,
  MAX_FEEDBACK_ITEMS,
} from './schemas/feedback.js';
import { compileItemCheck } from './validation.js';

/** Batches being read, checked or committed at once; more wait unread (as for POST …/logs). */
const CONCURRENT_BATCHES = 16;

export function feedbackRoutes(feedback: FeedbackService): Route[] {
  const check = compileItemCheck(FeedbackItem);

  /** The item for the service, or why its single request would have been refused (400, then 403). */
  function item(value: unknown, index: number, principal: Principal): FeedbackBatchItem {
    const issues = check(value);
    if (issues) return { refused: describeValidation(`feedback/${index}`, issues) };
    const { experiment, ...input } = value as Static<typeof FeedbackItem>;
    // A key limited to some experiments: its items for others are refused as the single route would (403).
    const refused = refusal(principal, { scope: 'log' }, { slug: experiment });
    return refused === null ? { slug: experiment, input } : { refused };
  }

  return [
    route({
      method: 'POST',
      url: '/feedback',
      scope: 'log',
      concurrency: CONCURRENT_BATCHES,
      schema: {
        tags: ['results'],
        summary: `Send feedback on up to ${MAX_FEEDBACK_ITEMS} assignments or results at once, across experiments`,
        description:
          'Each item is POST /experiment/{slug}/feedback with the slug as `experiment`: checked and upserted ' +
          'the same way (the same metric for the same target again replaces its value). An item that request ' +
          'would refuse (not valid, an unknown experiment, assignment or result, an experiment outside the ' +
          "key's list) is rejected by its index; the others are committed together before the 200. " +
          'Only a malformed envelope (not an object, no `feedback` array, 0 or more than 1000 items) is a 400.',
        body: FeedbackBatchBody,
        response: { 200: FeedbackBatchResponse, ...errorResponses, 503: unavailableResponse },
      },
      idempotent: true,
      handle: async ({ body, principal, idempotency }) => {
        const answer = (r: FeedbackBatchReceipt) => ({ success: true, ...r });
        const items = body.feedback.map((value, index) => item(value, index, principal));
        return answer(await feedback.giveMany(items, idempotency && ((r) => idempotency(answer(r)))));
      },
    }),
  ];
}
