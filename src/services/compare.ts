// Two variants' results side by side, grouped by input (issue 36): the newest results of each variant
// (at most MAX_COMPARED each, read a page at a time with turns of the event loop between pages), grouped
// by their input as canonical JSON (core/compare.ts), a page of inputs at a time.
import { type ComparedInput, Comparison } from '../core/compare.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import { someOf } from '../core/messages.js';
import { normalizeTime } from '../core/time.js';
import type { Store } from '../store/store.js';
import type { ExperimentCache } from './experiment-cache.js';

/**
 * Results read per variant, newest first: bounds the work and memory of one request whatever the size
 * of the experiment (about 40,000 rows read in pages of COMPARE_PAGE). The answer says when it stopped
 * short (`truncated`).
 */
export const MAX_COMPARED = 20_000;
/** Rows per read: a few milliseconds of the event loop on SQLite. */
const COMPARE_PAGE = 1000;

export interface CompareQuery {
  a: string;
  b: string;
  metric?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

export interface CompareAnswer {
  a: string;
  b: string;
  metric: string | null;
  inputs: ComparedInput[];
  /** Inputs in all (of the results read). */
  total: number;
  /** Results read per variant. */
  scanned: { a: number; b: number };
  /** True when a variant has more than MAX_COMPARED results in the range: only its newest were read. */
  truncated: boolean;
  nextCursor: string | null;
}

const INVALID_CURSOR = 'cursor is not valid: pass the nextCursor of a previous page unchanged';

/** `c:<upto seq>:<offset>`: the same results (those committed when the first page was read), the next inputs. */
function encode(upto: number, offset: number): string {
  return Buffer.from(`c:${upto}:${offset}`).toString('base64url');
}

function decode(cursor: string): { upto: number; offset: number } {
  const m = /^c:(\d{1,15}):(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new ValidationError(INVALID_CURSOR);
  return { upto: Number(m[1]), offset: Number(m[2]) };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface CompareDeps {
  experiments: Pick<ExperimentCache, 'find'>;
  store: Pick<Store, 'listCompared' | 'lastResultSeq'>;
  /** Results read per variant at most (MAX_COMPARED unless a test says otherwise). */
  maxCompared?: number;
}

export class CompareService {
  constructor(private readonly deps: CompareDeps) {}

  async compare(slug: string, q: CompareQuery): Promise<CompareAnswer> {
    if (q.a === q.b) throw new ValidationError(`a and b are both '${q.a}': compare two different variants`);
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    const keys = live.experiment.variants.map((v) => v.key);
    for (const key of [q.a, q.b]) {
      if (!keys.includes(key)) {
        throw new ValidationError(
          `variant '${key}' is not a variant of experiment '${slug}' (variants: ${someOf(keys)})`,
        );
      }
    }
    const since = q.since === undefined ? undefined : normalizeTime(q.since, 'since');
    const until = q.until === undefined ? undefined : normalizeTime(q.until, 'until');
    if (since !== undefined && until !== undefined && since >= until) {
      throw new ValidationError(`since (${q.since}) is not before until (${q.until}): no result could match`);
    }
    const at = q.cursor === undefined ? undefined : decode(q.cursor);
    const upto = at?.upto ?? (await this.deps.store.lastResultSeq(live.id));
    const comparison = new Comparison();
    const scanned = { a: 0, b: 0 };
    let truncated = false;
    const most = this.deps.maxCompared ?? MAX_COMPARED;
    for (const which of ['a', 'b'] as const) {
      let before: number | undefined;
      for (;;) {
        const want = Math.min(COMPARE_PAGE, most - scanned[which]);
        const rows = await this.deps.store.listCompared({
          experimentId: live.id,
          variantKey: q[which],
          metric: q.metric,
          beforeSeq: before,
          uptoSeq: upto,
          since,
          until,
          limit: want === 0 ? 1 : want,
        });
        if (want === 0) {
          truncated ||= rows.length > 0;
          break;
        }
        for (const row of rows) comparison.add(which, row);
        scanned[which] += rows.length;
        if (rows.length < want) break;
        before = rows[rows.length - 1]!.seq;
        await nextTurn();
      }
    }
    const offset = at?.offset ?? 0;
    const limit = q.limit ?? 20;
    const { inputs, total } = comparison.inputs(offset, limit);
    return {
      a: q.a,
      b: q.b,
      metric: q.metric ?? null,
      inputs,
      total,
      scanned,
      truncated,
      nextCursor: offset + limit < total ? encode(upto, offset + limit) : null,
    };
  }
}
