// The schemas of comparing two variants' results per input (GET /experiment/:slug/results/compare).
import { Type } from 'typebox';
import { JsonObjectSchema } from './common.js';

const VariantKey = (description: string, example: string) =>
  Type.String({ minLength: 1, maxLength: 256, description, examples: [example] });

export const CompareQuery = Type.Object({
  a: VariantKey('The variant compared', 'B'),
  b: VariantKey('The variant it is compared with', 'A'),
  metric: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        "The score: each result's value for this metric (feedback first, then its own; true/false as 1/0). Without it, no means or win rates",
      examples: ['quality'],
    }),
  ),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'createdAt >= since' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'createdAt < until' })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Inputs per page' }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: "The previous page's nextCursor" })),
});

const Nullable = <T extends ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);

const ComparedSide = Type.Object({
  n: Type.Integer({ description: "This variant's results for the input" }),
  scored: Type.Integer({ description: 'Of them, those with a value for the metric' }),
  mean: Nullable(Type.Number({ description: 'Their mean score; null when none has one' })),
  outputs: Type.Array(
    Type.Object({
      logId: Type.String(),
      output: Type.Union([JsonObjectSchema, Type.Null()]),
      createdAt: Type.String({ format: 'date-time' }),
    }),
    { description: 'The newest outputs (at most 3), newest first' },
  ),
});

const ComparedInput = Type.Object({
  input: Type.Union([JsonObjectSchema, Type.Null()], {
    description: 'The input (null: results without one)',
  }),
  n: Type.Integer({ description: 'Results of both variants for the input' }),
  lastAt: Type.String({ format: 'date-time', description: 'When the newest of them was logged' }),
  winRate: Nullable(
    Type.Number({
      description:
        'Over every pair of an a-result and a b-result with a score: the share where a scores higher, ties counting half; null without such a pair',
    }),
  ),
  a: ComparedSide,
  b: ComparedSide,
});

export const CompareResponse = Type.Object(
  {
    a: Type.String(),
    b: Type.String(),
    metric: Type.Union([Type.String(), Type.Null()]),
    inputs: Type.Array(ComparedInput, {
      description: 'Most results first, then most recently answered first',
    }),
    total: Type.Integer({ description: 'Inputs in all, among the results read' }),
    scanned: Type.Object(
      { a: Type.Integer(), b: Type.Integer() },
      { description: 'Results read per variant (at most 20,000 each, newest first)' },
    ),
    truncated: Type.Boolean({
      description: 'True when a variant has more than 20,000 results in the range: only its newest were read',
    }),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass it as cursor for the next inputs (of the same results); null on the last page',
    }),
  },
  {
    title: 'Comparison',
    description: "Two variants' results grouped by input",
    examples: [
      {
        a: 'B',
        b: 'A',
        metric: 'quality',
        inputs: [
          {
            input: { question: 'How do I reset my password?' },
            n: 3,
            lastAt: '2025-06-02T10:00:00.000Z',
            winRate: 0.75,
            a: {
              n: 2,
              scored: 2,
              mean: 4.5,
              outputs: [
                {
                  logId: '0197a0b4-5c3e-7d2a-9f1b-3c4d5e6f7a8b',
                  output: { text: 'Open Settings, then Security.' },
                  createdAt: '2025-06-02T10:00:00.000Z',
                },
              ],
            },
            b: { n: 1, scored: 1, mean: 4, outputs: [] },
          },
        ],
        total: 1,
        scanned: { a: 2, b: 1 },
        truncated: false,
        nextCursor: null,
      },
    ],
  },
);
