// Two variants' results grouped by their input (issue 36): per input, how many results each variant has,
// their mean score, the win rate of one over the other, and the newest outputs. Pure: the service feeds
// rows in (newest first, per variant) and reads the groups out.
import type { JsonObject, JsonValue } from './json.js';

/** JSON text with object keys sorted: the same input sent with its keys in another order matches. */
export function canonicalJson(value: JsonValue | undefined): string {
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** One result as the comparison reads it: what it was asked, what it answered, its score (or null). */
export interface ComparedRow {
  seq: number;
  logId: string;
  input: JsonObject | null;
  output: JsonObject | null;
  createdAt: string;
  score: number | null;
}

/** Outputs kept per variant and input, newest first. */
export const OUTPUTS_SHOWN = 3;

export interface ComparedOutput {
  logId: string;
  output: JsonObject | null;
  createdAt: string;
}

export interface ComparedSide {
  /** Results of this variant for the input. */
  n: number;
  /** Of them, those with a score. */
  scored: number;
  /** Mean score of those; null when none has one. */
  mean: number | null;
  outputs: ComparedOutput[];
}

export interface ComparedInput {
  input: JsonObject | null;
  /** Results of both variants for the input. */
  n: number;
  /** The newest result's createdAt. */
  lastAt: string;
  /**
   * Over every pair of an a-result and a b-result that both have a score: the share where a scores
   * higher, a tie counting half. Null when there is no such pair.
   */
  winRate: number | null;
  a: ComparedSide;
  b: ComparedSide;
}

interface Side {
  n: number;
  scores: number[];
  outputs: ComparedOutput[];
}

interface Group {
  input: JsonObject | null;
  lastSeq: number;
  lastAt: string;
  a: Side;
  b: Side;
}

const newSide = (): Side => ({ n: 0, scores: [], outputs: [] });

/** How many of the sorted `values` are below `v`, and how many equal it. */
function rank(values: number[], v: number): { below: number; equal: number } {
  const first = (strict: boolean) => {
    let lo = 0;
    let hi = values.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (strict ? values[mid]! < v : values[mid]! <= v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const below = first(true);
  return { below, equal: first(false) - below };
}

/** The win rate of scores `a` over scores `b` (ties half), null when either is empty. */
export function winRate(a: readonly number[], b: readonly number[]): number | null {
  if (a.length === 0 || b.length === 0) return null;
  const sorted = [...b].sort((x, y) => x - y);
  let wins = 0;
  for (const v of a) {
    const { below, equal } = rank(sorted, v);
    wins += below + equal / 2;
  }
  return wins / (a.length * b.length);
}

function side(s: Side): ComparedSide {
  const sum = s.scores.reduce((t, v) => t + v, 0);
  return {
    n: s.n,
    scored: s.scores.length,
    mean: s.scores.length === 0 ? null : sum / s.scores.length,
    outputs: s.outputs,
  };
}

/** Rows in, groups out: feed each variant's rows newest first. */
export class Comparison {
  private readonly groups = new Map<string, Group>();

  add(which: 'a' | 'b', row: ComparedRow): void {
    const key = canonicalJson(row.input);
    let g = this.groups.get(key);
    if (g === undefined) {
      g = { input: row.input, lastSeq: row.seq, lastAt: row.createdAt, a: newSide(), b: newSide() };
      this.groups.set(key, g);
    } else if (row.seq > g.lastSeq) {
      g.lastSeq = row.seq;
      g.lastAt = row.createdAt;
    }
    const s = g[which];
    s.n++;
    if (row.score !== null) s.scores.push(row.score);
    if (s.outputs.length < OUTPUTS_SHOWN) {
      s.outputs.push({ logId: row.logId, output: row.output, createdAt: row.createdAt });
    }
  }

  /** Every input, most results first, then most recently answered first. */
  inputs(from: number, count: number): { inputs: ComparedInput[]; total: number } {
    const all = [...this.groups.values()].sort(
      (x, y) => y.a.n + y.b.n - (x.a.n + x.b.n) || y.lastSeq - x.lastSeq,
    );
    const inputs = all.slice(from, from + count).map((g) => ({
      input: g.input,
      n: g.a.n + g.b.n,
      lastAt: g.lastAt,
      winRate: winRate(g.a.scores, g.b.scores),
      a: side(g.a),
      b: side(g.b),
    }));
    return { inputs, total: all.length };
  }
}
