// The OpenFeature server provider (ADR 0031): flags evaluated in-process from the definitions through a
// local client, each evaluation an exposure as assignLocal's; track() a logged result on the assignment
// the provider last answered that user. Types only from OpenFeature: the package gains no dependency.
import type {
  ErrorCode,
  EvaluationContext,
  JsonValue as FlagJson,
  Hook,
  Provider,
  ResolutionDetails,
  TrackingEventDetails,
} from '@openfeature/server-sdk';
import { AgentSplit } from './client.js';
import { describeError } from './http.js';
import { type DrawFailure, LOCAL_DRAW, WARN } from './internal.js';
import type { AgentSplitOptions, JsonObject, JsonValue, LogEntry } from './types.js';

export interface AgentSplitProviderOptions extends AgentSplitOptions {
  /** A client made with `local: true` to evaluate and log through (the other client options are then ignored). */
  client?: AgentSplit<JsonObject>;
  /** How many targeting keys track() remembers the last assignments of (default 10,000). */
  maxTrackedUsers?: number;
}

type FlagType = 'boolean' | 'string' | 'number' | 'object';

const FAILURE_CODES: Record<DrawFailure, string> = {
  closed: 'GENERAL',
  'not-local': 'GENERAL',
  'not-loaded': 'PROVIDER_NOT_READY',
  'not-found': 'FLAG_NOT_FOUND',
  'bad-user': 'INVALID_CONTEXT',
};

/** The last successful evaluation of a flag for a targeting key: what track() logs against. */
interface Remembered {
  variant: string;
  assignmentId: string;
}

function failure<T>(value: T, code: string, message: string): ResolutionDetails<T> {
  return { value, reason: 'ERROR', errorCode: code as ErrorCode, errorMessage: message };
}

/** An OpenFeature context or details value as JSON: dates as ISO strings, undefined and functions left out. */
function toJson(x: unknown): JsonValue | undefined {
  if (x === null || typeof x === 'string' || typeof x === 'boolean') return x;
  if (typeof x === 'number') return Number.isFinite(x) ? x : undefined;
  if (x instanceof Date) return Number.isNaN(x.getTime()) ? undefined : x.toISOString();
  if (Array.isArray(x)) return x.map((v) => toJson(v) ?? null);
  if (typeof x === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(x)) {
      const j = toJson(v);
      if (j !== undefined) out[k] = j;
    }
    return out;
  }
  return undefined;
}

/** The assign context: the evaluation context without targetingKey, or undefined when nothing is left. */
function assignContext(context: EvaluationContext | undefined): JsonObject | undefined {
  if (!context) return undefined;
  const { targetingKey: _, ...rest } = context;
  const json = toJson(rest) as JsonObject;
  return Object.keys(json).length > 0 ? json : undefined;
}

/**
 * An OpenFeature server provider evaluating agentsplit experiments locally: flag key = experiment slug,
 * targetingKey = user id. Pass a client made with `local: true`, or the client's options (the provider
 * then makes its own local client and closes it on `OpenFeature.close()`).
 */
export class AgentSplitProvider implements Provider {
  readonly metadata = { name: 'agentsplit' } as const;
  readonly runsOn = 'server' as const;
  readonly hooks: Hook[] = [];
  /** The client the provider evaluates and logs through. */
  readonly client: AgentSplit<JsonObject>;
  private readonly owned: boolean;
  private readonly maxTrackedUsers: number;
  /** targetingKey → flag → the last assignment answered; a Map's order is its recency. */
  private readonly remembered = new Map<string, Map<string, Remembered>>();

  constructor(clientOrOptions: AgentSplit<JsonObject> | AgentSplitProviderOptions = {}) {
    const { client, maxTrackedUsers, ...options } =
      clientOrOptions instanceof AgentSplit ? { client: clientOrOptions } : clientOrOptions;
    this.owned = client === undefined;
    this.client = client ?? new AgentSplit<JsonObject>({ ...options, local: true });
    this.maxTrackedUsers = Math.max(1, maxTrackedUsers ?? 10_000);
  }

  /** Waits for the first definitions (at most the client's timeoutMs); resolves even if they failed. */
  async initialize(): Promise<void> {
    await this.client.refreshDefinitions();
  }

  /** Closes the client the provider made; flushes (only) a client it was given. */
  async onClose(): Promise<void> {
    if (this.owned) await this.client.close();
    else await this.client.flush();
  }

