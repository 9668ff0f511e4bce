// Routes for the history (issue 27): one experiment's events (scope read) and the audit log of every
// change (scope admin, keys for every experiment only).
import Type from 'typebox';
import { EVENT_TYPES } from '../core/events.js';
import { DEFAULT_EVENT_PAGE, type EventService } from '../services/events.js';
import { type Route, route } from './route.js';
import { errorResponses, JsonObjectSchema, SlugParams } from './schemas/common.js';

const EVENT_EXAMPLE = {
  id: '019ac1f2-5b3e-7c41-9a2d-3f8e0b6c4d21',
  type: 'experiment.status_changed',
  at: '2025-06-02T14:02:00.000Z',
  actor: { kind: 'key', id: '01934f6e-7a1c-7c3e-9d2a-5b8e0f4c2a11', name: 'release-bot' },
  experiment: 'checkout-prompt',
  data: { from: 'running', to: 'paused' },
};

const ActorSchema = Type.Union(
  [
    Type.Object({
      kind: Type.Literal('key'),
      id: Type.String({ description: "The key's id ('root' for API_KEY)" }),
      name: Type.String({ description: "The key's name when it acted ('root' for API_KEY)" }),
    }),
    Type.Object({ kind: Type.Literal('monitor') }),
    Type.Object({ kind: Type.Literal('schedule') }),
  ],
  {
    title: 'Actor',
    description: "Who made the change: a key, the guardrail monitor, or a rollout's schedule",
  },
);

const EventSchema = Type.Object(
  {
    id: Type.String({ description: 'A UUIDv7, unique; the same id a webhook delivery carries' }),
    type: Type.String({
      description: `One of ${EVENT_TYPES.join(', ')}`,
    }),
    at: Type.String({ format: 'date-time' }),
    actor: ActorSchema,
    experiment: Type.Union([Type.String(), Type.Null()], {
      description: "The experiment's slug for experiment events; null for key events",
    }),
    data: { ...JsonObjectSchema, description: 'What changed; see the README section History' },
  },
  { title: 'Event', description: 'One change in the history', examples: [EVENT_EXAMPLE] },
);

const EventListResponse = Type.Object(
  {
    events: Type.Array(EventSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass back as cursor for the next page; null on the last page',
    }),
  },
  {
    title: 'EventList',
    description: 'A page of events, oldest first',
    examples: [{ events: [EVENT_EXAMPLE], nextCursor: null }],
  },
);

const pageProperties = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: DEFAULT_EVENT_PAGE,
      description: 'Events per page',
      examples: [20],
    }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: "The previous page's nextCursor", examples: ['aDo1MA'] }),
  ),
};

const AuditQuery = Type.Object({
  ...pageProperties,
  type: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Only this type (experiment.updated), or every type under a prefix (experiment.*)',
      examples: ['experiment.*'],
    }),
  ),
  since: Type.Optional(
    Type.String({
      maxLength: 100,
      description: 'Only events at or after this ISO 8601 time',
      examples: ['2025-06-02T00:00:00Z'],
    }),
  ),
});

export function eventRoutes(events: EventService): Route[] {
  const tags = ['history'];
  return [
    route({
      method: 'GET',
      url: '/experiment/:slug/events',
      scope: 'read',
      schema: {
        tags,
        summary:
          "An experiment's history: who changed what, oldest first, a page at a time (type= for one kind, e.g. experiment.status_changed)",
        params: SlugParams,
        querystring: AuditQuery,
        response: { 200: EventListResponse, ...errorResponses },
      },
      handle: ({ params, query }) => events.forExperiment(params.slug, query),
    }),
    route({
      method: 'GET',
      url: '/events',
      scope: 'admin',
      everyExperiment: true,
      schema: {
        tags,
        summary: 'The audit log: every change to experiments (deleted ones too) and keys, oldest first',
        querystring: AuditQuery,
        response: { 200: EventListResponse, ...errorResponses },
      },
      handle: ({ query }) => events.all(query),
    }),
  ];
}
