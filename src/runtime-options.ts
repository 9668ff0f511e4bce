// The options of startRuntime (runtime.ts): what main.ts reads from the environment, and what tests set.
import type { Logger } from 'pino';
import type { RandomSource } from './core/assignment.js';
import type { PriceTable } from './core/trace-run.js';
import type { TrustProxy } from './http/client-address.js';
import type { McpOptions } from './http/mcp.js';
import type { AnalysisPoolOptions } from './services/analysis-pool.js';
import type { RateLimitOptions } from './services/rate-limits.js';
import type { DatabaseTarget } from './store/index.js';

export interface RuntimeOptions {
  database: DatabaseTarget;
  apiKey: string;
  bodyLimit?: number;
  /** A request (headers and body) must arrive within this many ms, else 408. */
  bodyTimeoutMs?: number;
  /** Requests slower than this are logged at warn whatever the level. */
  slowRequestMs?: number;
  /** Most exposures waiting in memory for the database (default 200,000); past it they are dropped and counted. */
  exposureBuffer?: number;
  /** Origins browsers may call from (`*`: any); absent or empty: CORS off. */
  corsOrigins?: string[];
  /** Default: silent. */
  logger?: Logger;
  random?: RandomSource;
  /** How often other instances' experiment changes are checked for, besides notifications (ms). */
  syncPollMs?: number;
  /** The HMAC key managed API keys are hashed with (KEY_HASH_SECRET; ADR 0015). */
  keyHashSecret?: string;
  /**
   * The last resort for an unfinished Idempotency-Key claim of a live instance: after this long other
   * instances take it over (ms; PostgreSQL). A dead instance's claims are taken over at once.
   */
  idempotencyClaimTimeoutMs?: number;
  /** Per-key rate limits, failed-authentication throttling, Redis (ADR 0017); unset fields: the defaults. */
  rateLimits?: Partial<RateLimitOptions>;
  /** TRUST_PROXY: whose X-Forwarded-For names the client (issue 34); absent or 0: the socket's peer. */
  trustProxy?: TrustProxy;
  /** How often the guardrail monitor runs its round (seconds); 0 or absent: off (main.ts: default 60). */
  monitorIntervalSeconds?: number;
  /** The clock of changes (ISO 8601): tests move a rollout's hours with it; absent: the wall clock. */
  now?: () => string;
  /** Webhook deliveries (issue 27 item 3); unset fields: the defaults. */
  webhooks?: Partial<WebhookOptions>;
  /** Who /mcp answers: MCP_ALLOWED_HOSTS, MCP_ALLOWED_ORIGINS (absent: local host names). */
  mcp?: McpOptions;
  /** The analysis workers (ANALYSIS_*; issue 34); unset fields: the defaults. */
  analysis?: Partial<Omit<AnalysisPoolOptions, 'maxAgeMs'>>;
  /** OTLP trace ingest (TRACES_BODY_LIMIT, TRACE_*; issue 39); unset fields: the defaults. */
  traces?: Partial<{
    bodyLimit: number;
    windowSeconds: number;
    messageBytes: number;
    prices: PriceTable;
    /** How often traces past the window are swept (ms; default a tenth of the window, 1 s to 60 s). */
    sweepMs: number;
  }>;
}

export interface WebhookOptions {
  /** Seconds between attempts (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  /** WEBHOOK_TIMEOUT_SECONDS, in ms (default 15 s). */
  timeoutMs: number;
  /** WEBHOOK_DENY_PRIVATE: refuse every address that is not global unicast (core/egress.ts). */
  denyPrivate: boolean;
  /** How often due deliveries are looked for (ms; default 1000). */
  pollMs: number;
}