  resolveBooleanEvaluation(
    flagKey: string,
    defaultValue: boolean,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<boolean>> {
    return Promise.resolve(this.evaluate(flagKey, defaultValue, context, 'boolean'));
  }

  resolveStringEvaluation(
    flagKey: string,
    defaultValue: string,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<string>> {
    return Promise.resolve(this.evaluate(flagKey, defaultValue, context, 'string'));
  }

  resolveNumberEvaluation(
    flagKey: string,
    defaultValue: number,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<number>> {
    return Promise.resolve(this.evaluate(flagKey, defaultValue, context, 'number'));
  }

  resolveObjectEvaluation<T extends FlagJson>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    return Promise.resolve(this.evaluate(flagKey, defaultValue, context, 'object'));
  }

  /**
   * Logs a result for the experiments this provider last evaluated for `context.targetingKey` (only
   * `details.flagKey` if given): `details.value` (or `true`) as the metric `eventName`, every other number
   * or boolean of `details` as a metric, the rest as the result's output. Never throws.
   */
  track(eventName: string, context: EvaluationContext, details: TrackingEventDetails): void {
    try {
      if (typeof eventName !== 'string' || eventName === '') {
        this.client[WARN](
          'of:track-name',
          'track: the event name must be a non-empty string: nothing logged',
        );
        return;
      }
      const userId = context?.targetingKey;
      if (typeof userId !== 'string' || userId === '') {
        this.client[WARN](
          'of:track-user',
          `track ${eventName}: no targetingKey in the context: nothing logged`,
        );
        return;
      }
      const flagKey = typeof details?.flagKey === 'string' ? details.flagKey : undefined;
      const seen = this.remembered.get(userId);
      const one = flagKey !== undefined ? seen?.get(flagKey) : undefined;
      const targets: Array<[string, Remembered]> =
        flagKey !== undefined ? (one ? [[flagKey, one]] : []) : [...(seen ?? [])];
      if (targets.length === 0) {
        this.client[WARN](
          'of:track-none',
          `track ${eventName}: this provider answered no variant of ${flagKey ?? 'any flag'} to this targetingKey: nothing logged`,
        );
        return;
      }
      const metrics: Record<string, JsonValue> = {};
      const output: JsonObject = {};
      for (const [k, v] of Object.entries(details ?? {})) {
        if (k === 'flagKey' || k === 'value') continue;
        if (typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) metrics[k] = v;
        else {
          const j = toJson(v);
          if (j !== undefined) output[k] = j;
        }
      }
      const value = details?.value;
      if (typeof value === 'number' && Number.isFinite(value)) metrics[eventName] = value;
      else {
        metrics[eventName] = true;
        const j = toJson(value);
        if (j !== undefined && j !== null) output.value = j;
      }
      const ctx = assignContext(context);
      for (const [slug, a] of targets) {
        const entry: LogEntry = { variantKey: a.variant, assignmentId: a.assignmentId, userId, metrics };
        if (Object.keys(output).length > 0) entry.output = output;
        if (ctx !== undefined) entry.context = ctx;
        this.client.log(slug, entry);
      }
    } catch (err) {
      this.client[WARN](
        'of:track-error',
        `track ${eventName} failed (${describeError(err)}): nothing logged`,
      );
    }
  }

  private evaluate<T>(flagKey: string, defaultValue: T, context: EvaluationContext, type: FlagType) {
    try {
      const userId = context?.targetingKey;
      if (typeof userId !== 'string' || userId === '') {
        return failure(
          defaultValue,
          'TARGETING_KEY_MISSING',
          `flag ${flagKey} needs a targetingKey (the user id)`,
        );
      }
      const attributes = assignContext(context);
      const draw = this.client[LOCAL_DRAW](flagKey, userId, attributes);
      if (draw.kind !== 'ok') return failure(defaultValue, FAILURE_CODES[draw.kind], draw.message);
      const value = type === 'object' ? draw.payload : draw.payload.value;
      if (typeof value !== type || value === null) {
        return failure(
          defaultValue,
          'TYPE_MISMATCH',
          `flag ${flagKey}: variant ${draw.variant}'s payload has no ${type} field "value" (a ${type} flag reads payload.value; getObjectValue answers the whole payload)`,
        );
      }
      const assignmentId = draw.expose(attributes);
      this.remember(userId, flagKey, { variant: draw.variant, assignmentId });
      const details: ResolutionDetails<T> = {
        value: value as T,
        // As the server's OFREP answers (ADR 0038): an override is a targeting match, a unit that did
        // not enter gets the default.
        reason: draw.inExperiment ? 'SPLIT' : draw.reason === 'override' ? 'TARGETING_MATCH' : 'DEFAULT',
        variant: draw.variant,
        flagMetadata: draw.inExperiment
          ? { assignmentId, experimentVersion: draw.experimentVersion, inExperiment: true }
          : {
              assignmentId,
              experimentVersion: draw.experimentVersion,
              inExperiment: false,
              entryReason: draw.reason ?? '',
            },
      };
      return details;
    } catch (err) {
      return failure(defaultValue, 'GENERAL', `flag ${flagKey}: ${describeError(err)}`);
    }
  }

  private remember(userId: string, flagKey: string, a: Remembered): void {
    let flags = this.remembered.get(userId);
    if (flags !== undefined) this.remembered.delete(userId);
    else flags = new Map();
    flags.set(flagKey, a);
    this.remembered.set(userId, flags);
    if (this.remembered.size > this.maxTrackedUsers) {
      const oldest = this.remembered.keys().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
  }
}
