// A route declaration made ready to serve: its body validator and answer serializer, compiled once and
// shared by every transport, and its admission limit.
import fastJson from 'fast-json-stringify';
import type { FastifySchemaCompiler } from 'fastify';
import { type Admission, createAdmission } from './admission.js';
import type { Route } from './route.js';
import type { Validator } from './validation.js';

export interface CompiledRoute {
  route: Route;
  /** The success status. */
  status: number;
  validateBody?: Validator;
  /** Path parameters and the query string: these coerce (a `limit` of "10" becomes 10). */
  validateParams?: Validator;
  validateQuery?: Validator;
  /** The success answer as JSON, by the success status's schema (as Fastify would serialize it). */
  serialize(value: unknown): string;
  admission?: Admission;
}

/**
 * Whether the success answer is JSON described by `schema`. A schema with `content` (by media type)
 * documents a non-JSON answer, e.g. the export's stream, which is never serialized.
 */
function jsonAnswers(schema: unknown, status: number): boolean {
  return typeof schema === 'object' && schema !== null && !('content' in schema) && status !== 204;
}

export function compileRoute(route: Route, compileValidator: FastifySchemaCompiler<unknown>): CompiledRoute {
  const status = route.status ?? 200;
  const schema = route.schema.response[status];
  const body = route.schema.body;
  const compile = (part: 'params' | 'querystring', schema: unknown) =>
    schema === undefined
      ? undefined
      : (compileValidator({
          schema: schema as never,
          method: route.method,
          url: route.url,
          httpPart: part,
        }) as Validator);
  return {
    route,
    status,
    validateBody:
      body === undefined
        ? undefined
        : (compileValidator({
            schema: body,
            method: route.method,
            url: route.url,
            httpPart: 'body',
          }) as Validator),
    validateParams: compile('params', route.schema.params),
    validateQuery: compile('querystring', route.schema.querystring),
    serialize: jsonAnswers(schema, status) ? fastJson(schema as never) : JSON.stringify,
    admission: route.concurrency === undefined ? undefined : createAdmission(route.concurrency),
  };
}
