// Routes for webhooks (issue 27 item 3; scope admin, keys for every experiment only): endpoints (the
// signing secret shown once, at creation), a test event, and each endpoint's deliveries.
import Type from 'typebox';
import type { Actor } from '../core/events.js';
import type { Principal } from '../core/keys.js';
import { WEBHOOK_FORMATS } from '../core/webhooks.js';
import {
  DEFAULT_ROTATION_GRACE_SECONDS,
  DELIVERY_PAGE,
  MAX_ROTATION_GRACE_SECONDS,
  type WebhookService,
} from '../services/webhooks.js';
import { type Route, route } from './route.js';
import { conflictResponse, errorResponses } from './schemas/common.js';

const WEBHOOK_EXAMPLE = {
  id: '019ac1f2-5b3e-7c41-9a2d-3f8e0b6c4d21',
  url: 'https://hooks.example.com/agentsplit',
  events: ['experiment.*', 'guardrail.failed'],
  description: 'release channel',
  format: 'standard',
  enabled: true,
  createdAt: '2025-06-02T09:00:00.000Z',
  updatedAt: '2025-06-02T09:00:00.000Z',
  previousSecretUntil: null,
  lastDeliveryAt: '2025-06-02T09:05:00.000Z',
  lastStatus: 'failing',
  lastError: 'getaddrinfo ENOTFOUND hooks.example.com',
};

const EVENTS_DESCRIPTION =
  "Event types to deliver: a type (experiment.status_changed), a prefix (experiment.*), or '*' for every event";
const FORMAT_DESCRIPTION =
  "'standard': Standard Webhooks, signed ({type, timestamp, data}); 'slack': {\"text\": a sentence}, for a Slack incoming webhook";

const Url = Type.String({ minLength: 1, maxLength: 2000, description: 'http or https only' });
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
  minItems: 1,
  maxItems: 100,
  description: EVENTS_DESCRIPTION,
});
const Format = Type.Union(
  WEBHOOK_FORMATS.map((f) => Type.Literal(f)),
  { description: FORMAT_DESCRIPTION },
);
const Description = Type.String({ maxLength: 1000 });

const webhookProperties = {
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String(), { description: EVENTS_DESCRIPTION }),
  description: Type.Union([Type.String(), Type.Null()]),
  format: Type.String({ description: FORMAT_DESCRIPTION }),
  enabled: Type.Boolean({
    description:
      'False once the endpoint answered 410 Gone, or PATCH disabled it: no new deliveries are queued for it, and those already queued wait (unattempted) until it is enabled again',
  }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  previousSecretUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      'Until when the secret the last rotation replaced still signs deliveries, beside the current one (null: never rotated, or rotated with no grace)',
  }),
  lastDeliveryAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the last attempt to this endpoint ended (null: none yet)',
  }),
  lastStatus: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Null()], {
    description: "'ok': the last attempt was answered 2xx; 'failing': it was not; null: none yet",
  }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description:
      "Why the last attempt failed, in words ('getaddrinfo ENOTFOUND host', 'connection refused (…)', 'no answer within 10 s', 'HTTP 500'); null when it succeeded",
  }),
};

const WebhookSchema = Type.Object(webhookProperties, {
  title: 'Webhook',
  description: 'An endpoint, without its secret',
  examples: [WEBHOOK_EXAMPLE],
});

const CreatedWebhookSchema = Type.Object(
  {
    ...webhookProperties,
    secret: Type.String({
      description: 'The signing secret (whsec_…), for verifying webhook-signature. Shown only in this answer',
    }),
  },
  {
    title: 'CreatedWebhook',
    description: 'The new endpoint, with its signing secret (shown once)',
    examples: [{ ...WEBHOOK_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }],
  },
);

const CreateBody = Type.Object(
  {
    url: Url,
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    format: Type.Optional(Format),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'false: created disabled' })),
  },
  {
    additionalProperties: false,
    examples: [{ url: 'https://hooks.example.com/agentsplit', events: ['experiment.*'] }],
  },
);

const PatchBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    format: Type.Optional(Format),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'false: no new deliveries, queued ones wait; true: enables it again (also after a 410), queued ones are sent',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ enabled: true }] },
);

const DeliverySchema = Type.Object(
  {
    eventId: Type.String({ description: 'The event id, sent as webhook-id on every attempt' }),
    type: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Integer(),
    lastResponseStatus: Type.Union([Type.Integer(), Type.Null()], {
      description: "The last attempt's HTTP status; null: none yet, or no answer (refused, timed out)",
    }),
    lastError: Type.Union([Type.String(), Type.Null()], {
      description:
        "Why the last attempt failed, in words ('getaddrinfo ENOTFOUND host', 'connection refused (…)', 'no answer within 10 s', a TLS error, 'HTTP 500'); null: no attempt yet, or delivered",
    }),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'WebhookDelivery', description: "One event's delivery to one endpoint" },
);

const DELIVERY_EXAMPLE = {
  eventId: '019ac1f2-5b3e-7c41-9a2d-3f8e0b6c4d21',
  type: 'experiment.status_changed',
  status: 'pending',
  attempts: 2,
  lastResponseStatus: 503,
  lastError: 'HTTP 503',
  nextAttemptAt: '2025-06-02T14:32:05.000Z',
  deliveredAt: null,
};

