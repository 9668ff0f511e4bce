// Datasets and offline runs (issue 40): thin calls of the management kind (they reject with an
// AgentSplitError), used by ManagementCalls and by runDataset.
import { analysisQuery, experimentPath, type ManageTarget, manage } from './manage.js';
import type {
  Dataset,
  DatasetChange,
  DatasetItem,
  DatasetItemFields,
  OfflineRun,
  OpenRunOptions,
  RunComparison,
  RunComparisonParams,
} from './run-types.js';

const datasetPath = (name: string, rest = '') => `/datasets/${encodeURIComponent(name)}${rest}`;
const runPath = (id: string, rest = '') => `/runs/${encodeURIComponent(id)}${rest}`;

/** POST /datasets (admin, every experiment): version 1 with `items`. */
export function createDataset(
  t: ManageTarget,
  name: string,
  items: DatasetItemFields[],
  description?: string,
): Promise<Dataset> {
  return manage(t, 'POST', '/datasets', 201, {
    name,
    items,
    ...(description === undefined ? {} : { description }),
  });
}

/** POST /datasets/:name/items (admin): one new version when anything changed. */
export function addItems(t: ManageTarget, name: string, items: DatasetItemFields[]): Promise<DatasetChange> {
  return manage(t, 'POST', datasetPath(name, '/items'), 200, { items });
}

/** GET /datasets, every page: the datasets, oldest first, without their items. */
export async function listDatasets(t: ManageTarget): Promise<Dataset[]> {
  const out: Dataset[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = await manage<{ datasets: Dataset[]; nextCursor: string | null }>(
      t,
      'GET',
      `/datasets?limit=100${q}`,
      200,
    );
    out.push(...page.datasets);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

/** GET /datasets/:name: its current version and item count. */
export function getDataset(t: ManageTarget, name: string): Promise<Dataset> {
  return manage(t, 'GET', datasetPath(name), 200);
}

/** GET /datasets/:name/items?version=, every page: the items of that version, in the order first added. */
export async function datasetItems(t: ManageTarget, name: string, version?: number): Promise<DatasetItem[]> {
  const out: DatasetItem[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '1000' });
    if (version !== undefined) q.set('version', String(version));
    if (cursor !== null) q.set('cursor', cursor);
    const page = await manage<{ items: DatasetItem[]; nextCursor: string | null }>(
      t,
      'GET',
      datasetPath(name, `/items?${q}`),
      200,
    );
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

/** POST /experiment/:slug/runs (log scope): opens a run of the variants over a dataset version. */
export function openRun(
  t: ManageTarget,
  slug: string,
  dataset: string,
  options: OpenRunOptions = {},
): Promise<OfflineRun> {
  const body: Record<string, unknown> = { dataset };
  for (const field of ['version', 'variants', 'trials'] as const) {
    if (options[field] !== undefined) body[field] = options[field];
  }
  return manage(t, 'POST', experimentPath(slug, '/runs'), 201, body);
}

/** GET /runs/:id (read). */
export function getRun(t: ManageTarget, id: string): Promise<OfflineRun> {
  return manage(t, 'GET', runPath(id), 200);
}

/** GET /experiment/:slug/runs (read), every page: the experiment's runs, newest first. */
export async function listRuns(t: ManageTarget, slug: string): Promise<OfflineRun[]> {
  const out: OfflineRun[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '100' });
    if (cursor !== null) q.set('cursor', cursor);
    const page = await manage<{ runs: OfflineRun[]; nextCursor: string | null }>(
      t,
      'GET',
      experimentPath(slug, `/runs?${q}`),
      200,
    );
    out.push(...page.runs);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

/** GET /runs/:id/comparison (read): every variant against the control, item by item, per metric. */
export function runComparison(
  t: ManageTarget,
  id: string,
  params: RunComparisonParams = {},
): Promise<RunComparison> {
  const { control, alpha, metrics } = params;
  return manage(t, 'GET', runPath(id, `/comparison${analysisQuery({ control, alpha, metrics })}`), 200);
}
