// The one place where errors become HTTP answers: {"error": "<what is wrong>"}, never internals.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, UnavailableError } from '../core/errors.js';
import { wrongContentType } from './body-parser.js';

interface ValidationIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** "body/variants/0/trafficPercent must be number", with allowed values spelled out for enums. */
export function describeValidation(context: string | undefined, issues: ValidationIssue[]): string {
  const first = issues[0];
  if (!first) return 'request is not valid';
  const where = `${context ?? 'request'}${first.instancePath}`;
  if (first.keyword === 'enum') {
    const allowed = (first.params.allowedValues as unknown[]).map((v) => `'${v}'`).join(', ');
    return `${where} must be one of ${allowed}`;
  }
  if (first.keyword === 'required')
    return `${where} must have required property '${first.params.missingProperty}'`;
  if (first.keyword === 'minProperties' && first.params.limit === 1)
    return `${where} must name at least one field`;
  return `${where} ${first.message ?? 'is not valid'}`;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      if (error instanceof UnavailableError) reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.code(error.status).send({ error: error.message });
    }
    if (error.validation) {
      return reply
        .code(400)
        .send({ error: describeValidation(error.validationContext, error.validation as ValidationIssue[]) });
    }
    // Fastify answers 415 itself when the Content-Type header does not even parse (e.g. empty); for this
    // API that is a malformed request like any other wrong media type, so 400 as the spec's table says.
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(400).send({ error: wrongContentType(request.headers['content-type']) });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const message =
        status === 413
          ? `request body is larger than the limit of ${app.initialConfig.bodyLimit} bytes`
          : error.message;
      return reply.code(status).send({ error: message });
    }
    request.log.error({ err: error }, 'unexpected failure');
    return reply.code(500).send({ error: 'Internal Server Error' });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]}` });
  });
}

/**
 * Fastify's own pre-routing errors (an undecodable URL, an over-long slug) never reach the auth hook,
 * so the key is checked here first; then the same body shape as every other error, and never 414.
 */
export function createFrameworkErrorHandler(keyMatches: (candidate: unknown) => boolean) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    if (!keyMatches(request.headers['x-api-key'])) {
      reply.code(401).send({ error: 'Unauthorized' });
      return;
    }
    const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 404 : 400;
    const message =
      status === 404 ? 'no experiment with a slug that long' : 'the URL is not valid percent-encoding';
    reply.code(status).send({ error: message });
  };
}
