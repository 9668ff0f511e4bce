// What clients that assign in-process need (ADR 0019): GET /experiments/definitions (the running
// experiments a key may see, 304 while unchanged) and POST /exposures (their assignments, in batches).

import { type Static, Type } from 'typebox';
import { mayTouch } from '../core/keys.js';
import { type Definition, DefinitionsService } from '../services/definitions.js';
import type { ExperimentCache } from '../services/experiment-cache.js';
import type { ExposureReceipt, ExposureService } from '../services/exposures.js';
import type { Assert, Fits } from './answer-check.js';
import { type Route, route, Tagged } from './route.js';
import { MAX_ASSIGNMENT_ID } from './schemas/assign.js';
import { errorResponses, JsonObjectSchema, unavailableResponse } from './schemas/common.js';
import { entryProperties } from './schemas/entry.js';

const tags = ['local evaluation'];

const DefinitionsResponse = Type.Object(
  {
    experiments: Type.Array(
      Type.Object({
        slug: Type.String(),
        assignmentIdKey: Type.Integer({ description: "The number the assignment id's check is keyed with" }),
        version: Type.Integer(),
        assignment: Type.String({ description: "'random' or 'sticky'" }),
        seed: Type.String(),
        variants: Type.Array(
          Type.Object({ key: Type.String(), trafficPercent: Type.Number(), payload: JsonObjectSchema }),
        ),
        ...entryProperties,
        defaultVariant: Type.String({ description: 'Served to units that do not enter (resolved: a key)' }),
        rollout: Type.Union(
          [
            Type.Object({
              variant: Type.String(),
              control: Type.String(),
              seed: Type.String(),
              percent: Type.Number(),
            }),
            Type.Null(),
          ],
          {
            description:
              "A rollout's split in place of the weights: a unit that enters gets `variant` when " +
              'hashV2(seed, unit id) < percent / 100, else `control`; null: no rollout decides',
          },
        ),
      }),
    ),
    groups: Type.Record(Type.String(), Type.Array(Type.Union([Type.String(), Type.Number()])), {
      description: "The saved groups the experiments' conditions name ($inGroup), by key: their values",
    }),
  },
  {
    title: 'Definitions',
    description: 'Every running experiment the key may see, sorted by slug',
    examples: [
      {
        experiments: [
          {
            slug: 'checkout-prompt',
            assignmentIdKey: 7,
            version: 2,
            assignment: 'sticky',
            seed: 'checkout-prompt',
            variants: [
              { key: 'A', trafficPercent: 50, payload: { prompt: 'You are a helpful assistant.' } },
              { key: 'B', trafficPercent: 50, payload: { prompt: 'You are a concise assistant.' } },
            ],
            targeting: { plan: { $in: ['pro', 'team'] } },
            coverage: 100,
            layer: null,
            overrides: [{ variant: 'B', userIds: ['qa-1'] }],
            defaultVariant: 'A',
            rollout: null,
          },
        ],
        groups: {},
      },
    ],
  },
);

// The definitions are JSON made ahead (services/definitions.ts), sent as Tagged bytes and not serialized
// by DefinitionsResponse: exempt from route()'s check, so their fields are checked against the schema here.
type _DefinitionsFit = Assert<
  Fits<
    { experiments: Definition[]; groups: Record<string, Array<string | number>> },
    Static<typeof DefinitionsResponse>
  >
>;

const EXPOSURE = {
  experiment: 'checkout-prompt',
  assignmentId: '019a7c3e-5b2d-7f10-9c4e-1d2f3a4b5c6d.2.1.dS00Mg==.5f3c2a91',
  context: { plan: 'pro' },
  timestamp: '2026-11-25T10:00:00.000Z',
};

const ExposuresBody = Type.Object(
  {
    exposures: Type.Array(
      Type.Object(
        {
          experiment: Type.String({ minLength: 1, maxLength: 100, description: "The experiment's slug" }),
          assignmentId: Type.String({
            minLength: 1,
            maxLength: MAX_ASSIGNMENT_ID,
            description: "Made by the client in the server's form (docs/client-contract.md)",
          }),
          context: Type.Optional(JsonObjectSchema),
          timestamp: Type.Optional(
            Type.String({
              format: 'date-time',
              description: 'When the client assigned; never later than now',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false, examples: [{ exposures: [EXPOSURE] }] },
);

const ExposuresResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'Always true: the accepted exposures are committed' }),
    accepted: Type.Integer(),
    rejected: Type.Array(Type.Object({ index: Type.Integer(), error: Type.String() }), {
      description: 'Items not stored, by their index in the request, and why',
    }),
  },
  { title: 'ExposuresAnswer', examples: [{ success: true, accepted: 1, rejected: [] }] },
);

export function localEvaluationRoutes(
  experiments: Pick<ExperimentCache, 'serving' | 'revision' | 'groups'>,
  exposures: ExposureService,
): Route[] {
  const definitions = new DefinitionsService(experiments, () => experiments.groups);
  return [
    route({
      method: 'GET',
      url: '/experiments/definitions',
      scope: 'assign',
      schema: {
        tags,
        summary: 'The running experiments, for clients that assign in-process',
        description:
          'Every running experiment the key may see, with what the draw and the assignment id need. ' +
          'Answers an ETag; sent back as If-None-Match, an unchanged set answers 304 with no body. ' +
          'Gzip-compressed (Content-Encoding: gzip, ETag ending in -gzip) when Accept-Encoding allows it.',
        response: {
          200: DefinitionsResponse,
          304: { description: 'Unchanged since the ETag sent as If-None-Match', type: 'null' },
          ...errorResponses,
        },
      },
      handle: ({ principal }) => {
        const d = definitions.answer(principal.experiments);
        return new Tagged(d.etag, d.identity, d.gzip);
      },
    }),
    route({
      method: 'POST',
      url: '/exposures',
      scope: 'assign',
      fast: true,
      schema: {
        tags,
        summary: 'Record up to 1000 assignments a client made in-process',
        description:
          'Each item is placed by its assignment id (the version, variant and user it was made for); the ' +
          "accepted ones are committed before the answer and count like assign's own. Items that cannot be " +
          'placed are listed in rejected and not stored.',
        body: ExposuresBody,
        response: { 200: ExposuresResponse, ...errorResponses, 503: unavailableResponse },
      },
      idempotent: true,
      handle: async ({ body, principal, idempotency }) => {
        const answer = (r: ExposureReceipt) => ({ success: true, ...r });
        const receipt = await exposures.record(
          body.exposures,
          (slug) => mayTouch(principal, slug),
          idempotency && ((r) => idempotency(answer(r))),
        );
        return answer(receipt);
      },
    }),
  ];
}
