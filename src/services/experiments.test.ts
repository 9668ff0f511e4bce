// Listing experiments: pages end at `limit` or at the byte budget, and the cursors visit each once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createExperiment, type Experiment } from '../core/experiment.js';
import { ExperimentCache } from './experiment-cache.js';
import { ExperimentService, type ExperimentStore } from './experiments.js';

const NOW = '2025-01-01T00:00:00.000Z';

function serviceWith(promptSizes: number[], pageBytes: number): ExperimentService {
  const cache = new ExperimentCache({
    listExperiments: async () => [],
    findExperiment: async () => undefined,
  });
  promptSizes.forEach((size, i) => {
    const variants = [{ key: 'A', payload: { prompt: 'p'.repeat(size) }, trafficPercent: 100 }];
    cache.put({ id: i + 1, experiment: createExperiment({ slug: `e${i + 1}`, variants }, NOW) });
  });
  return new ExperimentService({} as ExperimentStore, cache, { now: () => NOW, pageBytes });
}

function walk(service: ExperimentService, limit: number): Experiment[][] {
  const pages: Experiment[][] = [];
  let cursor: string | undefined;
  do {
    const page = service.list({ limit, cursor });
    pages.push(page.experiments);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

const slugs = (pages: Experiment[][]) => pages.map((p) => p.map((e) => e.slug));

describe('ExperimentService.list', () => {
  it('ends a page before it passes the byte budget, with at least one experiment a page', () => {
    // About 1,400 bytes each with a 1,000-byte prompt: three fit in 4,400 bytes.
    const service = serviceWith([1000, 1000, 1000, 1000, 10_000, 1000, 1000], 4400);
    const pages = walk(service, 100);
    assert.deepEqual(slugs(pages), [['e1', 'e2', 'e3'], ['e4'], ['e5'], ['e6', 'e7']]);
    for (const page of pages.filter((p) => p.length > 1)) {
      const bytes = JSON.stringify(page).length;
      assert.ok(bytes <= 4400, `${bytes} bytes`);
    }
  });

  it('limit still ends pages first when experiments are small', () => {
    const service = serviceWith([10, 10, 10, 10, 10], 1024 * 1024);
    assert.deepEqual(slugs(walk(service, 2)), [['e1', 'e2'], ['e3', 'e4'], ['e5']]);
    assert.deepEqual(service.list({ limit: 5 }).nextCursor, null);
  });
});
