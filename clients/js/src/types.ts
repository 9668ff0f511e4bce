// Public types of the client.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Where an assignment came from: the server, the in-process evaluation, or the caller's default. */
export type AssignmentSource = 'server' | 'local' | 'default';

export interface Assignment<P = JsonObject> {
  /** The experiment's slug. */
  experiment: string;
  userId: string;
  /** The variant's key; '' for a default assignment. */
  variant: string;
  /** The variant's payload, or the caller's default. */
  payload: P;
  /**
   * The id to send back with log and feedback; '' for a default assignment. A unit that did not enter has
   * an id marked `x` (results and feedback on it are stored but never counted in an analysis).
   */
  assignmentId: string;
  source: AssignmentSource;
  /**
   * Whether the unit entered the experiment (ADR 0038). false: it was served an override's variant or the
   * defaultVariant and no exposure was recorded; also false for a default (fail-open) assignment.
   */
  inExperiment: boolean;
  /** Why the unit did not enter; null when it entered, and for a default (fail-open) assignment. */
  reason: EntryReason | null;
}

/** Why a user was served a variant by a rule of who enters (null: drawn by the hash). */
export type EntryReason = 'override' | 'layer' | 'targeting' | 'coverage';

export interface AssignOptions<P> {
  /** Sent with the assignment and stored with its exposure (a JSON object). */
  context?: JsonObject;
  /** The payload answered when no variant can be had (fail-open). */
  default?: P;
}

export interface LogEntry {
  variantKey: string;
  assignmentId?: string;
  userId?: string;
  input?: JsonObject;
  output?: JsonObject;
  /** Numbers are analysed as means, true/false as proportions. */
  metrics?: Record<string, JsonValue>;
  context?: JsonObject;
  /** ISO 8601; defaults to the time of the log call. */
  timestamp?: string;
}

export interface FeedbackEntry {
  /** The assignment the feedback is about, or (exactly one of the two) the result's logId. */
  assignmentId?: string;
  logId?: string;
  /** Numbers or true/false; sending a metric again for the same assignment replaces it. */
  metrics: Record<string, number | boolean>;
  comment?: string;
}

/** What a tracked run fills in; `latency_ms` and `error` are added to `metrics` by track. */
export interface Run {
  input?: JsonObject;
  output?: JsonObject;
  metrics: Record<string, JsonValue>;
  context?: JsonObject;
}

export interface TrackOptions {
  input?: JsonObject;
  context?: JsonObject;
  metrics?: Record<string, JsonValue>;
}

export interface Logger {
  warn(message: string): void;
  error(message: string): void;
}

export interface AgentSplitOptions {
  /** The service's URL; defaults to process.env.AGENTSPLIT_URL. */
  baseUrl?: string;
  /** A key with the assign and log scopes; defaults to process.env.AGENTSPLIT_API_KEY. */
  apiKey?: string;
  /** Timeout of a remote assign and of a definitions fetch, ms (default 2000). */
  timeoutMs?: number;
  /** Evaluate assignments in-process from GET /experiments/definitions (default false). */
  local?: boolean;
  /** How often local definitions are refreshed, ms (default 5000). */
  definitionsRefreshMs?: number;
  /** Background delivery interval, ms (default 1000). */
  flushIntervalMs?: number;
  /** Items per batch, and the queue length that triggers a delivery at once (default 100, at most 1000). */
  batchSize?: number;
  /** Queue bound: when full, the oldest item is dropped and counted (default 10,000). */
  maxQueueSize?: number;
  /** Timeout of one delivery request, ms (default 10,000). */
  deliveryTimeoutMs?: number;
  /** Timeout of createExperiment, getExperiment, updateExperiment and analysis, ms (default 10,000). */
  managementTimeoutMs?: number;
  /** How long flush() and close() wait at most, ms (default 10,000). */
  flushTimeoutMs?: number;
  /** First retry delay, ms (default 500); doubles up to retryMaxMs (default 30,000). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Where warnings and errors go (default console). */
  logger?: Logger;
  /** Flush at process 'beforeExit' (default true). */
  flushOnExit?: boolean;
}

export interface DeliveryStats {
  /** Items waiting in the queue. */
  queued: number;
  /** Items taken from the queue and not yet answered. */
  inFlight: number;
  /** Items the server accepted. */
  delivered: number;
  /** Items dropped because the queue was full (the oldest go first). */
  dropped: number;
  /** Items the server refused (or that were still undelivered when the client closed). */
  failed: number;
  /** Requests retried (network errors, 5xx, 409, 429). */
  retries: number;
}
