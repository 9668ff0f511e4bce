// POST /experiment/:slug/assign — the hot path: no disk, no await, a pre-serialized body.
import type { FastifyPluginAsync } from 'fastify';
import type { Assign } from '../services/assignments.js';
import { AssignBody, AssignResponse, errorResponses, SlugParams } from './schemas.js';
import type { Typed } from './typed.js';

export function assignRoutes(assign: Assign): FastifyPluginAsync {
  return async (plain) => {
    const app = plain as Typed;
    app.post(
      '/experiment/:slug/assign',
      {
        schema: {
          tags: ['assignment'],
          summary: 'Assign a variant to a user',
          description:
            "Only a running experiment serves assignments (404 otherwise). 'random' experiments draw independently " +
            "on every call by trafficPercent; 'sticky' ones hash seed + userId.",
          params: SlugParams,
          body: AssignBody,
          response: { 200: AssignResponse, ...errorResponses },
        },
      },
      (request, reply) => {
        const assignment = assign(request.params.slug, request.body.userId, request.body.context);
        reply.header('content-type', 'application/json; charset=utf-8').send(assignment.json as never);
      },
    );
  };
}
