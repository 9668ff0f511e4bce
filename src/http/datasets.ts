// Routes for datasets (issue 40, ADR 0046): create, append or change items, remove an item, delete (admin,
// keys for every experiment only: a dataset serves every experiment, as saved groups do); list, read, page
// a version's items and export them (read, any key: a key limited to an experiment runs its offline runs
// over datasets it must read).
import { Readable } from 'node:stream';
import { MAX_DATASET_ITEMS } from '../core/datasets.js';
import type { Actor } from '../core/events.js';
import type { Principal } from '../core/keys.js';
import type { DatasetService } from '../services/datasets.js';
import { type Route, route, Stream } from './route.js';
import { conflictResponse, errorResponses } from './schemas/common.js';
import {
  CreateDatasetBody,
  DatasetChangeSchema,
  DatasetListSchema,
  DatasetSchema,
  ExportItemsQuery,
  ExportItemsResponse,
  ItemPageSchema,
  ItemParams,
  ItemsQuery,
  ListDatasetsQuery,
  NameParams,
  PutItemsBody,
} from './schemas/datasets.js';

/**
 * 10,000 items a request, of 1.6 KB each on average (a question, an answer, a little metadata): this
 * route reads bodies up to this size (Content-Length bodies; chunked ones keep the server's limit).
 */
export const DATASET_BODY_LIMIT = 16 * 1024 * 1024;

export function datasetRoutes(datasets: DatasetService, actorOf: (p: Principal) => Actor): Route[] {
  const tags = ['datasets'];
  const admin = { scope: 'admin', everyExperiment: true } as const;
  const read = { scope: 'read' } as const;
  return [
    route({
      method: 'POST',
      url: '/datasets',
      ...admin,
      status: 201,
      bodyLimit: DATASET_BODY_LIMIT,
      schema: {
        tags,
        summary: `Create a dataset (version 1) with up to ${MAX_DATASET_ITEMS} items`,
        body: CreateDatasetBody,
        response: {
          201: DatasetSchema,
          ...errorResponses,
          409: conflictResponse("a dataset named 'support-questions' already exists"),
        },
      },
      handle: ({ body, principal }) => datasets.create(body, actorOf(principal)),
    }),
    route({
      method: 'GET',
      url: '/datasets',
      ...read,
      schema: {
        tags,
        summary: 'List the datasets, oldest first, a page at a time (without their items)',
        querystring: ListDatasetsQuery,
        response: { 200: DatasetListSchema, ...errorResponses },
      },
      handle: ({ query }) => datasets.list(query),
    }),
    route({
      method: 'GET',
      url: '/datasets/:name',
      ...read,
      schema: {
        tags,
        summary: 'One dataset: its current version and item count',
        params: NameParams,
        response: { 200: DatasetSchema, ...errorResponses },
      },
      handle: ({ params }) => datasets.get(params.name),
    }),
    route({
      method: 'POST',
      url: '/datasets/:name/items',
      ...admin,
      bodyLimit: DATASET_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Add items (new ids) and change items (known ids): one new version when anything changed',
        description:
          'Items sent exactly as they are change nothing: the answer keeps the version, so a retry is safe. ' +
          'Give items ids to append idempotently (an item without id is a new item each time).',
        params: NameParams,
        body: PutItemsBody,
        response: { 200: DatasetChangeSchema, ...errorResponses },
      },
      handle: ({ params, body, principal }) => datasets.putItems(params.name, body.items, actorOf(principal)),
    }),
    route({
      method: 'DELETE',
      url: '/datasets/:name/items/:itemId',
      ...admin,
      schema: {
        tags,
        summary: 'Remove an item, in a new version (earlier versions keep it)',
        params: ItemParams,
        response: { 200: DatasetChangeSchema, ...errorResponses },
      },
      handle: ({ params, principal }) => datasets.removeItem(params.name, params.itemId, actorOf(principal)),
    }),
    route({
      method: 'GET',
      url: '/datasets/:name/items',
      ...read,
      schema: {
        tags,
        summary: "A version's items (default: the current one), in the order first added, a page at a time",
        params: NameParams,
        querystring: ItemsQuery,
        response: { 200: ItemPageSchema, ...errorResponses },
      },
      handle: ({ params, query }) => datasets.items(params.name, query),
    }),
    route({
      method: 'GET',
      url: '/datasets/:name/export',
      ...read,
      schema: {
        tags,
        summary: "Stream a version's items (default: the current one) as NDJSON",
        params: NameParams,
        querystring: ExportItemsQuery,
        response: {
          200: ExportItemsResponse,
          400: errorResponses[400],
          401: errorResponses[401],
          404: errorResponses[404],
        },
      },
      handle: async ({ params, query }) => {
        const { version, lines } = await datasets.exportItems(params.name, query.version);
        // Streamed NDJSON, never serialized by a schema (ExportItemsResponse documents `content`).
        return new Stream(Readable.from(lines), {
          'content-type': 'application/x-ndjson',
          'content-disposition': `attachment; filename="${params.name}-v${version}.ndjson"`,
        });
      },
    }),
    route({
      method: 'DELETE',
      url: '/datasets/:name',
      ...admin,
      status: 204,
      schema: {
        tags,
        summary: 'Delete a dataset and every version of its items',
        params: NameParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses },
      },
      handle: async ({ params, principal }) => {
        await datasets.remove(params.name, actorOf(principal));
        return undefined;
      },
    }),
  ];
}
