// POST /experiment/:slug/assign — the hot path: no disk, no await, a pre-serialized body.
import type { Static } from 'typebox';
import type { Assign, Assignment } from '../services/assignments.js';
import type { Assert, Fits } from './answer-check.js';
import { JsonBody, type Route, route } from './route.js';
import { AssignBody, AssignResponse } from './schemas/assign.js';
import { errorResponses, SlugParams } from './schemas/common.js';

// The answer is JSON text made from a prefix compiled per experiment (core/assignment.ts), not serialized
// by AssignResponse: exempt from route()'s check, so its fields are checked against the schema here.
type _AssignmentFits = Assert<Fits<Omit<Assignment, 'json'>, Static<typeof AssignResponse>>>;

export function assignRoutes(assign: Assign): Route[] {
  return [
    route({
      method: 'POST',
      url: '/experiment/:slug/assign',
      scope: 'assign',
      fast: true,
      schema: {
        tags: ['assignment'],
        summary: 'Assign a variant to a user',
        description:
          "Only a running experiment serves assignments (404 otherwise, naming its status). 'random' experiments " +
          "draw independently on every call by trafficPercent; 'sticky' ones hash seed + userId.",
        params: SlugParams,
        body: AssignBody,
        response: { 200: AssignResponse, ...errorResponses },
      },
      handle: ({ params, body }) => new JsonBody(assign(params.slug, body.userId, body.context).json),
    }),
  ];
}
