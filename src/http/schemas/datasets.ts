// The schemas of datasets (issue 40, ADR 0046): creating one, appending or changing items, a dataset, a
// change, a page of a version's items, the export.
import { Type } from 'typebox';
import { MAX_DATASET_DESCRIPTION, MAX_DATASET_ITEMS, MAX_ITEM_ID } from '../../core/datasets.js';
import { JsonObjectSchema } from './common.js';

const DATASET_EXAMPLE = {
  id: '019ac1f2-5b3e-7c41-9a2d-3f8e0b6c4d21',
  name: 'support-questions',
  description: 'Questions from the support inbox, with the answers an agent should give',
  version: 2,
  items: 2,
  createdAt: '2025-06-02T09:00:00.000Z',
  updatedAt: '2025-06-03T10:30:00.000Z',
};
const ITEM_EXAMPLE = {
  id: 'refund-1',
  input: { question: 'How do I get a refund?' },
  expected: { answer: 'Settings → Orders → Refund, within 30 days' },
  metadata: { topic: 'billing' },
};

const ITEM_ID = {
  minLength: 1,
  maxLength: MAX_ITEM_ID,
  pattern: '^[^\\u0000-\\u001f\\u007f]+$',
};

const ItemBody = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        ...ITEM_ID,
        description: `Unique in the dataset; 1-${MAX_ITEM_ID} characters, no control characters. Absent: a new UUID (an item sent again with the same id is changed, not added)`,
      }),
    ),
    input: Type.Unknown({ description: 'Any JSON value (typically an object): what the agent is given' }),
    expected: Type.Optional(
      Type.Unknown({ description: 'Any JSON value: what it should answer (null: none)' }),
    ),
    metadata: Type.Optional(Type.Union([JsonObjectSchema, Type.Null()], { description: 'A JSON object' })),
  },
  { additionalProperties: false },
);

const itemsOf = (description: string, minItems: number) =>
  Type.Array(ItemBody, { minItems, maxItems: MAX_DATASET_ITEMS, description });

export const CreateDatasetBody = Type.Object(
  {
    name: Type.String({
      description: 'Unique: 1-100 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit',
    }),
    description: Type.Optional(Type.String({ maxLength: MAX_DATASET_DESCRIPTION })),
    items: itemsOf(
      `Up to ${MAX_DATASET_ITEMS} items (append more with POST /datasets/:name/items); ids unique`,
      0,
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'support-questions',
        description: 'Questions from the support inbox',
        items: [ITEM_EXAMPLE, { input: { question: 'Can I change my plan?' }, expected: { answer: 'Yes' } }],
      },
    ],
  },
);

export const PutItemsBody = Type.Object(
  {
    items: itemsOf(
      `1-${MAX_DATASET_ITEMS} items: a new id adds an item, a known id with other content changes it; ids unique`,
      1,
    ),
  },
  {
    additionalProperties: false,
    examples: [{ items: [{ ...ITEM_EXAMPLE, expected: { answer: 'Settings → Orders → Refund' } }] }],
  },
);

const datasetProperties = {
  id: Type.String({
    description: 'A UUIDv7: a dataset deleted and made again under its name is another one',
  }),
  name: Type.String(),
  description: Type.String(),
  version: Type.Integer({ description: 'The current version: 1 when created, one more per change of items' }),
  items: Type.Integer({ description: 'Items in the current version' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time', description: 'When the current version was made' }),
};

export const DatasetSchema = Type.Object(datasetProperties, {
  title: 'Dataset',
  description: 'A dataset without its items',
  examples: [DATASET_EXAMPLE],
});

export const DatasetChangeSchema = Type.Object(
  {
    ...datasetProperties,
    added: Type.Integer({ description: 'Items with a new id' }),
    changed: Type.Integer({
      description: 'Items whose input, expected or metadata differ (JSON key order aside)',
    }),
    removed: Type.Integer({ description: 'Items removed' }),
    unchanged: Type.Integer({ description: 'Items sent as they already were (or left in place)' }),
  },
  {
    title: 'DatasetChange',
    description:
      'The dataset after the change: a new version when anything changed, else the same version (a retry changes nothing)',
    examples: [{ ...DATASET_EXAMPLE, version: 3, items: 3, added: 1, changed: 1, removed: 0, unchanged: 1 }],
  },
);

export const DatasetListSchema = Type.Object(
  {
    datasets: Type.Array(DatasetSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass back as cursor for the next page; null on the last page',
    }),
  },
  {
    title: 'DatasetList',
    description: 'Datasets, oldest first',
    examples: [{ datasets: [DATASET_EXAMPLE], nextCursor: null }],
  },
);

const ItemSchema = Type.Object(
  {
    id: Type.String(),
    input: Type.Unknown({ description: 'As sent' }),
    expected: Type.Unknown({ description: 'As sent; null when none' }),
    metadata: Type.Union([JsonObjectSchema, Type.Null()], { description: 'As sent; null when none' }),
    since: Type.Integer({ description: 'The version that added it or last changed it' }),
  },
  { title: 'DatasetItem', description: 'An item as a version holds it' },
);

export const ItemPageSchema = Type.Object(
  {
    name: Type.String({ description: "The dataset's name" }),
    version: Type.Integer({ description: 'The version read' }),
    items: Type.Array(ItemSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass back as cursor for the next page; null on the last page',
    }),
  },
  {
    title: 'DatasetItemPage',
    description: "A page of a version's items, in the order they were first added",
    examples: [
      { name: 'support-questions', version: 2, items: [{ ...ITEM_EXAMPLE, since: 1 }], nextCursor: 'aTox' },
    ],
  },
);

const cursor = Type.Optional(
  Type.String({ maxLength: 200, description: "The previous page's nextCursor", examples: ['aTox'] }),
);
const version = Type.Optional(
  Type.Integer({
    minimum: 1,
    description: 'The version to read (default: the current one); a version past the current is 404',
    examples: [1],
  }),
);

export const ListDatasetsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Datasets per page', examples: [20] }),
  ),
  cursor,
});

export const ItemsQuery = Type.Object({
  version,
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Items per page', examples: [100] }),
  ),
  cursor,
});

export const ExportItemsQuery = Type.Object({ version });

export const NameParams = Type.Object({
  name: Type.String({ maxLength: 100, description: "The dataset's name", examples: ['support-questions'] }),
});

export const ItemParams = Type.Object({
  name: NameParams.properties.name,
  itemId: Type.String({ maxLength: MAX_ITEM_ID, description: "The item's id", examples: ['refund-1'] }),
});

/** The export's success as the document shows it: a stream, never serialized (the handler returns a Stream). */
export const ExportItemsResponse = {
  description:
    'Every item of the version, in the order first added, streamed; each line can be sent back as an item',
  content: {
    'application/x-ndjson': {
      schema: { type: 'string', description: 'One item {id, input, expected, metadata} as JSON per line' },
      example: `${JSON.stringify(ITEM_EXAMPLE)}\n`,
    },
  },
};
