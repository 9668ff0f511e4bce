// Liveness and readiness probes (no key needed).
import type { FastifyPluginAsync } from 'fastify';
import type { Store } from '../store/store.js';

export function healthRoutes(store: Pick<Store, 'ping'>): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', { schema: { tags: ['health'], summary: 'The process is up' } }, async () => ({
      status: 'ok',
    }));
    app.get(
      '/readyz',
      { schema: { tags: ['health'], summary: 'The database answers reads and writes' } },
      async (request, reply) => {
        try {
          await store.ping();
          return { status: 'ready' };
        } catch (err) {
          request.log.warn({ err }, 'readiness check failed');
          return reply.code(503).send({ error: `database unreachable: ${(err as Error).message}` });
        }
      },
    );
  };
}
