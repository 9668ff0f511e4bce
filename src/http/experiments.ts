// Routes for managing experiments: create, list, read, change, delete.
import type { Actor } from '../core/events.js';
import { mayTouch, type Principal } from '../core/keys.js';
import type { ExperimentService } from '../services/experiments.js';
import { type Route, route } from './route.js';
import { conflictResponse, errorResponses, SlugParams } from './schemas/common.js';
import {
  CreateExperimentBody,
  ExperimentListResponse,
  ExperimentSchema,
  ListExperimentsQuery,
  UpdateExperimentBody,
} from './schemas/experiments.js';

/** `actorOf`: who a principal is in the history (KeyService.actorOf). */
export function experimentRoutes(
  experiments: ExperimentService,
  actorOf: (principal: Principal) => Actor,
): Route[] {
  const tags = ['experiments'];
  return [
    route({
      method: 'POST',
      url: '/experiments',
      scope: 'admin',
      status: 201,
      schema: {
        tags,
        summary: 'Create an experiment',
        body: CreateExperimentBody,
        response: {
          201: ExperimentSchema,
          ...errorResponses,
          409: conflictResponse("an experiment with slug 'checkout-prompt' already exists"),
        },
      },
      idempotent: true,
      handle: ({ body, principal, idempotency }) =>
        experiments.create(body, {
          actor: actorOf(principal),
          allowed: (slug) => mayTouch(principal, slug),
          record: idempotency,
        }),
    }),
    route({
      method: 'GET',
      url: '/experiments',
      scope: 'read',
      schema: {
        tags,
        summary: 'List experiments, optionally by status',
        querystring: ListExperimentsQuery,
        response: { 200: ExperimentListResponse },
      },
      handle: ({ query, principal }) => experiments.list(query, (slug) => mayTouch(principal, slug)),
    }),
    route({
      method: 'GET',
      url: '/experiment/:slug',
      scope: 'read',
      schema: {
        tags,
        summary: 'Read an experiment',
        params: SlugParams,
        response: { 200: ExperimentSchema, ...errorResponses },
      },
      handle: ({ params }) => experiments.get(params.slug),
    }),
    route({
      method: 'PATCH',
      url: '/experiment/:slug',
      scope: 'admin',
      schema: {
        tags,
        summary: 'Change status, variants, metrics, segments, guardrail settings, name or description',
        description: 'Changing variants bumps version. Takes effect on the next assign.',
        params: SlugParams,
        body: UpdateExperimentBody,
        response: {
          200: ExperimentSchema,
          ...errorResponses,
          409: conflictResponse(
            "cannot change status from 'completed' to 'running'; allowed from 'completed': archived",
          ),
        },
      },
      handle: ({ params, body, principal }) => experiments.update(params.slug, body, actorOf(principal)),
    }),
    route({
      method: 'DELETE',
      url: '/experiment/:slug',
      scope: 'admin',
      status: 204,
      schema: {
        tags,
        summary: 'Delete a draft that has no results (archive anything else)',
        params: SlugParams,
        response: {
          204: { type: 'null', description: 'Deleted' },
          ...errorResponses,
          409: conflictResponse(
            "experiment 'checkout-prompt' has results and cannot be deleted; archive it instead",
          ),
        },
      },
      handle: async ({ params, principal }) => {
        await experiments.remove(params.slug, actorOf(principal));
      },
    }),
  ];
}
