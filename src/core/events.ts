// Events: the history of who changed what (issue 27). Each change to an experiment, a key, a webhook, a saved group or a dataset is an event
// written in the same transaction as the change; this file says what the events of a change are. Pure.
import type { Experiment } from './experiment.js';
import type { JsonObject } from './json.js';
import type { ApiKey, Principal } from './keys.js';

/**
 * Who made a change: a key (the root key is `{kind: 'key', id: 'root', name: 'root'}`), the monitor (a
 * finding: a guardrail, a regression), or the schedule (a rollout's step whose time came, issue 38).
 */
export type Actor = { kind: 'key'; id: string; name: string } | { kind: 'monitor' } | { kind: 'schedule' };

export const ROOT_ACTOR: Actor & { kind: 'key' } = { kind: 'key', id: 'root', name: 'root' };
export const MONITOR_ACTOR: Actor = { kind: 'monitor' };
export const SCHEDULE_ACTOR: Actor = { kind: 'schedule' };

/** The event types written today. */
export const EVENT_TYPES = [
  'experiment.created',
  'experiment.updated',
  'experiment.status_changed',
  'experiment.deleted',
  'key.created',
  'key.revoked',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.delivery_retried',
  'webhook.test',
  'group.saved',
  'group.deleted',
  'dataset.created',
  'dataset.changed',
  'dataset.deleted',
  'run.created',
  'guardrail.failed',
  'srm.detected',
  'verdict.changed',
  'rollout.created',
  'rollout.started',
  'rollout.approved',
  'rollout.step_advanced',
  'rollout.paused',
  'rollout.resumed',
  'rollout.rolled_back',
  'rollout.completed',
] as const;

/** One entry of the history, as the API shows it. */
export interface ChangeEvent {
  /** A UUIDv7: also what a webhook sends as `webhook-id`. */
  id: string;
  /** Dotted: `experiment.updated`, `key.revoked`, … */
  type: string;
  /** ISO 8601, when the change committed (the change's own time). */
  at: string;
  actor: Actor;
  /** The experiment's slug for experiment events (and monitor findings), else null. */
  experiment: string | null;
  data: JsonObject;
}

/** The actor of a principal's changes: the key's name as this instance holds it. */
export function actorOf(principal: Principal, nameOf: (id: string) => string | undefined): Actor {
  if (principal.id === ROOT_ACTOR.id) return ROOT_ACTOR;
  return { kind: 'key', id: principal.id, name: nameOf(principal.id) ?? principal.id };
}

/** Fields compared for `experiment.updated` (status has its own event; updatedAt and active follow). */
const COMPARED = [
  'name',
  'description',
  'variants',
  'metrics',
  'segments',
  'guardrailAction',
  'minimumUnits',
  'targeting',
  'coverage',
  'layer',
  'overrides',
  'defaultVariant',
  'decision',
  'version',
] as const;

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function plain(e: Experiment): JsonObject {
  return JSON.parse(JSON.stringify(e)) as JsonObject;
}

/** What a change makes events of: the time, the actor, and a new id per event. */
export interface EventSource {
  actor: Actor;
  at: string;
  newId: () => string;
}

function event(src: EventSource, type: string, experiment: string | null, data: JsonObject): ChangeEvent {
  return { id: src.newId(), type, at: src.at, actor: src.actor, experiment, data };
}

export function experimentCreated(src: EventSource, e: Experiment): ChangeEvent[] {
  return [event(src, 'experiment.created', e.slug, { experiment: plain(e) })];
}

/**
 * The events of an update: `experiment.updated` with `before`/`after` of the fields that changed (when
 * any but status did), then `experiment.status_changed` with `from`/`to` (when status did). None when
 * nothing changed.
 */
export function experimentChanged(
  src: EventSource,
  before: Experiment,
  after: Experiment,
  /** Why the status changed (the monitor's pause: the failing metric and the verdict sentence). */
  reason?: string,
): ChangeEvent[] {
  const events: ChangeEvent[] = [];
  const was: JsonObject = {};
  const now: JsonObject = {};
  const statusChanged = before.status !== after.status;
  for (const field of COMPARED) {
    // A decision made while completing is told by the status event ("completed, shipped B: …").
    if (field === 'decision' && statusChanged) continue;
    if (!same(before[field], after[field])) {
      was[field] = JSON.parse(JSON.stringify(before[field]));
      now[field] = JSON.parse(JSON.stringify(after[field]));
    }
  }
  if (Object.keys(now).length > 0) {
    events.push(event(src, 'experiment.updated', after.slug, { before: was, after: now }));
  }
  if (statusChanged) {
    const decided = after.decision !== null && !same(before.decision, after.decision);
    events.push(
      event(src, 'experiment.status_changed', after.slug, {
        from: before.status,
        to: after.status,
        ...(reason === undefined ? {} : { reason }),
        ...(decided ? { decision: JSON.parse(JSON.stringify(after.decision)) } : {}),
      }),
    );
  }
  return events;
}

export function experimentDeleted(src: EventSource, e: Experiment): ChangeEvent[] {
  return [event(src, 'experiment.deleted', e.slug, { experiment: plain(e) })];
}

/**
 * A finding of the guardrail monitor about an experiment (`guardrail.failed`, `srm.detected`,
 * `verdict.changed`): recorded, never a change of the experiment itself.
 */
export function finding(src: EventSource, type: string, slug: string, data: JsonObject): ChangeEvent {
  return event(src, type, slug, data);
}

/** A rollout's move (issue 38): `rollout.*` with the rollout's id, variant, step, percent and reason. */
export function rolloutEvent(src: EventSource, type: string, slug: string, data: JsonObject): ChangeEvent {
  return event(src, type, slug, data);
}

/** A created key as the history keeps it: never its secret nor its hash. */
export function keyCreated(src: EventSource, key: ApiKey): ChangeEvent[] {
  return [
    event(src, 'key.created', null, {
      id: key.id,
      name: key.name,
      scopes: [...key.scopes],
      experiments: key.experiments === null ? null : [...key.experiments],
      prefix: key.prefix,
      rateLimitPerSecond: key.rateLimitPerSecond,
    }),
  ];
}

export function keyRevoked(src: EventSource, key: { id: string; name: string }): ChangeEvent[] {
  return [event(src, 'key.revoked', null, { id: key.id, name: key.name })];
}

/**
 * A `type` filter of GET /events: an exact type (`experiment.updated`) or a prefix ending in `.*`
 * (`experiment.*`: every type that starts with `experiment.`); undefined when the text is neither.
 */
export type TypeFilter = { exact: string } | { prefix: string };

export function parseTypeFilter(text: string): TypeFilter | undefined {
  const m = /^([a-z][a-z_]*(?:\.[a-z][a-z_]*)*)(\.\*)?$/.exec(text);
  if (!m) return undefined;
  return m[2] === undefined ? { exact: m[1]! } : { prefix: `${m[1]}.` };
}

export function matchesType(filter: TypeFilter, type: string): boolean {
  return 'exact' in filter ? type === filter.exact : type.startsWith(filter.prefix);
}
