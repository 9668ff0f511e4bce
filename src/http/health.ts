// Liveness and readiness probes (no key needed). Readiness names no host or port: the driver's error
// goes to the log (request-log.ts), the client gets a generic 503.
import { UnavailableError } from '../core/errors.js';
import { type Route, route } from './route.js';
import { HealthResponse, unavailableResponse } from './schemas/common.js';

/** How long /readyz waits for the database before answering 503. */
const READY_WITHIN_MS = 1000;

/** `database`: what readiness asks (the store's ping, passed in by app.ts; http reaches the store no other way). */
export function healthRoutes(database: { ping(): Promise<void> }): Route[] {
  return [
    route({
      method: 'GET',
      url: '/healthz',
      scope: 'public',
      schema: {
        tags: ['health'],
        summary: 'The process is up',
        security: [],
        response: { 200: { ...HealthResponse, 'x-response-description': 'The process answers' } },
      },
      handle: () => ({ status: 'ok' }),
    }),
    route({
      method: 'GET',
      url: '/readyz',
      scope: 'public',
      schema: {
        tags: ['health'],
        summary: 'The database answers reads and writes (503 when it does not within 1 s)',
        security: [],
        response: {
          200: {
            ...HealthResponse,
            'x-response-description': 'The database answers',
            examples: [{ status: 'ready' }],
          },
          503: unavailableResponse,
        },
      },
      handle: async () => {
        // Answered within READY_WITHIN_MS whatever the database does: a stalled one is not ready.
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${READY_WITHIN_MS} ms`)),
            READY_WITHIN_MS,
          );
        });
        try {
          await Promise.race([database.ping(), late]);
        } catch (err) {
          throw new UnavailableError('the database is unreachable', 1, { cause: err });
        } finally {
          clearTimeout(timer);
        }
        return { status: 'ready' };
      },
    }),
  ];
}
