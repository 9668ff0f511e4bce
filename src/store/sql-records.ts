// The SQL store's connections and its smaller tables: managed keys, saved groups, Idempotency-Keys and
// the history (events). SqlExperiments (sql-experiments.ts) extends it with experiments and rollouts, and
// SqlStore (sql-store.ts) extends that with results and rollups.
import type { Kysely, Transaction } from 'kysely';
import { UnavailableError } from '../core/errors.js';
import type { ChangeEvent } from '../core/events.js';
import type { JsonObject } from '../core/json.js';
import type { SqlDatabase } from './database.js';
import { insertEventRows, selectEvents, selectMonitorState, upsertMonitorState } from './event-rows.js';
import { bumpRevision } from './experiment-rows.js';
import { deleteGroupRow, lockGroupRow, selectGroups, upsertGroupRow } from './group-rows.js';
import {
  claimIdempotencyRow,
  deleteIdempotencyRowsBefore,
  deletePendingIdempotencyRow,
  selectIdempotencyKey,
} from './idempotency-rows.js';
import type { InstanceLock } from './instance-lock.js';
import { insertKeyRow, revokeKeyRow, selectKeyPage, selectKeys, updateKeyUse } from './key-rows.js';
import type { LeaderLock } from './leader-lock.js';
import type { Database } from './schema.js';
import { SqlDatasets } from './sql-datasets.js';
import { translatingErrors } from './sql-errors.js';
import { SqlRuns } from './sql-runs.js';
import { SqlTraces } from './sql-traces.js';
import { SqlWebhooks } from './sql-webhooks.js';
import type {
  EventQuery,
  EventStore,
  IdempotencyRow,
  IdempotencyStore,
  KeyStore,
  MonitorStore,
  StoredEvent,
  StoredGroup,
  StoredKey,
} from './store.js';

/** The monitor's job key among leader locks (PostgreSQL). */
const MONITOR_LEADER = 1;

export class SqlRecords implements KeyStore, IdempotencyStore, EventStore, MonitorStore {
  protected readonly readWrite: Kysely<Database>;
  protected readonly readOnly: Kysely<Database>;
  /** This process's liveness to other instances (PostgreSQL, once startInstance ran). */
  private instance: InstanceLock | undefined;
  /** Webhook endpoints and their deliveries (sql-webhooks.ts). */
  readonly webhooks: SqlWebhooks;
  /** Spans and the runs read from them (sql-traces.ts). */
  readonly traces: SqlTraces;
  /** Offline runs (sql-runs.ts). */
  readonly runs: SqlRuns;
  /** Datasets and the versions of their items (sql-datasets.ts). */
  readonly datasets: SqlDatasets;
  /** Who runs the monitor's round (PostgreSQL; taken on the first round). */
  private monitorLock: LeaderLock | undefined;

  constructor(protected readonly db: SqlDatabase) {
    this.readWrite = db.readWrite;
    this.readOnly = db.readOnly;
    this.webhooks = new SqlWebhooks(db);
    this.traces = new SqlTraces(db);
    this.runs = new SqlRuns(db);
    this.datasets = new SqlDatasets(db);
  }

  /** Runs `work`, its database errors said as the domain's (sql-errors.ts). */
  protected run<T>(work: () => Promise<T>): Promise<T> {
    return translatingErrors(this.db, work);
  }

  listKeys(): Promise<StoredKey[]> {
    return this.run(() => selectKeys(this.readOnly));
  }

  listKeyPage(after: { createdAt: string; id: string } | undefined, limit: number): Promise<StoredKey[]> {
    return this.run(() => selectKeyPage(this.readOnly, after, limit));
  }

