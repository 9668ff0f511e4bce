// The storage contract every backend fulfils; services depend on narrow slices of it. The shapes results
// and rollups are read in are in result-types.ts and rollup-types.ts.

import type { ComparedRow } from '../core/compare.js';
import type { ChangeEvent, TypeFilter } from '../core/events.js';
import type { Experiment } from '../core/experiment.js';
import type { Exposure } from '../core/exposure.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { JsonObject } from '../core/json.js';
import type { ApiKey } from '../core/keys.js';
import type { Rollout } from '../core/rollout.js';
import type { Variant } from '../core/variants.js';
import type { BatchDecisions, WriteBatch } from '../core/writes.js';
import type { ComparedQuery, ResultPage, ResultQuery, ResultTarget } from './result-types.js';
import type { HourlyData, Rollups, SegmentRows } from './rollup-types.js';

/** An experiment with the store's internal id, which results and exposures reference. */
export interface StoredExperiment {
  id: number;
  experiment: Experiment;
  /** Its newest rollout (issue 38), live or ended; absent when it has none. */
  rollout?: StoredRollout;
}

/** A rollout as stored: the rules' view (core/rollout.ts) with its id, experiment and version of moves. */
export interface StoredRollout {
  id: string;
  experimentId: number;
  /** Moves written so far (1 when inserted): a move is written only over the version it was planned from. */
  version: number;
  rollout: Rollout;
}

/** The experiment as a move leaves it, and the events of that change. */
export type ExperimentChange = (current: Experiment) => { next: Experiment; events: readonly ChangeEvent[] };

/** Rollouts (issue 38): started and moved with their events, each in one transaction with the experiment locked. */
export interface RolloutStore {
  /**
   * Inserts the rollout `build` makes of the (locked) experiment, with its events; ConflictError when the
   * experiment has a live rollout already (one at a time). Answers the experiment with it.
   */
  insertRollout(
    slug: string,
    build: (current: StoredExperiment) => { rollout: StoredRollout; events: readonly ChangeEvent[] },
  ): Promise<StoredExperiment>;
  /**
   * Writes `next` over version `from` of rollout `id`, with its events; undefined (nothing written) when
   * another move was written first.
   */
  moveRollout(
    slug: string,
    id: string,
    from: number,
    next: Rollout,
    events: readonly ChangeEvent[],
    /** A change of the experiment that goes with the move (the release at completion), with its events. */
    change?: ExperimentChange,
  ): Promise<StoredExperiment | undefined>;
}

/** A variant definition an experiment has had, and when it started. */
export interface StoredVersion {
  version: number;
  variants: Variant[];
  createdAt: string;
}

/** A saved group as stored (migration 021, ADR 0038): its values in the order sent, duplicates dropped. */
export interface StoredGroup {
  key: string;
  description: string;
  values: Array<string | number>;
  createdAt: string;
  updatedAt: string;
}

