// Datasets (issue 40, ADR 0046): create, append or change items (a new version only when something
// changed), remove an item, delete, list, read a version's items a page at a time, export a version.
// Every change is an event in the history, written with it, and published once committed.
import { decodeCursor, decodeTimeIdCursor, encodeCursor, encodeTimeIdCursor } from '../core/cursor.js';
import {
  type Dataset,
  datasetChanged,
  datasetCreated,
  datasetDeleted,
  type ItemChange,
  type ItemInput,
  itemContent,
  itemTexts,
  validateDatasetDescription,
  validateDatasetName,
} from '../core/datasets.js';
import { NotFoundError } from '../core/errors.js';
import type { Actor, ChangeEvent, EventSource } from '../core/events.js';
import type { JsonObject } from '../core/json.js';
import type { DatasetStore, StoredItem } from '../store/sql-datasets.js';
import type { EventBus } from './events.js';

export const DEFAULT_DATASET_PAGE = 50;
export const DEFAULT_ITEM_PAGE = 100;
const LIST_CURSOR = 'd';
const ITEM_CURSOR = 'i';
/** Items read per query while exporting. */
const EXPORT_PAGE = 1000;

export interface CreateDatasetInput {
  name: string;
  description?: string;
  items: ItemInput[];
}

export type DatasetChangeView = Dataset & ItemChange;

export interface ItemView {
  id: string;
  input: unknown;
  expected: unknown;
  metadata: JsonObject | null;
  since: number;
}

export interface ItemPage {
  name: string;
  version: number;
  items: ItemView[];
  nextCursor: string | null;
}

export interface DatasetServiceDeps {
  store: DatasetStore;
  newId: () => string;
  now: () => string;
  bus?: EventBus;
}

function view(item: StoredItem): ItemView {
  return { id: item.id, ...itemContent(item), since: item.since };
}

/** An export line: the item as stored, a body item POST /datasets takes back as it is. */
function line(item: StoredItem): string {
  return `{"id":${JSON.stringify(item.id)},"input":${item.input},"expected":${item.expected ?? 'null'},"metadata":${item.metadata ?? 'null'}}\n`;
}

export class DatasetService {
  constructor(private readonly deps: DatasetServiceDeps) {}

  private source(actor: Actor): EventSource {
    return { actor, at: this.deps.now(), newId: this.deps.newId };
  }

  private publish(events: readonly ChangeEvent[]): void {
    this.deps.bus?.publish(events);
  }

  async create(input: CreateDatasetInput, actor: Actor): Promise<Dataset> {
    const name = validateDatasetName(input.name);
    const description = validateDatasetDescription(input.description);
    const items = itemTexts(input.items, this.deps.newId);
    const src = this.source(actor);
    const dataset: Dataset = {
      id: this.deps.newId(),
      name,
      description,
      version: 1,
      items: items.length,
      createdAt: src.at,
      updatedAt: src.at,
    };
    const events = datasetCreated(src, dataset);
    await this.deps.store.createDataset(dataset, items, events);
    this.publish(events);
    return dataset;
  }

  async putItems(name: string, items: ItemInput[], actor: Actor): Promise<DatasetChangeView> {
    const texts = itemTexts(items, this.deps.newId);
    const src = this.source(actor);
    let events: readonly ChangeEvent[] = [];
    const { dataset, change } = await this.deps.store.putItems(name, texts, src.at, (after, c) => {
      events = datasetChanged(src, after, c);
      return events;
    });
    this.publish(events);
    return { ...dataset, ...change };
  }

  async removeItem(name: string, itemId: string, actor: Actor): Promise<DatasetChangeView> {
    const src = this.source(actor);
    let events: readonly ChangeEvent[] = [];
    const { dataset, change } = await this.deps.store.removeItem(name, itemId, src.at, (after, c) => {
      events = datasetChanged(src, after, c);
      return events;
    });
    this.publish(events);
    return { ...dataset, ...change };
  }

  async remove(name: string, actor: Actor): Promise<void> {
    const src = this.source(actor);
    let events: readonly ChangeEvent[] = [];
    const deleted = await this.deps.store.deleteDataset(name, (d) => {
      events = datasetDeleted(src, d);
      return events;
    });
    if (deleted === undefined) throw new NotFoundError(`no dataset named '${name}'`);
    this.publish(events);
  }

  async get(name: string): Promise<Dataset> {
    const found = await this.deps.store.findDataset(name);
    if (found === undefined) throw new NotFoundError(`no dataset named '${name}'`);
    return found;
  }

  /** A page of datasets in creation order; `nextCursor` is null on the last page. */
  async list(
    q: { limit?: number; cursor?: string } = {},
  ): Promise<{ datasets: Dataset[]; nextCursor: string | null }> {
    const limit = q.limit ?? DEFAULT_DATASET_PAGE;
    const after = q.cursor === undefined ? undefined : decodeTimeIdCursor(LIST_CURSOR, q.cursor);
    const rows = await this.deps.store.listDatasets(after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      datasets: page,
      nextCursor:
        rows.length > limit && last !== undefined
          ? encodeTimeIdCursor(LIST_CURSOR, { at: last.createdAt, id: last.id })
          : null,
    };
  }

  /** The dataset and the version asked for (default: the current one); 404 past the current. */
  private async at(
    name: string,
    version: number | undefined,
  ): Promise<{ dataset: Dataset; version: number }> {
    const dataset = await this.get(name);
    const v = version ?? dataset.version;
    if (v < 1 || v > dataset.version) {
      throw new NotFoundError(
        `dataset '${name}' has no version ${v} (its versions are 1 to ${dataset.version})`,
      );
    }
    return { dataset, version: v };
  }

  /** A page of a version's items, in the order first added. */
  async items(
    name: string,
    q: { version?: number; limit?: number; cursor?: string } = {},
  ): Promise<ItemPage> {
    const after = q.cursor === undefined ? 0 : decodeCursor(ITEM_CURSOR, q.cursor);
    const { dataset, version } = await this.at(name, q.version);
    const limit = q.limit ?? DEFAULT_ITEM_PAGE;
    const rows = await this.deps.store.itemPage(dataset.id, version, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      name,
      version,
      items: page.map(view),
      nextCursor: rows.length > limit && last !== undefined ? encodeCursor(ITEM_CURSOR, last.position) : null,
    };
  }

  /**
   * A version's items as NDJSON lines, read a page at a time while they are sent (memory stays flat). The
   * version is fixed when the export starts: changes made meanwhile make later versions, not this one.
   */
  async exportItems(
    name: string,
    version?: number,
  ): Promise<{ dataset: Dataset; version: number; lines: AsyncGenerator<string> }> {
    const at = await this.at(name, version);
    const store = this.deps.store;
    async function* lines(): AsyncGenerator<string> {
      let after = 0;
      for (;;) {
        const page = await store.itemPage(at.dataset.id, at.version, after, EXPORT_PAGE);
        if (page.length > 0) yield page.map(line).join('');
        if (page.length < EXPORT_PAGE) return;
        after = page.at(-1)!.position;
      }
    }
    return { ...at, lines: lines() };
  }
}