  insertKey(key: StoredKey, events?: readonly ChangeEvent[]): Promise<void> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        await insertKeyRow(trx, key);
        await insertEventRows(trx, events);
        await this.changed(trx);
      }),
    );
  }

  revokeKey(
    id: string,
    at: string,
    events?: (revoked: { id: string; name: string }) => readonly ChangeEvent[],
  ): Promise<boolean> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        const name = await revokeKeyRow(trx, id, at);
        if (name === undefined) return false;
        await insertEventRows(trx, events?.({ id, name }));
        await this.changed(trx);
        return true;
      }),
    );
  }

  listGroups(): Promise<StoredGroup[]> {
    return this.run(() => selectGroups(this.readOnly));
  }

  putGroup(
    group: StoredGroup,
    events: (before: StoredGroup | undefined, after: StoredGroup) => readonly ChangeEvent[],
  ): Promise<StoredGroup> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        const before = await lockGroupRow(trx, group.key, this.db.dialect === 'postgres');
        const after = { ...group, createdAt: before?.createdAt ?? group.createdAt };
        await upsertGroupRow(trx, after);
        await insertEventRows(trx, events(before, after));
        await this.changed(trx);
        return after;
      }),
    );
  }

  deleteGroup(key: string, events: (deleted: StoredGroup) => readonly ChangeEvent[]): Promise<boolean> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        const before = await lockGroupRow(trx, key, this.db.dialect === 'postgres');
        if (before === undefined) return false;
        await deleteGroupRow(trx, key);
        await insertEventRows(trx, events(before));
        await this.changed(trx);
        return true;
      }),
    );
  }

  listEvents(q: EventQuery): Promise<StoredEvent[]> {
    return this.run(() => selectEvents(this.readOnly, q));
  }

  recordEvents(events: readonly ChangeEvent[]): Promise<void> {
    return this.run(() => this.readWrite.transaction().execute((trx) => insertEventRows(trx, events)));
  }

  leadMonitor(): Promise<boolean> {
    if (this.db.leaderLock === undefined) return Promise.resolve(true);
    this.monitorLock ??= this.db.leaderLock(MONITOR_LEADER);
    return this.monitorLock.tryLead();
  }

  readMonitorState(experimentId: number): Promise<JsonObject | undefined> {
    return this.run(() => selectMonitorState(this.readOnly, experimentId));
  }

  recordFindings(
    experimentId: number,
    state: JsonObject,
    at: string,
    events: readonly ChangeEvent[],
  ): Promise<void> {
    return this.run(() =>
      this.readWrite.transaction().execute(async (trx) => {
        await upsertMonitorState(trx, experimentId, state, at);
        await insertEventRows(trx, events);
      }),
    );
  }

  recordKeyUse(uses: Array<{ id: string; at: string }>): Promise<void> {
    return this.run(() => updateKeyUse(this.readWrite, uses));
  }

  findIdempotencyKey(owner: string, key: string, since: string): Promise<IdempotencyRow | undefined> {
    return this.run(() => selectIdempotencyKey(this.readOnly, owner, key, since));
  }

  /**
   * Where several processes write (PostgreSQL): takes the lock that tells other instances this one is
   * alive, so its Idempotency-Key claims hold while it runs and no longer once it is gone (ADR 0016).
   * Released by close(). Nothing on SQLite.
   */
  async startInstance(): Promise<void> {
    if (this.instance !== undefined || this.db.holdInstanceLock === undefined) return;
    this.instance = await this.run(() => this.db.holdInstanceLock!());
  }

  claimIdempotencyKey(
    owner: string,
    key: string,
    fingerprint: string,
    now: string,
    since: string,
    staleBefore: string,
  ): Promise<boolean> {
    const instance = this.instance;
    // Without its lock this instance is not alive to the others, which may take its claims over: it
    // claims nothing until the lock is back.
    if (instance !== undefined && !instance.held) {
      return Promise.reject(
        new UnavailableError('this instance lost its lock on the database; retry shortly', 1),
      );
    }
    return this.run(() =>
      claimIdempotencyRow(this.readWrite, { owner, key, fingerprint, now, since, staleBefore, instance }),
    );
  }

  releaseIdempotencyKey(owner: string, key: string): Promise<void> {
    return this.run(() => deletePendingIdempotencyRow(this.readWrite, owner, key));
  }

  pruneIdempotencyKeys(before: string): Promise<number> {
    return this.run(() => deleteIdempotencyRowsBefore(this.readWrite, before));
  }

  /** True when one process owns the data (SQLite): claims need not be written for other instances. */
  get singleProcess(): boolean {
    return this.db.dialect === 'sqlite';
  }

  /** Every change bumps the revision and is announced to other instances (delivered at commit). */
  protected async changed(trx: Transaction<Database>): Promise<void> {
    await bumpRevision(trx);
    await this.db.announceExperimentChange(trx);
  }
}
