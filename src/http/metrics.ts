// GET /metrics: this instance's Prometheus metrics (src/metrics.ts) as text, for a scraper holding a
// `read` key.
import type { Metrics } from '../metrics.js';
import { PlainText, type Route, route } from './route.js';
import { errorResponses } from './schemas/common.js';

const EXAMPLE = `# HELP agentsplit_http_requests_total Requests answered, by route pattern (unmatched: no route), method and status, from both transports
# TYPE agentsplit_http_requests_total counter
agentsplit_http_requests_total{route="/experiment/:slug/assign",method="POST",status="200"} 1042
agentsplit_http_requests_total{route="/experiment/:slug/log",method="POST",status="200"} 977
# HELP agentsplit_experiments_loaded Experiments in this instance's in-memory table, by status
# TYPE agentsplit_experiments_loaded gauge
agentsplit_experiments_loaded{status="running"} 3
`;

/** The 200 as the document shows it: Prometheus text, never serialized as JSON (compile.ts sees `content`). */
const MetricsResponse = {
  description: 'Every metric of this instance in the Prometheus text format 0.0.4',
  content: {
    'text/plain': {
      schema: {
        type: 'string',
        description:
          'Prometheus text exposition format 0.0.4 (content type text/plain; version=0.0.4; charset=utf-8)',
      },
      example: EXAMPLE,
    },
  },
};

export function metricsRoutes(metrics: Pick<Metrics, 'scrape' | 'contentType'>): Route[] {
  return [
    route({
      method: 'GET',
      url: '/metrics',
      scope: 'read',
      schema: {
        tags: ['operations'],
        summary: "This instance's metrics for Prometheus",
        description:
          'Requests by route pattern, method and status (agentsplit_http_requests_total) and their latency ' +
          '(agentsplit_http_request_duration_seconds), group-commit batch sizes and waits ' +
          '(agentsplit_group_commit_batch_size, agentsplit_group_commit_wait_seconds), the exposure queue ' +
          '(agentsplit_exposure_queue_depth, agentsplit_exposures_dropped_total), database errors ' +
          '(agentsplit_database_errors_total), rate-limited requests (agentsplit_rate_limited_total), ' +
          'experiments loaded by status (agentsplit_experiments_loaded) and the process metrics of ' +
          'prom-client (process_*, nodejs_*). Each instance counts its own requests: scrape every instance.',
        response: { 200: MetricsResponse, 401: errorResponses[401], 500: errorResponses[500] },
      },
      // Prometheus text, never serialized by a schema (MetricsResponse documents `content`).
      handle: async () => new PlainText(await metrics.scrape(), metrics.contentType),
    }),
  ];
}
