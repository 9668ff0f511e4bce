// Routes for managing experiments: create, list, read, change, delete.
import type { FastifyPluginAsync } from 'fastify';
import type { ExperimentService } from '../services/experiments.js';
import {
  CreateExperimentBody,
  ErrorSchema,
  ExperimentSchema,
  errorResponses,
  ListExperimentsQuery,
  SlugParams,
  UpdateExperimentBody,
} from './schemas.js';
import type { Typed } from './typed.js';

export function experimentRoutes(experiments: ExperimentService): FastifyPluginAsync {
  return async (plain) => {
    const app = plain as Typed;
    const tags = ['experiments'];

    app.post(
      '/experiments',
      {
        schema: {
          tags,
          summary: 'Create an experiment',
          body: CreateExperimentBody,
          response: { 201: ExperimentSchema, ...errorResponses, 409: ErrorSchema },
        },
      },
      async (request, reply) => reply.code(201).send(await experiments.create(request.body)),
    );

    app.get(
      '/experiments',
      {
        schema: {
          tags,
          summary: 'List experiments, optionally by status',
          querystring: ListExperimentsQuery,
          response: {
            200: { type: 'object', properties: { experiments: { type: 'array', items: ExperimentSchema } } },
          },
        },
      },
      async (request) => ({ experiments: experiments.list(request.query.status) }),
    );

    app.get(
      '/experiment/:slug',
      {
        schema: {
          tags,
          summary: 'Read an experiment',
          params: SlugParams,
          response: { 200: ExperimentSchema, ...errorResponses },
        },
      },
      async (request) => experiments.get(request.params.slug),
    );

    app.patch(
      '/experiment/:slug',
      {
        schema: {
          tags,
          summary: 'Change status, variants, name or description',
          description: 'Changing variants bumps version. Takes effect on the next assign.',
          params: SlugParams,
          body: UpdateExperimentBody,
          response: { 200: ExperimentSchema, ...errorResponses, 409: ErrorSchema },
        },
      },
      async (request) => experiments.update(request.params.slug, request.body),
    );

    app.delete(
      '/experiment/:slug',
      {
        schema: {
          tags,
          summary: 'Delete a draft that has no results (archive anything else)',
          params: SlugParams,
          response: { 204: { type: 'null' }, ...errorResponses, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await experiments.remove(request.params.slug);
        return reply.code(204).send(null);
      },
    );
  };
}
