// The store of datasets (issue 40, ADR 0046) for both databases: a row per dataset (its current version and
// item count) and a row per item content, from the version that added or changed it until the version that
// replaced or removed it (migration 030), so every version reads exactly. Each change, its new version and its
// events commit in one transaction. The SQL store only (the runtime's store).
import type { Selectable, Transaction } from 'kysely';
import type { TimeIdPosition } from '../core/cursor.js';
import {
  type Dataset,
  diffItems,
  type ItemChange,
  type ItemContent,
  type ItemText,
  itemContent,
} from '../core/datasets.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { ChangeEvent } from '../core/events.js';
import type { SqlDatabase } from './database.js';
import { insertEventRows } from './event-rows.js';
import { type Database, type DatasetsTable, isoTime } from './schema.js';
import { translatingErrors } from './sql-errors.js';

/** An item as one version holds it. */
export interface StoredItem extends ItemText {
  /** The order it was first added in (kept when it changes): pages are in this order. */
  position: number;
  /** The version that added it or last changed it. */
  since: number;
}

/** What a change of items answers: the dataset after it (the same version when nothing changed) and the counts. */
export interface ItemsChanged {
  dataset: Dataset;
  change: ItemChange;
}

/** The events of a change of items, made from the dataset after it and what it did. */
export type ItemEvents = (after: Dataset, change: ItemChange) => readonly ChangeEvent[];

export interface DatasetStore {
  /** Inserts the dataset (version 1) with its items and events, in one transaction; 409 when the name is taken. */
  createDataset(dataset: Dataset, items: readonly ItemText[], events: readonly ChangeEvent[]): Promise<void>;
  /**
   * Adds the items with new ids and changes those whose content differs, as one new version with its
   * events; items sent as they are change nothing, and when nothing changed the version stays (no event).
   */
  putItems(name: string, items: readonly ItemText[], at: string, events: ItemEvents): Promise<ItemsChanged>;
  /** Removes a current item in a new version with its events; 404 when the dataset or the item is not there. */
  removeItem(name: string, itemId: string, at: string, events: ItemEvents): Promise<ItemsChanged>;
  /** Deletes the dataset and every version of its items with its events; undefined when there is none. */
  deleteDataset(
    name: string,
    events: (deleted: Dataset) => readonly ChangeEvent[],
  ): Promise<Dataset | undefined>;
  findDataset(name: string): Promise<Dataset | undefined>;
  /** Up to `limit` datasets after `after`, in creation order (created_at, then id). */
  listDatasets(after: TimeIdPosition | undefined, limit: number): Promise<Dataset[]>;
  /** Up to `limit` items of `version` after `afterPosition` (0: from the first), in the order first added. */
  itemPage(datasetId: string, version: number, afterPosition: number, limit: number): Promise<StoredItem[]>;
  /** Every item of `version` by id, in the order first added (what an offline run answers). */
  itemsAt(datasetId: string, version: number): Promise<Map<string, ItemContent>>;
}

/** Ids per IN list and rows per INSERT (8 columns: well within both engines' parameter limits). */
const CHUNK = 500;
/** Items read per query by itemsAt. */
const PAGE = 5000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

