// How queued items become batches (logs per experiment, exposures and feedback of every experiment
// together), each batch's body, and what an answer's status means for a batch.
import { itemJson, type QueuedItem } from './queue.js';

export interface Batch {
  kind: QueuedItem['kind'];
  /** Each item's own JSON, made when the batch was formed. */
  json: string[];
  path: string;
  /** Made of one item of a batch that was refused or kept failing: given up sooner. */
  split: boolean;
}

/** Statuses after which the same request is sent again (with the same Idempotency-Key). */
export function retryable(status: number): boolean {
  return status >= 500 || status === 429 || status === 409 || status === 408;
}

/**
 * A 5xx other than 503: maybe this batch's own fault (one experiment, one item), so it is retried at
 * most MAX_FAILING_ATTEMPTS times, then item by item once, then dropped. 503, 408, 409, 429 and network
 * errors say the service is busy or away: those are retried until answered.
 */
export function failing(status: number): boolean {
  return status >= 500 && status !== 503;
}

export const MAX_FAILING_ATTEMPTS = 5;

/** Where each kind of batch goes (logs: per experiment), and the field holding its items. */
const PATHS: Record<QueuedItem['kind'], (slug: string) => string> = {
  log: (slug) => `/experiment/${encodeURIComponent(slug)}/logs`,
  exposure: () => '/exposures',
  feedback: () => '/feedback',
};
const FIELDS: Record<QueuedItem['kind'], string> = {
  log: 'results',
  exposure: 'exposures',
  feedback: 'feedback',
};

/**
 * Batches in the order their first item was queued: logs per experiment, exposures of every experiment
 * together (POST /exposures), feedback of every experiment together (POST /feedback), at most `batchSize`
 * items each. Each item is serialised here, on its own: one that cannot be (a BigInt, a circular object)
 * goes to `drop` and its neighbours go.
 */
export function formBatches(
  items: QueuedItem[],
  batchSize: number,
  drop: (item: QueuedItem, err: unknown) => void,
): Batch[] {
  const batches: Batch[] = [];
  const open = new Map<string, Batch>();
  for (const item of items) {
    let json: string;
    try {
      json = itemJson(item);
    } catch (err) {
      drop(item, err);
      continue;
    }
    const key = item.kind === 'log' ? `l:${item.slug}` : item.kind;
    let batch = open.get(key);
    if (batch === undefined || batch.json.length >= batchSize) {
      batch = {
        kind: item.kind,
        json: [],
        path: PATHS[item.kind](item.kind === 'log' ? item.slug : ''),
        split: false,
      };
      open.set(key, batch);
      batches.push(batch);
    }
    batch.json.push(json);
  }
  return batches;
}

/** The body of POST `batch.path`: its items' JSON under the route's field. */
export function batchBody(batch: Batch): string {
  return `{"${FIELDS[batch.kind]}":[${batch.json.join(',')}]}`;
}
