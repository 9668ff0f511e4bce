// What waits in the delivery queue (logs, feedback, exposures), the bounded queue itself, and how each
// item goes on the wire.
import type { FeedbackEntry, JsonObject, LogEntry } from './types.js';

export interface QueuedLog {
  kind: 'log';
  slug: string;
  entry: LogEntry;
  /** Date.now() at the log call: the result's timestamp unless the entry has one. */
  at: number;
}

export interface QueuedFeedback {
  kind: 'feedback';
  slug: string;
  entry: FeedbackEntry;
}

export interface QueuedExposure {
  kind: 'exposure';
  experiment: string;
  assignmentId: string;
  context: JsonObject | undefined;
  at: number;
}

export type QueuedItem = QueuedLog | QueuedFeedback | QueuedExposure;

/** A fixed-capacity FIFO; pushing into a full one drops the oldest item. */
export class Ring<T> {
  private readonly buf: (T | undefined)[];
  private head = 0;
  size = 0;

  constructor(readonly capacity: number) {
    this.buf = new Array(capacity);
  }

  /** Adds `x`; true when the oldest item was dropped to make room. */
  push(x: T): boolean {
    if (this.size === this.capacity) {
      this.buf[this.head] = x;
      this.head = (this.head + 1) % this.capacity;
      return true;
    }
    this.buf[(this.head + this.size) % this.capacity] = x;
    this.size++;
    return false;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const x = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.size--;
    return x;
  }
}

export function describeItem(item: QueuedItem): string {
  return item.kind === 'exposure' ? `an exposure of ${item.experiment}` : `a ${item.kind} of ${item.slug}`;
}

/** The item as it goes on the wire, or a TypeError when JSON.stringify gives nothing. */
export function itemJson(item: QueuedItem): string {
  let json: string | undefined;
  // An item of POST /feedback: its experiment, then the single route's body.
  if (item.kind === 'feedback') json = JSON.stringify({ experiment: item.slug, ...item.entry });
  else if (item.kind === 'log') {
    const { entry, at } = item;
    json = JSON.stringify(entry.timestamp === undefined ? { ...entry, timestamp: iso(at) } : entry);
  } else {
    json = JSON.stringify(
      item.context === undefined
        ? { experiment: item.experiment, assignmentId: item.assignmentId, timestamp: iso(item.at) }
        : {
            experiment: item.experiment,
            assignmentId: item.assignmentId,
            context: item.context,
            timestamp: iso(item.at),
          },
    );
  }
  if (typeof json !== 'string') throw new TypeError('JSON.stringify gave no text');
  return json;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
