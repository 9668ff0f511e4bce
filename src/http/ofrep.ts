// OpenFeature Remote Evaluation Protocol (OFREP 0.3.0, ADR 0029): POST /ofrep/v1/evaluate/flags/:key
// evaluates one flag (an experiment) as assign does, exposure included; POST /ofrep/v1/evaluate/flags
// evaluates every running flag the key may see, without exposures, under a strong ETag (304 when unchanged).
import { createHash } from 'node:crypto';
import type { Static } from 'typebox';
import { ValidationError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import type { OfrepErrorCode } from '../core/ofrep.js';
import type { Ofrep } from '../services/ofrep.js';
import type { Assert, Fits } from './answer-check.js';
import { JsonBody, type Route, type RouteFailure, route, Tagged } from './route.js';
import { UserId } from './schemas/assign.js';
import { errorResponses } from './schemas/common.js';
import {
  OFREP_SECURITY,
  OfrepBulkEvaluation,
  OfrepBulkFailure,
  OfrepEvaluation,
  OfrepFailure,
  OfrepFlagNotFound,
  OfrepFlagParams,
  OfrepRequest,
} from './schemas/ofrep.js';

const tags = ['OpenFeature (OFREP)'];

// The answers are JSON made from prefixes compiled per variant (core/assignment.ts), not serialized by
// the schemas: exempt from route()'s check, so the schema's fields are checked against the shape here.
interface EvaluationShape {
  key: string;
  reason: 'SPLIT' | 'TARGETING_MATCH' | 'DEFAULT';
  variant: string;
  value: JsonObject;
  metadata: {
    experimentVersion: number;
    assignmentId: string;
    inExperiment: boolean;
    entryReason?: 'override' | 'layer' | 'targeting' | 'coverage';
  };
}
type _EvaluationFits = Assert<Fits<EvaluationShape, Static<typeof OfrepEvaluation>>>;

/** No usable targetingKey: OFREP's own error code (the published providers show it as such). */
class TargetingKeyMissing extends ValidationError {}

const MAX_USER = (UserId as { maxLength?: number }).maxLength ?? 512;

/** The user id in `context.targetingKey`, and the rest of the context (the assign context). */
function userOf(context: JsonObject | undefined): { userId: string; rest: JsonObject | undefined } {
  const key = context?.targetingKey;
  if (typeof key !== 'string' || key.length === 0) {
    throw new TargetingKeyMissing(
      key === undefined
        ? 'context.targetingKey (the user id) is missing'
        : 'context.targetingKey (the user id) must be a non-empty string',
    );
  }
  if (key.length > MAX_USER) {
    throw new ValidationError(`context.targetingKey must be at most ${MAX_USER} characters`);
  }
  if (Object.keys(context!).length === 1) return { userId: key, rest: undefined };
  const { targetingKey: _, ...rest } = context!;
  return { userId: key, rest };
}

function codeOf(f: RouteFailure): OfrepErrorCode {
  if (f.status === 404) return 'FLAG_NOT_FOUND';
  if (f.error instanceof TargetingKeyMissing) return 'TARGETING_KEY_MISSING';
  if (f.status !== 400 || f.stage === 'url') return 'GENERAL';
  return f.stage === 'body' ? 'PARSE_ERROR' : 'INVALID_CONTEXT';
}

/** OFREP's failure body, with `error` beside `errorDetails` (the house rule for every 4xx). */
function failureBody(f: RouteFailure, withKey: boolean): string {
  const errorCode = codeOf(f);
  const tail = { errorCode, errorDetails: f.message, error: f.message };
  return JSON.stringify(withKey ? { key: f.params.key ?? '', ...tail } : tail);
}

/** A strong entity tag of the answer's bytes. */
function etagOf(json: string): string {
  return `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
}

const ofrepErrors = { 401: errorResponses[401], 403: errorResponses[403], 429: errorResponses[429] };

export function ofrepRoutes(ofrep: Ofrep): Route[] {
  return [
    route({
      method: 'POST',
      url: '/ofrep/v1/evaluate/flags/:key',
      scope: 'assign',
      fast: true,
      experimentParam: 'key',
      errorBody: (f) => failureBody(f, true),
      schema: {
        tags,
        summary: 'Evaluate one flag (OFREP single evaluation)',
        description:
          "The flag key is an experiment's slug, context.targetingKey the user id, the rest of the context " +
          'the assignment context. A running experiment answers SPLIT with the variant assign would give and ' +
          'records the exposure as assign does; metadata.assignmentId works with log and feedback. Any other ' +
          'answers 404 FLAG_NOT_FOUND (the provider then answers the code default).',
        security: OFREP_SECURITY,
        params: OfrepFlagParams,
        body: OfrepRequest,
        response: {
          200: OfrepEvaluation,
          400: OfrepFailure,
          ...ofrepErrors,
          404: OfrepFlagNotFound,
        },
      },
      handle: ({ params, body }) => {
        const { userId, rest } = userOf(body.context);
        return new JsonBody(ofrep.evaluate(params.key, userId, rest));
      },
    }),
    route({
      method: 'POST',
      url: '/ofrep/v1/evaluate/flags',
      scope: 'assign',
      errorBody: (f) => failureBody(f, false),
      schema: {
        tags,
        summary: 'Evaluate every flag (OFREP bulk evaluation)',
        description:
          'Every running experiment the key may see, evaluated for context.targetingKey, sorted by key. ' +
          "Records no exposure: each assignmentId is in the clients' form, and posting it to POST " +
          '/exposures when the flag is first read records it (ADR 0029). Answers a strong ETag; sent back ' +
          'as If-None-Match, the same answer is 304 with no body (sticky experiments; a random one redraws).',
        security: OFREP_SECURITY,
        body: OfrepRequest,
        response: {
          200: OfrepBulkEvaluation,
          304: { description: 'The same answer as the ETag sent as If-None-Match', type: 'null' },
          400: OfrepBulkFailure,
          ...ofrepErrors,
        },
      },
      handle: ({ body, principal }) => {
        const { userId, rest } = userOf(body.context);
        const json = ofrep.evaluateAll(principal.experiments, userId, rest);
        return new Tagged(etagOf(json), json);
      },
    }),
  ];
}