const IdParams = Type.Object({ id: Type.String({ maxLength: 100, description: "The webhook's id" }) });
const DeliveryParams = Type.Object({
  id: Type.String({ maxLength: 100, description: "The webhook's id" }),
  eventId: Type.String({ maxLength: 100, description: 'The event id (webhook-id) of the delivery' }),
});
const RotateQuery = Type.Object({
  graceSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_ROTATION_GRACE_SECONDS,
      default: DEFAULT_ROTATION_GRACE_SECONDS,
      description: `How long the replaced secret keeps signing beside the new one (default ${DEFAULT_ROTATION_GRACE_SECONDS}: 24 h; 0: stops at once)`,
    }),
  ),
});

export function webhookRoutes(webhooks: WebhookService, actorOf: (p: Principal) => Actor): Route[] {
  const tags = ['webhooks'];
  const admin = { scope: 'admin', everyExperiment: true } as const;
  return [
    route({
      method: 'POST',
      url: '/webhooks',
      ...admin,
      status: 201,
      schema: {
        tags,
        summary: 'Add an endpoint that is sent events (the signing secret is shown once)',
        body: CreateBody,
        response: { 201: CreatedWebhookSchema, ...errorResponses },
      },
      handle: ({ body, principal }) => webhooks.create(body, actorOf(principal)),
    }),
    route({
      method: 'GET',
      url: '/webhooks',
      ...admin,
      schema: {
        tags,
        summary: 'List the endpoints, oldest first (never their secrets)',
        response: {
          200: Type.Object(
            { webhooks: Type.Array(WebhookSchema) },
            { title: 'WebhookList', examples: [{ webhooks: [WEBHOOK_EXAMPLE] }] },
          ),
          ...errorResponses,
        },
      },
      handle: () => webhooks.list(),
    }),
    route({
      method: 'GET',
      url: '/webhooks/:id',
      ...admin,
      schema: {
        tags,
        summary: 'One endpoint (never its secret)',
        params: IdParams,
        response: { 200: WebhookSchema, ...errorResponses },
      },
      handle: ({ params }) => webhooks.get(params.id),
    }),
    route({
      method: 'PATCH',
      url: '/webhooks/:id',
      ...admin,
      schema: {
        tags,
        summary: "Change an endpoint's URL, events, description, format, or disable/enable it",
        params: IdParams,
        body: PatchBody,
        response: { 200: WebhookSchema, ...errorResponses },
      },
      handle: ({ params, body, principal }) => webhooks.update(params.id, body, actorOf(principal)),
    }),
    route({
      method: 'DELETE',
      url: '/webhooks/:id',
      ...admin,
      status: 204,
      schema: {
        tags,
        summary: 'Delete an endpoint and its deliveries',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses },
      },
      handle: async ({ params, principal }) => {
        await webhooks.remove(params.id, actorOf(principal));
        return undefined;
      },
    }),
    route({
      method: 'POST',
      url: '/webhooks/:id/test',
      ...admin,
      status: 202,
      schema: {
        tags,
        summary: 'Send a webhook.test event to this endpoint only (409 while it is disabled)',
        params: IdParams,
        response: {
          202: Type.Object(
            { eventId: Type.String({ description: 'The test event, as webhook-id and in the deliveries' }) },
            { title: 'WebhookTest', examples: [{ eventId: '019ac1f2-6c4d-7e52-8b3e-4a9f1c7d5e32' }] },
          ),
          ...errorResponses,
          409: conflictResponse('this webhook is disabled; PATCH {"enabled": true} first'),
        },
      },
      handle: ({ params, principal }) => webhooks.test(params.id, actorOf(principal)),
    }),
    route({
      method: 'POST',
      url: '/webhooks/:id/secret/rotate',
      ...admin,
      schema: {
        tags,
        summary:
          'A new signing secret (shown once); the old one keeps signing beside it for the grace period (default 24 h)',
        params: IdParams,
        querystring: RotateQuery,
        response: { 200: CreatedWebhookSchema, ...errorResponses },
      },
      handle: ({ params, query, principal }) =>
        webhooks.rotateSecret(
          params.id,
          query.graceSeconds ?? DEFAULT_ROTATION_GRACE_SECONDS,
          actorOf(principal),
        ),
    }),
    route({
      method: 'POST',
      url: '/webhooks/:id/deliveries/:eventId/retry',
      ...admin,
      status: 202,
      schema: {
        tags,
        summary:
          'Send an event to this endpoint again: its delivery becomes due now, with the whole retry schedule ahead (404: no such delivery; 409: disabled, or an attempt under way)',
        params: DeliveryParams,
        response: {
          202: Type.Object(DeliverySchema.properties, {
            title: 'RetriedWebhookDelivery',
            description: 'The delivery, due now',
            examples: [
              {
                ...DELIVERY_EXAMPLE,
                status: 'pending',
                attempts: 0,
                nextAttemptAt: DELIVERY_EXAMPLE.nextAttemptAt,
              },
            ],
          }),
          ...errorResponses,
          409: conflictResponse('an attempt of this delivery is under way; retry after it'),
        },
      },
      handle: ({ params, principal }) => webhooks.retry(params.id, params.eventId, actorOf(principal)),
    }),
    route({
      method: 'GET',
      url: '/webhooks/:id/deliveries',
      ...admin,
      schema: {
        tags,
        summary: `An endpoint's deliveries, newest first (the latest ${DELIVERY_PAGE})`,
        params: IdParams,
        response: {
          200: Type.Object(
            { deliveries: Type.Array(DeliverySchema) },
            { title: 'WebhookDeliveryList', examples: [{ deliveries: [DELIVERY_EXAMPLE] }] },
          ),
          ...errorResponses,
        },
      },
      handle: ({ params }) => webhooks.deliveries(params.id),
    }),
  ];
}
