// What every route's schemas share: the error answers, the slug in the path, the probes' answer, any
// JSON object. A schema with a `title` is one of the OpenAPI document's named schemas
// (components.schemas, see openapi.ts); `examples` become the document's examples. Neither keyword
// changes validation or serialization.
import { Type } from 'typebox';
import type { JsonObject } from '../../core/json.js';

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
