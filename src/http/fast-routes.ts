// The routes the fast path serves (see fast-path.ts): each calls the same use case as its Fastify
// route, with the same body schema compiled by the same validator compiler.
import type { FastifySchemaCompiler } from 'fastify';
import type { JsonObject } from '../core/json.js';
import type { Assign } from '../services/assignments.js';
import type { ExperimentService } from '../services/experiments.js';
import type { LogInput, ResultService } from '../services/results.js';
import { isStorableRequestText } from '../store/exposure-form.js';
import type { BodyValidator, FastRoute } from './fast-path.js';
import { AssignBody, LogBody } from './schemas.js';

export interface FastRouteDeps {
  experiments: Pick<ExperimentService, 'lookup'>;
  assign: Assign;
  results: Pick<ResultService, 'log'>;
}

export function createFastRoutes(
  deps: FastRouteDeps,
  compile: FastifySchemaCompiler<unknown>,
): Record<string, FastRoute> {
  const body = (schema: object, url: string) =>
    compile({ schema, method: 'POST', url, httpPart: 'body' }) as BodyValidator;
  return {
    assign: {
      validateBody: body(AssignBody, '/experiment/:slug/assign'),
      // Anything but a running experiment gets its 404 from the route.
      accepts: (slug) => deps.experiments.lookup(slug)?.experiment.active === true,
      handle: (slug, input, text) => {
        const { userId, context } = input as { userId: string; context?: JsonObject };
        // The body's own text becomes the exposure's request when it holds nothing else (ADR 0009).
        return deps.assign(
          slug,
          userId,
          context,
          isStorableRequestText(input as object, text) ? text : undefined,
        ).json;
      },
    },
    log: {
      validateBody: body(LogBody, '/experiment/:slug/log'),
      // An experiment this instance does not know yet is looked up by the route.
      accepts: (slug) => deps.experiments.lookup(slug) !== undefined,
      handle: async (slug, input) =>
        JSON.stringify({ success: true, ...(await deps.results.log(slug, input as LogInput)) }),
    },
  };
}
