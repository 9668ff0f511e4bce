// Searching 100,000 results (issue 36, ADR 0039), on SQLite and PostgreSQL, straight through the store:
// results with a few hundred bytes of text each are appended in the service's batches, the first search
// indexes them all (the index is filled off the /log path, before a search reads), then a handful of
// searches are timed: a rare word, a common word, a miss. Run alone with `npm run bench -- --search`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExperiment } from '../src/core/experiment.js';
import type { NewResult } from '../src/core/writes.js';
import { type DatabaseTarget, openStore } from '../src/store/index.js';
import { createTestDatabase, postgresReachable } from '../test/helpers/postgres.js';
import { seededRandom } from '../test/helpers/random.js';

const RESULTS = 100_000;
const RUNS = 9;
/** Results per appended batch (the most POST /logs takes). */
const BATCH = 1000;

const WORDS = (
  'order refund parcel shipping account password invoice delivery tracking address payment card ' +
  'subscription plan upgrade cancel support agent answer question customer please thanks help issue ' +
  'problem error update email phone number today tomorrow week month return exchange size color price ' +
  'discount coupon code store online warehouse late missing damaged item product quality review'
).split(' ');

/** The searches timed: q, and what it stands for. */
export const SEARCHES = [
  { label: 'rare word (10 results)', q: 'zanzibarite' },
  { label: 'common word (~1 in 3 results)', q: 'refund' },
  { label: 'miss', q: 'xylophonequartz' },
  { label: 'phrase across words', q: 'tracking number' },
];

export interface SearchFigures {
  backend: string;
  results: number;
  /** Appending the results, s (the /log path: no index work). */
  seedSeconds: number;
  /** The first search, which indexed every result: ms, and µs per result. */
  indexMs: number;
  indexUsPerResult: number;
  searches: Array<{ label: string; q: string; hits: number; medianMs: number; maxMs: number }>;
}

function sentence(random: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(random() * WORDS.length)]!);
  return out.join(' ');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function searchFigures(target: DatabaseTarget, backend: string): Promise<SearchFigures> {
  const store = await openStore(target);
  try {
    const now = new Date().toISOString();
    const { id } = await store.insertExperiment(
      createExperiment(
        {
          slug: 'search-100k',
          status: 'running',
          variants: [
            { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
            { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
          ],
        },
        now,
      ),
    );
    const random = seededRandom(36);
    const started = performance.now();
    for (let done = 0; done < RESULTS; done += BATCH) {
      const results: NewResult[] = [];
      for (let i = done; i < done + BATCH; i++) {
        const rare = i % 10_000 === 5000 ? ' zanzibarite' : '';
        results.push({
          logId: `search-${i}`,
          experimentId: id,
          version: 1,
          variantKey: i % 2 ? 'B' : 'A',
          knownVariant: true,
          userId: `u${i % 5000}`,
          unit: false,
          assignmentId: null,
          // About 150 bytes of question and 250 of answer.
          input: JSON.stringify({ messages: [{ role: 'user', content: sentence(random, 20) + rare }] }),
          output: JSON.stringify({ answer: sentence(random, 35), model: 'gpt-4o-mini' }),
          metrics: JSON.stringify({ latency_ms: Math.round(800 * random()) }),
          context: null,
          timestamp: null,
          createdAt: now,
        });
      }
      await store.appendBatch({ results, exposures: [] });
    }
    const seedSeconds = (performance.now() - started) / 1000;
    const first = performance.now();
    await store.listResults({ experimentId: id, search: SEARCHES[0]!.q, limit: 100 });
    const indexMs = performance.now() - first;
    const searches: SearchFigures['searches'] = [];
    for (const { label, q } of SEARCHES) {
      const times: number[] = [];
      let hits = 0;
      for (let run = 0; run < RUNS; run++) {
        const t = performance.now();
        const page = await store.listResults({ experimentId: id, search: q, order: 'desc', limit: 100 });
        times.push(performance.now() - t);
        hits = page.results.length;
      }
      searches.push({ label, q, hits, medianMs: median(times), maxMs: Math.max(...times) });
    }
    return {
      backend,
      results: RESULTS,
      seedSeconds,
      indexMs,
      indexUsPerResult: (indexMs * 1000) / RESULTS,
      searches,
    };
  } finally {
    await store.close();
  }
}

/** The figures on SQLite (a file in a temporary directory) and on PostgreSQL when it answers. */
export async function benchSearch(): Promise<SearchFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-bench-search-'));
  const figures: SearchFigures[] = [];
  try {
    figures.push(await searchFigures({ kind: 'sqlite', path: join(dir, 'search.db') }, 'SQLite'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (await postgresReachable()) {
    const db = await createTestDatabase('search');
    try {
      figures.push(await searchFigures({ kind: 'postgres', url: db.url }, 'PostgreSQL'));
    } finally {
      await db.drop();
    }
  }
  return figures;
}

/** Markdown lines: one row per backend and search. */
export function searchLines(figures: SearchFigures[]): string[] {
  const lines = [
    '',
    `search over ${RESULTS.toLocaleString('en')} results (GET results?q=, a page of 100, newest first; median/max of ${RUNS}):`,
    '',
    '| backend | search | q | hits on the page | median ms | max ms |',
    '|---|---|---|---:|---:|---:|',
  ];
  for (const f of figures) {
    for (const s of f.searches) {
      lines.push(
        `| ${f.backend} | ${s.label} | ${s.q} | ${s.hits} | ${s.medianMs.toFixed(1)} | ${s.maxMs.toFixed(1)} |`,
      );
    }
  }
  for (const f of figures) {
    lines.push(
      '',
      `${f.backend}: appending ${f.results} results took ${f.seedSeconds.toFixed(1)} s; the first search indexed them all in ` +
        `${f.indexMs.toFixed(0)} ms (${f.indexUsPerResult.toFixed(1)} µs a result, paid by search, not by /log)`,
    );
  }
  return lines;
}