function toDataset(row: Selectable<DatasetsTable>): Dataset {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    version: Number(row.version),
    items: Number(row.items),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

function itemRow(datasetId: string, item: ItemText, version: number, position: number) {
  return {
    dataset_id: datasetId,
    item_id: item.id,
    added_in: version,
    removed_in: null,
    position,
    input: item.input,
    expected: item.expected,
    metadata: item.metadata,
  };
}

export class SqlDatasets implements DatasetStore {
  constructor(private readonly db: SqlDatabase) {}

  private run<T>(work: () => Promise<T>): Promise<T> {
    return translatingErrors(this.db, work);
  }

  /** The dataset named `name`, its row locked until the transaction ends on PostgreSQL (SQLite has one writer). */
  private async lock(trx: Transaction<Database>, name: string): Promise<Dataset | undefined> {
    let query = trx.selectFrom('datasets').selectAll().where('name', '=', name);
    if (this.db.dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row === undefined ? undefined : toDataset(row);
  }

  private async found(trx: Transaction<Database>, name: string): Promise<Dataset> {
    const d = await this.lock(trx, name);
    if (d === undefined) throw new NotFoundError(`no dataset named '${name}'`);
    return d;
  }

  private async insertItems(trx: Transaction<Database>, rows: ReturnType<typeof itemRow>[]): Promise<void> {
    for (const part of chunks(rows)) await trx.insertInto('dataset_items').values(part).execute();
  }

  /** Sets the dataset's version, count and time, and writes the change's events. */
  private async commitVersion(
    trx: Transaction<Database>,
    after: Dataset,
    events: readonly ChangeEvent[],
  ): Promise<void> {
    await trx
      .updateTable('datasets')
      .set({ version: after.version, items: after.items, updated_at: after.updatedAt })
      .where('id', '=', after.id)
      .execute();
    await insertEventRows(trx, events);
  }

  createDataset(d: Dataset, items: readonly ItemText[], events: readonly ChangeEvent[]): Promise<void> {
    return this.run(async () => {
      try {
        await this.db.readWrite.transaction().execute(async (trx) => {
          const { createdAt: created_at, updatedAt: updated_at, ...rest } = d;
          await trx
            .insertInto('datasets')
            .values({ ...rest, created_at, updated_at })
            .execute();
          await this.insertItems(
            trx,
            items.map((item, i) => itemRow(d.id, item, d.version, i + 1)),
          );
          await insertEventRows(trx, events);
        });
      } catch (err) {
        if (!this.db.isUniqueViolation(err)) throw err;
        throw new ConflictError(`a dataset named '${d.name}' already exists`);
      }
    });
  }

  putItems(name: string, items: readonly ItemText[], at: string, events: ItemEvents): Promise<ItemsChanged> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        const before = await this.found(trx, name);
        const current = new Map<string, ItemText & { position: number }>();
        for (const ids of chunks(items.map((i) => i.id))) {
          const rows = await trx
            .selectFrom('dataset_items')
            .select(['item_id as id', 'position', 'input', 'expected', 'metadata'])
            .where('dataset_id', '=', before.id)
            .where('item_id', 'in', ids)
            .where('removed_in', 'is', null)
            .execute();
          for (const r of rows) current.set(r.id, { ...r, position: Number(r.position) });
        }
        const { added, changed, unchanged } = diffItems(current, items);
        const change = { added: added.length, changed: changed.length, removed: 0, unchanged };
        if (added.length + changed.length === 0) return { dataset: before, change };
        const version = before.version + 1;
        for (const ids of chunks(changed.map((i) => i.id))) {
          await trx
            .updateTable('dataset_items')
            .set({ removed_in: version })
            .where('dataset_id', '=', before.id)
            .where('item_id', 'in', ids)
            .where('removed_in', 'is', null)
            .execute();
        }
        const last = await trx
          .selectFrom('dataset_items')
          .select((eb) => eb.fn.max('position').as('last'))
          .where('dataset_id', '=', before.id)
          .executeTakeFirst();
        let next = Number(last?.last ?? 0) + 1;
        await this.insertItems(trx, [
          ...changed.map((i) => itemRow(before.id, i, version, current.get(i.id)!.position)),
          ...added.map((i) => itemRow(before.id, i, version, next++)),
        ]);
        const after = { ...before, version, items: before.items + added.length, updatedAt: at };
        await this.commitVersion(trx, after, events(after, change));
        return { dataset: after, change };
      }),
    );
  }

  removeItem(name: string, itemId: string, at: string, events: ItemEvents): Promise<ItemsChanged> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        const before = await this.found(trx, name);
        const version = before.version + 1;
        const removed = await trx
          .updateTable('dataset_items')
          .set({ removed_in: version })
          .where('dataset_id', '=', before.id)
          .where('item_id', '=', itemId)
          .where('removed_in', 'is', null)
          .executeTakeFirst();
        if (Number(removed.numUpdatedRows) === 0) {
          throw new NotFoundError(`no item '${itemId}' in version ${before.version} of dataset '${name}'`);
        }
        const change = { added: 0, changed: 0, removed: 1, unchanged: before.items - 1 };
        const after = { ...before, version, items: before.items - 1, updatedAt: at };
        await this.commitVersion(trx, after, events(after, change));
        return { dataset: after, change };
      }),
    );
  }

  deleteDataset(
    name: string,
    events: (deleted: Dataset) => readonly ChangeEvent[],
  ): Promise<Dataset | undefined> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        const before = await this.lock(trx, name);
        if (before === undefined) return undefined;
        await trx.deleteFrom('dataset_items').where('dataset_id', '=', before.id).execute();
        await trx.deleteFrom('datasets').where('id', '=', before.id).execute();
        await insertEventRows(trx, events(before));
        return before;
      }),
    );
  }

  findDataset(name: string): Promise<Dataset | undefined> {
    return this.run(async () => {
      const row = await this.db.readOnly
        .selectFrom('datasets')
        .selectAll()
        .where('name', '=', name)
        .executeTakeFirst();
      return row === undefined ? undefined : toDataset(row);
    });
  }

  listDatasets(after: TimeIdPosition | undefined, limit: number): Promise<Dataset[]> {
    return this.run(async () => {
      let query = this.db.readOnly.selectFrom('datasets').selectAll();
      if (after !== undefined) {
        // A row value comparison, which both engines answer from the index (created_at, id).
        query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.at, after.id)));
      }
      const rows = await query.orderBy('created_at').orderBy('id').limit(limit).execute();
      return rows.map(toDataset);
    });
  }

  itemPage(datasetId: string, version: number, afterPosition: number, limit: number): Promise<StoredItem[]> {
    return this.run(async () => {
      const rows = await this.db.readOnly
        .selectFrom('dataset_items')
        .select(['item_id', 'position', 'added_in', 'input', 'expected', 'metadata'])
        .where('dataset_id', '=', datasetId)
        .where('position', '>', afterPosition)
        .where('added_in', '<=', version)
        .where((eb) => eb.or([eb('removed_in', 'is', null), eb('removed_in', '>', version)]))
        .orderBy('position')
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        id: r.item_id,
        input: r.input,
        expected: r.expected,
        metadata: r.metadata,
        position: Number(r.position),
        since: Number(r.added_in),
      }));
    });
  }

  async itemsAt(datasetId: string, version: number): Promise<Map<string, ItemContent>> {
    const out = new Map<string, ItemContent>();
    let after = 0;
    for (;;) {
      const page = await this.itemPage(datasetId, version, after, PAGE);
      for (const item of page) out.set(item.id, itemContent(item));
      if (page.length < PAGE) return out;
      after = page.at(-1)!.position;
    }
  }
}
