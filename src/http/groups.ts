// Routes for saved groups (ADR 0038): PUT (create or replace, admin), list and read (read), DELETE (admin;
// 409 while a non-archived experiment uses the group). Groups serve every experiment, so only keys for
// every experiment may call them (usedBy names experiments a limited key may not see).
import Type from 'typebox';
import type { Actor } from '../core/events.js';
import { MAX_GROUP_DESCRIPTION, MAX_GROUP_VALUE_LENGTH, MAX_GROUP_VALUES } from '../core/groups.js';
import type { Principal } from '../core/keys.js';
import type { GroupService } from '../services/groups.js';
import { type Route, route } from './route.js';
import { conflictResponse, errorResponses } from './schemas/common.js';

/** 100,000 ids of 36 characters are about 4 MB of JSON: this route reads bodies up to this size. */
export const GROUP_BODY_LIMIT = 8 * 1024 * 1024;

const SUMMARY_EXAMPLE = {
  key: 'beta-testers',
  description: 'Users who opted into the beta',
  size: 3,
  usedBy: ['checkout-prompt'],
  createdAt: '2025-06-02T09:00:00.000Z',
  updatedAt: '2025-06-03T10:30:00.000Z',
};
const GROUP_EXAMPLE = { ...SUMMARY_EXAMPLE, values: ['user-17', 'user-42', 1001] };

const VALUE_DESCRIPTION = `A unit id: a string of 1-${MAX_GROUP_VALUE_LENGTH} characters or a finite number ($inGroup compares them as they are: "7" is not 7)`;

const summaryProperties = {
  key: Type.String(),
  description: Type.String(),
  size: Type.Integer({ description: 'How many values (duplicates dropped)' }),
  usedBy: Type.Array(Type.String(), {
    description: 'Slugs of the non-archived experiments whose targeting or overrides name the group',
  }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
};

const GroupSummarySchema = Type.Object(summaryProperties, {
  title: 'SavedGroupSummary',
  description: 'A saved group without its values',
  examples: [SUMMARY_EXAMPLE],
});

const GroupSchema = Type.Object(
  {
    ...summaryProperties,
    values: Type.Array(Type.Unsafe<string | number>({ type: ['string', 'number'] }), {
      description: 'The values, in the order first sent',
    }),
  },
  { title: 'SavedGroup', description: 'A saved group with its values', examples: [GROUP_EXAMPLE] },
);

const PutBody = Type.Object(
  {
    values: Type.Array(
      Type.Unsafe<string | number>({ type: ['string', 'number'], description: VALUE_DESCRIPTION }),
      {
        maxItems: MAX_GROUP_VALUES,
        description: `Up to ${MAX_GROUP_VALUES} unit ids; duplicates are dropped. Replaces the group's values whole`,
      },
    ),
    description: Type.Optional(Type.String({ maxLength: MAX_GROUP_DESCRIPTION })),
  },
  {
    additionalProperties: false,
    examples: [{ values: ['user-17', 'user-42', 1001], description: 'Users who opted into the beta' }],
  },
);

const KeyParams = Type.Object({
  key: Type.String({
    maxLength: 100,
    description: "The group's key: 1-100 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit",
    examples: ['beta-testers'],
  }),
});

export function groupRoutes(groups: GroupService, actorOf: (p: Principal) => Actor): Route[] {
  const tags = ['groups'];
  const admin = { scope: 'admin', everyExperiment: true } as const;
  const read = { scope: 'read', everyExperiment: true } as const;
  return [
    route({
      method: 'PUT',
      url: '/groups/:key',
      ...admin,
      bodyLimit: GROUP_BODY_LIMIT,
      schema: {
        tags,
        summary: `Create or replace a saved group (up to ${MAX_GROUP_VALUES} values) that conditions name with $inGroup`,
        params: KeyParams,
        body: PutBody,
        response: { 200: GroupSchema, ...errorResponses },
      },
      handle: ({ params, body, principal }) => groups.put(params.key, body, actorOf(principal)),
    }),
    route({
      method: 'GET',
      url: '/groups',
      ...read,
      schema: {
        tags,
        summary: 'List the saved groups by key, without their values',
        response: {
          200: Type.Object(
            { groups: Type.Array(GroupSummarySchema) },
            { title: 'SavedGroupList', examples: [{ groups: [SUMMARY_EXAMPLE] }] },
          ),
          ...errorResponses,
        },
      },
      handle: () => groups.list(),
    }),
    route({
      method: 'GET',
      url: '/groups/:key',
      ...read,
      schema: {
        tags,
        summary: 'One saved group with its values and the experiments using it',
        params: KeyParams,
        response: { 200: GroupSchema, ...errorResponses },
      },
      handle: ({ params }) => groups.get(params.key),
    }),
    route({
      method: 'DELETE',
      url: '/groups/:key',
      ...admin,
      status: 204,
      schema: {
        tags,
        summary: 'Delete a saved group (409 while a non-archived experiment uses it)',
        params: KeyParams,
        response: {
          204: { type: 'null', description: 'Deleted' },
          ...errorResponses,
          409: conflictResponse(
            "saved group 'beta-testers' is used by experiment 'checkout-prompt'; remove it from their conditions (or archive them) first",
          ),
        },
      },
      handle: async ({ params, principal }) => {
        await groups.remove(params.key, actorOf(principal));
        return undefined;
      },
    }),
  ];
}
