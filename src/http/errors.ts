// The one place where errors become HTTP answers: {"error": "<what is wrong>"}, never internals.
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, UnavailableError } from '../core/errors.js';

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
