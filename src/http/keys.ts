// Routes for managing API keys (admin, every experiment): create (the secret shown once), list, revoke;
// and who am I (any key that can read), which the dashboard asks to show or hide its edit controls.
import Type from 'typebox';
import { NotFoundError } from '../core/errors.js';
import { type Principal, ROOT, SCOPES } from '../core/keys.js';
import { DEFAULT_KEY_PAGE, type KeyService } from '../services/keys.js';
import { type Route, route } from './route.js';
import { errorResponses } from './schemas/common.js';

const SCOPE_DESCRIPTION =
  "'assign' (POST assign), 'log' (POST log and logs), 'read' (every GET: experiments, results, " +
  "exports, analyses, metrics), 'admin' (everything, including experiments and keys)";

const KEY_EXAMPLE = {
  id: '01934f6e-7a1c-7c3e-9d2a-5b8e0f4c2a11',
  name: 'support-agent',
  scopes: ['assign', 'log'],
  experiments: ['checkout-prompt'],
  prefix: 'ask_Qm9vZ3Jh',
  rateLimitPerSecond: null,
  createdAt: '2025-06-02T09:00:00.000Z',
  lastUsedAt: null,
};

const keyProperties = {
  id: Type.String({ description: 'Names the key in DELETE /keys/:id' }),
  name: Type.String(),
  scopes: Type.Array(Type.String(), { description: SCOPE_DESCRIPTION }),
  experiments: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'The slugs the key may touch; null: every experiment',
  }),
  prefix: Type.String({ description: "The key's first characters, to tell keys apart" }),
  rateLimitPerSecond: Type.Union([Type.Integer(), Type.Null()], {
    description: "Requests per second; null: the service's RATE_LIMIT_PER_SECOND",
  }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Last request made with it (written every few seconds)',
  }),
};

export const ApiKeySchema = Type.Object(keyProperties, {
  title: 'ApiKey',
  description: 'A key, without its secret',
  examples: [KEY_EXAMPLE],
});

const CreatedKeySchema = Type.Object(
  {
    ...keyProperties,
    key: Type.String({
      description: 'The secret, sent as x-api-key. Shown only in this answer: store it now',
    }),
  },
  {
    title: 'CreatedApiKey',
    description: 'The new key, with its secret (shown once)',
    examples: [{ ...KEY_EXAMPLE, key: 'ask_Qm9vZ3JhbW1lZC1ieS1hZ2VudHNwbGl0LWtleS1leGFtcGxl' }],
  },
);

const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Who holds it, e.g. the agent' }),
    scopes: Type.Array(Type.String(), { minItems: 1, maxItems: 4, description: SCOPE_DESCRIPTION }),
    experiments: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), {
        minItems: 1,
        maxItems: 1000,
        description: 'Limit the key to these slugs (default: every experiment)',
      }),
    ),
    rateLimitPerSecond: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description: 'Overrides RATE_LIMIT_PER_SECOND for this key',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'support-agent', scopes: ['assign', 'log'], experiments: ['checkout-prompt'] }],
  },
);

const MeSchema = Type.Object(
  {
    name: Type.String({ description: "'root' for API_KEY, else the key's name" }),
    scopes: Type.Array(Type.String(), { description: `What the key may do: ${SCOPE_DESCRIPTION}` }),
    experiments: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'The slugs the key may touch; null: every experiment',
    }),
  },
  {
    title: 'CallingKey',
    description: 'The key that made this request, without its secret',
    examples: [{ name: 'dashboard-viewer', scopes: ['read'], experiments: null }],
  },
);

const ListKeysQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: DEFAULT_KEY_PAGE,
      description: 'Keys per page',
      examples: [20],
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      maxLength: 200,
      description: "The previous page's nextCursor",
      examples: ['azoxNzQ4ODU0ODAwMDAwLjAxOTM0ZjZlLTdhMWMtN2MzZS05ZDJhLTViOGUwZjRjMmExMQ'],
    }),
  ),
});

/**
 * The calling key's name, scopes and experiments (the root key: every scope, every experiment), from
 * the key table the edge authenticated it against: no store read, whatever the number of keys.
 */
function describeCaller(keys: KeyService, principal: Principal) {
  const experiments = principal.experiments === null ? null : [...principal.experiments].sort();
  const scopes = SCOPES.filter((s) => principal.scopes.has(s));
  if (principal === ROOT) return { name: 'root', scopes, experiments };
  const key = keys.find(principal.id);
  // Revoked between authentication and this line.
  if (key === undefined) throw new NotFoundError('this key was revoked');
  return { name: key.name, scopes, experiments };
}

const KeyParams = Type.Object({ id: Type.String({ maxLength: 100, description: "The key's id" }) });

export function keyRoutes(keys: KeyService): Route[] {
  const tags = ['keys'];
  return [
    route({
      method: 'POST',
      url: '/keys',
      scope: 'admin',
      everyExperiment: true,
      status: 201,
      schema: {
        tags,
        summary: 'Create an API key with scopes (the secret is shown once)',
        description: `Scopes: ${SCOPES.join(', ')}. ${SCOPE_DESCRIPTION}.`,
        body: CreateKeyBody,
        response: { 201: CreatedKeySchema, ...errorResponses },
      },
      handle: ({ body, principal }) => keys.create(body, keys.actorOf(principal)),
    }),
    route({
      method: 'GET',
      url: '/keys',
      scope: 'admin',
      everyExperiment: true,
      schema: {
        tags,
        summary: 'List the keys that are not revoked, oldest first, a page at a time (never their secrets)',
        querystring: ListKeysQuery,
        response: {
          200: Type.Object(
            {
              keys: Type.Array(ApiKeySchema),
              nextCursor: Type.Union([Type.String(), Type.Null()], {
                description: 'Pass back as cursor for the next page; null on the last page',
              }),
            },
            {
              title: 'ApiKeyList',
              description: 'A page of keys, oldest first',
              examples: [{ keys: [KEY_EXAMPLE], nextCursor: null }],
            },
          ),
          400: errorResponses[400],
          401: errorResponses[401],
          403: errorResponses[403],
        },
      },
      handle: ({ query }) => keys.list(query),
    }),
    route({
      method: 'GET',
      url: '/keys/me',
      scope: 'read',
      schema: {
        tags,
        summary: 'The calling key: its name, scopes and experiments (never its secret)',
        response: { 200: MeSchema, 401: errorResponses[401], 403: errorResponses[403] },
      },
      handle: ({ principal }) => describeCaller(keys, principal),
    }),
    route({
      method: 'DELETE',
      url: '/keys/:id',
      scope: 'admin',
      everyExperiment: true,
      status: 204,
      schema: {
        tags,
        summary: 'Revoke a key (every instance refuses it within a second)',
        params: KeyParams,
        response: { 204: { type: 'null', description: 'Revoked' }, ...errorResponses },
      },
      handle: async ({ params, principal }) => {
        await keys.revoke(params.id, keys.actorOf(principal));
        return undefined;
      },
    }),
  ];
}
