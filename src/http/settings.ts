// GET /settings — the few server settings the dashboard's help texts state (never a secret): how often
// the guardrail monitor runs and the default per-key rate limit.
import { Type } from 'typebox';
import { type Route, route } from './route.js';
import { errorResponses } from './schemas/common.js';

/** What /settings answers: set from the configuration once, at start. */
export interface PublicSettings {
  /** MONITOR_INTERVAL_SECONDS; 0: the monitor is off. */
  monitorIntervalSeconds: number;
  /** RATE_LIMIT_PER_SECOND; 0: no default limit. */
  rateLimitPerSecond: number;
}

const SettingsResponse = Type.Object(
  {
    monitorIntervalSeconds: Type.Integer({
      minimum: 0,
      description: 'MONITOR_INTERVAL_SECONDS: how often the guardrail monitor judges; 0: it is off',
    }),
    rateLimitPerSecond: Type.Integer({
      minimum: 0,
      description:
        'RATE_LIMIT_PER_SECOND: requests per second a key may make unless it has its own; 0: no limit',
    }),
  },
  {
    title: 'Settings',
    description: 'The public, non-secret settings of this server',
    examples: [{ monitorIntervalSeconds: 60, rateLimitPerSecond: 0 }],
  },
);

export function settingsRoutes(settings: PublicSettings): Route[] {
  return [
    route({
      method: 'GET',
      url: '/settings',
      scope: 'read',
      schema: {
        tags: ['operations'],
        summary: 'The public settings the dashboard states: monitor interval, default rate limit',
        response: { 200: SettingsResponse, ...errorResponses },
      },
      handle: () => ({ ...settings }),
    }),
  ];
}