/** Store methods throw UnavailableError when the database cannot be reached; it is worth a retry. */
export interface Store extends RolloutStore {
  listExperiments(): Promise<StoredExperiment[]>;
  findExperiment(slug: string): Promise<StoredExperiment | undefined>;
  /**
   * Inserts a new experiment; ConflictError when the slug exists. `answer`, when given, commits in the
   * same transaction (an Idempotency-Key's stored answer).
   */
  insertExperiment(
    experiment: Experiment,
    record?: IdempotencyRecord,
    events?: readonly ChangeEvent[],
  ): Promise<StoredExperiment>;
  /**
   * Reads the experiment, applies `change` (which may throw a domain error) and writes the result, all
   * in one transaction, with the events `events` makes of the change. NotFoundError when the slug is unknown.
   */
  updateExperiment(
    slug: string,
    change: (current: Experiment) => Experiment,
    events?: (before: Experiment, after: Experiment) => readonly ChangeEvent[],
  ): Promise<StoredExperiment>;
  /**
   * Deletes in one transaction after `guard` approved, given whether any result references it, with the
   * events `events` makes of the deleted experiment.
   */
  deleteExperiment(
    slug: string,
    guard: (current: Experiment, hasResults: boolean) => void,
    events?: (deleted: Experiment) => readonly ChangeEvent[],
  ): Promise<void>;
  /**
   * Commits results and exposures in one transaction, with the rollups that summarize them; resolves
   * only once committed. NotFoundError (nothing written) when a result's experiment does not exist.
   */
  appendBatch(batch: WriteBatch): Promise<BatchDecisions>;
  listResults(query: ResultQuery): Promise<ResultPage>;
  /** One variant's results with their score (null without one), newest first: what a comparison reads. */
  listCompared(query: ComparedQuery): Promise<ComparedRow[]>;
  /** The newest result position of an experiment (0 when none), to bound an export. */
  lastResultSeq(experimentId: number): Promise<number>;
  countExposures(experimentId: number): Promise<number>;
  /** Statements sent to the database so far, where the store counts them (PostgreSQL). */
  statementsSent?(): number;
  /** Every exposure of an experiment, in the order they were assigned (rows of every stored form). */
  listExposures(experimentId: number): Promise<Exposure[]>;
  /** The live rollups of one experiment, every version: what analysis reads instead of results. */
  readRollups(experimentId: number): Promise<Rollups>;
  /** One segment key's rollups (core/segments.ts): metric sums and result counts per value, version, variant. */
  readSegments(experimentId: number, key: string): Promise<SegmentRows>;
  /** Every variant definition the experiment has had, oldest first. */
  listVersions(experimentId: number): Promise<StoredVersion[]>;
  /** The hourly rollups of one experiment, every version, oldest hour first. */
  readHourly(experimentId: number): Promise<HourlyData>;
  /** The result `logId` of an experiment, for feedback on it; undefined when there is none. */
  findResult(experimentId: number, logId: string): Promise<ResultTarget | undefined>;
  /** The results among `logIds` of an experiment, by logId (a batch of feedback); absent: none there. */
  findResults(experimentId: number, logIds: readonly string[]): Promise<Map<string, ResultTarget>>;
  /**
   * Recomputes the rollups of one experiment (or all) from the raw results and exposures, replacing
   * the live ones in one transaction. Returns how many results and exposures it read.
   */
  rebuildRollups(experimentId?: number): Promise<{ results: number; exposures: number }>;
  /** Every saved group with its values, by key. */
  listGroups(): Promise<StoredGroup[]>;
  /**
   * Inserts the group or replaces the one of its key (keeping that one's createdAt), with the events
   * `events` makes of the change, in one transaction that also bumps the revision (other instances
   * reload groups with experiments). Answers what is stored.
   */
  putGroup(
    group: StoredGroup,
    events: (before: StoredGroup | undefined, after: StoredGroup) => readonly ChangeEvent[],
  ): Promise<StoredGroup>;
  /** Deletes the group with the events `events` makes of it (bumping the revision); false when there is none. */
  deleteGroup(key: string, events: (deleted: StoredGroup) => readonly ChangeEvent[]): Promise<boolean>;
  /** Bumped by every change to experiments; instances compare it to notice changes made elsewhere. */
  experimentsRevision(): Promise<number>;
  /**
   * Calls `onChange` whenever another process may have changed experiments; undefined when no other
   * process can change them. Returns a function that stops watching.
   */
  watchExperiments?(onChange: () => void): Promise<() => Promise<void>>;
  /** Throws when the database cannot be reached for reads and writes. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A managed key as stored: its keyed hash, never its secret. */
export interface StoredKey extends ApiKey {
  hash: string;
}

/** Managed API keys. Every change bumps the revision other instances watch (experimentsRevision). */
export interface KeyStore {
  /** Every key not revoked (what the edge authenticates against, loaded at start and on changes). */
  listKeys(): Promise<StoredKey[]>;
  /** Up to `limit` keys not revoked, in creation order (createdAt, then id), after `after` when given. */
  listKeyPage(after: { createdAt: string; id: string } | undefined, limit: number): Promise<StoredKey[]>;
  /** Inserts the key and `events` in one transaction. */
  insertKey(key: StoredKey, events?: readonly ChangeEvent[]): Promise<void>;
  /** False when no unrevoked key has this id; else the events `events` makes of it commit with the revocation. */
  revokeKey(
    id: string,
    at: string,
    events?: (revoked: { id: string; name: string }) => readonly ChangeEvent[],
  ): Promise<boolean>;
  /** Records when keys were last used (kept in memory and written now and then). */
  recordKeyUse(uses: Array<{ id: string; at: string }>): Promise<void>;
}

/** An event with its position in the history (commit order of its insert; the pages' cursor). */
export interface StoredEvent extends ChangeEvent {
  seq: number;
}

export interface EventQuery {
  /** Only this experiment's events (by slug: a deleted and re-created slug shows both lives). */
  experiment?: string;
  type?: TypeFilter;
  /** at >= since */
  since?: string;
  /** Only events after this position (exclusive). */
  afterSeq?: number;
  limit: number;
}

/** The history (issue 27): written with the changes themselves; read oldest first. */
export interface EventStore {
  listEvents(query: EventQuery): Promise<StoredEvent[]>;
  /** Events that record no change of their own (the monitor's findings), in one transaction. */
  recordEvents(events: readonly ChangeEvent[]): Promise<void>;
}

/** The guardrail monitor's slice (services/monitor.ts): who runs the round, and what it last found. */
export interface MonitorStore {
  /** True when this process runs the monitor's round now (PostgreSQL: one instance; SQLite: always). */
  leadMonitor(): Promise<boolean>;
  /** The last findings recorded for the experiment (its internal id); undefined before the first. */
  readMonitorState(experimentId: number): Promise<JsonObject | undefined>;
  /** Writes the findings and the events they raise, in one transaction. */
  recordFindings(
    experimentId: number,
    state: JsonObject,
    at: string,
    events: readonly ChangeEvent[],
  ): Promise<void>;
}

/** A stored Idempotency-Key: `pending` while its first request runs, `done` with the answer. */
export interface IdempotencyRow {
  fingerprint: string;
  state: 'pending' | 'done';
  status: number | null;
  answer: string | null;
  createdAt: string;
}

/** Idempotency-Keys (ADR 0016); answers themselves are written with the data (appendBatch, insertExperiment). */
export interface IdempotencyStore {
  /** The row for this owner and key created at or after `since` (older rows count as absent). */
  findIdempotencyKey(owner: string, key: string, since: string): Promise<IdempotencyRow | undefined>;
  /**
   * Claims the key for a first request: true when this call inserted a pending row, or replaced one
   * older than `since` or a pending one claimed before `staleBefore` (its instance is presumed gone).
   */
  claimIdempotencyKey(
    owner: string,
    key: string,
    fingerprint: string,
    now: string,
    since: string,
    staleBefore: string,
  ): Promise<boolean>;
  /** Forgets a pending claim (its request failed before writing anything). */
  releaseIdempotencyKey(owner: string, key: string): Promise<void>;
  /** Deletes every row created before `before`; returns how many. */
  pruneIdempotencyKeys(before: string): Promise<number>;
}
