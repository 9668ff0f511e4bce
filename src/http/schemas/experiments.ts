// The schemas of experiments: the experiment and its variants and metric definitions as answered, the
// bodies that create and change one, and the list's query and page.
import { Type } from 'typebox';
import { ASSIGNMENT_MODES, STATUSES } from '../../core/experiment.js';
import type { JsonObject } from '../../core/json.js';
import { entryInputs, entryProperties } from './entry.js';
import { EXPERIMENT_EXAMPLE, VARIANT_A, VARIANT_B } from './examples.js';

const StatusSchema = Type.Enum([...STATUSES], {
  type: 'string',
  description:
    'draft → running; running ↔ paused; running/paused → completed; running → released by a completed ' +
    'rollout (released → running with new variants); any → archived',
});
const AssignmentModeSchema = Type.Enum([...ASSIGNMENT_MODES], {
  type: 'string',
  description: "'random' (default): an independent weighted draw per call; 'sticky': hash of seed + userId",
});

export const VariantSchema = Type.Object(
  {
    key: Type.String({ description: 'A-Z a-z 0-9 . _ -, 1-64 characters, unique in the experiment' }),
    payload: Type.Unsafe<JsonObject>({
      type: 'object',
      additionalProperties: true,
      description: 'What the agent runs for this variant (a prompt, a model config): any JSON object',
    }),
    trafficPercent: Type.Number({ description: 'Share of traffic in [0, 100]; all variants sum to 100' }),
  },
  { title: 'Variant', description: 'One arm of an experiment', examples: [VARIANT_A] },
);

export const MetricDefinitionSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'The name results log the metric under' }),
    direction: Type.Enum(['increase', 'decrease'], { type: 'string', description: 'Which way is better' }),
    role: Type.Optional(
      Type.Enum(['primary', 'secondary', 'guardrail'], {
        type: 'string',
        description:
          "primary: decides the verdict (the first one declared); guardrail: must not get worse by more than its threshold, kept out of corrections; default 'secondary'",
      }),
    ),
    kind: Type.Optional(
      Type.Enum(['mean', 'proportion'], {
        type: 'string',
        description: 'Numbers are means, true/false proportions',
      }),
    ),
    minimumDetectableEffect: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 10,
        description:
          'The smallest relative change worth detecting (0.05 = 5%): the analysis says how many more units it needs',
      }),
    ),
    threshold: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 10,
        description:
          'Guardrails: the relative change in the worse direction tolerated (0.05 = at most 5% worse). ' +
          'Default 0. The guardrail passes when the whole interval is within it, fails when the whole ' +
          'interval is beyond it, and is inconclusive otherwise',
      }),
    ),
    statistic: Type.Optional(
      Type.Enum(['mean', 'p50', 'p90', 'p95', 'p99'], {
        type: 'string',
        description:
          'Numeric metrics: what the comparison, verdict and charts use: the mean (default) or a quantile ' +
          '(from write-time sketches, 1% relative accuracy)',
      }),
    ),
    numerator: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'A ratio metric (with denominator): `name` is Σ numerator / Σ denominator over each unit (a call, ' +
          'or a user in sticky experiments), compared by the delta method. e.g. cost_usd',
      }),
    ),
    denominator: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'A ratio metric: its denominator, e.g. success',
      }),
    ),
    cap: Type.Optional(
      Type.Object(
        {
          value: Type.Optional(Type.Number({ description: 'A fixed cap' })),
          percentile: Type.Optional(
            Type.Number({ description: 'The percentile of the units pooled over the variants, in (0, 100)' }),
          ),
        },
        {
          additionalProperties: false,
          description:
            "Heavy tails: a unit's mean per call above the cap counts as the cap (a call's value; a user's mean " +
            'in sticky experiments). Exactly one of {"value": N} or {"percentile": 99} (read from write-time ' +
            'sketches, within 2%)',
        },
      ),
    ),
    covariate: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "Regression adjustment (CUPED): a metric the treatment cannot change (the question's input_tokens, a " +
          'value from before exposure); the analysis reports the adjusted effect and the variance reduction',
      }),
    ),
  },
  {
    title: 'MetricDefinition',
    description:
      'What an experiment declares about one metric: changing it changes the reading, never the data',
    examples: [{ name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.05 }],
  },
);
const MetricDefinitions = Type.Array(MetricDefinitionSchema, { maxItems: 50 });
const Segments = Type.Array(
  Type.String({
    pattern: '^[A-Za-z0-9._-]{1,64}$',
    description: 'A context key (as given to assign or log)',
  }),
  {
    maxItems: 5,
    description:
      'Context keys whose values split the analysis (GET /experiment/{slug}/analysis?segment=key): up to 5, ' +
      'unique. A result counts under its own context value of the key, else under its assign context; ' +
      'results are counted from when the key is declared.',
    examples: [['plan', 'region']],
  },
);

const GuardrailActionSchema = Type.Enum(['notify', 'pause'], {
  type: 'string',
  description:
    "What the guardrail monitor does when a guardrail fails (sequential test): 'notify' records a " +
    "guardrail.failed event; 'pause' also pauses the experiment (assign then answers 404), with the " +
    "failing metric and the verdict sentence as the reason. Default 'notify'",
});
const MinimumUnitsSchema = Type.Integer({
  minimum: 1,
  maximum: 1_000_000_000,
  description:
    'Units (users of a sticky experiment, calls otherwise) each variant needs on a guardrail metric ' +
    'before the monitor judges the experiment. Default 100',
});

const DecisionNote = Type.String({
  maxLength: 2000,
  description: 'Why: "cheaper at equal success" (at most 2000 characters)',
});
const DecisionSchema = Type.Union(
  [
    Type.Object(
      {
        variant: Type.String({
          description: "The variant's key that shipped, or 'none' (no change shipped)",
        }),
        note: DecisionNote,
        decidedAt: Type.String({ format: 'date-time' }),
      },
      { title: 'Decision' },
    ),
    Type.Null(),
  ],
  {
    description:
      'What was decided when the experiment completed ("shipped B: cheaper at equal success"); null when ' +
      'none was given',
  },
);
const DecisionInputSchema = Type.Union(
  [
    Type.Object({
      variant: Type.String({ description: "A variant's key, or 'none' when no variant shipped" }),
      note: Type.Optional(DecisionNote),
    }),
    Type.Null(),
  ],
  {
    description:
      'Only with {"status": "completed"}, or on a completed experiment to correct it (null removes it). ' +
      'Not a new version: nothing is reassigned.',
    examples: [{ variant: 'B', note: 'as good, 30% cheaper' }],
  },
);

export const ExperimentSchema = Type.Object(
  {
    slug: Type.String({ description: 'Unique; names the experiment in every URL' }),
    name: Type.String({ description: 'Default: the slug' }),
    description: Type.String(),
    status: StatusSchema,
    active: Type.Boolean({
      description: "true exactly when status is 'running' or 'released' (assign serves)",
    }),
    assignment: AssignmentModeSchema,
    seed: Type.String({ description: 'What sticky assignment hashes with the userId (default: the slug)' }),
    variants: Type.Array(VariantSchema),
    metrics: MetricDefinitions,
    segments: Segments,
    guardrailAction: GuardrailActionSchema,
    minimumUnits: MinimumUnitsSchema,
    decision: DecisionSchema,
    releasedVariant: Type.Union([Type.String(), Type.Null()], {
      description: "While 'released': the variant every unit that enters is served (its rollout completed)",
    }),
    ...entryProperties,
    version: Type.Integer({
      description:
        'Bumped whenever the variants, targeting, coverage or layer change (who is randomized how)',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Experiment', description: 'An experiment and its variants', examples: [EXPERIMENT_EXAMPLE] },
);

export const ExperimentListResponse = Type.Object(
  {
    experiments: Type.Array(ExperimentSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description:
        'Pass back as cursor for the next page; null on the last page. A page may hold fewer than limit ' +
        'experiments (it ends before 1 MB of JSON): follow nextCursor, never count.',
    }),
  },
  {
    title: 'ExperimentList',
    description: 'A page of experiments, oldest first',
    examples: [{ experiments: [EXPERIMENT_EXAMPLE], nextCursor: null }],
  },
);

const NameSchema = Type.String({ maxLength: 200 });
const DescriptionSchema = Type.String({ maxLength: 10_000 });

export const CreateExperimentBody = Type.Object(
  {
    slug: Type.String({
      description: '1-100 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit',
    }),
    name: Type.Optional(NameSchema),
    description: Type.Optional(DescriptionSchema),
    status: Type.Optional(StatusSchema),
    assignment: Type.Optional(AssignmentModeSchema),
    seed: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    variants: Type.Array(VariantSchema, { minItems: 1, maxItems: 100 }),
    metrics: Type.Optional(MetricDefinitions),
    segments: Type.Optional(Segments),
    guardrailAction: Type.Optional(GuardrailActionSchema),
    minimumUnits: Type.Optional(MinimumUnitsSchema),
    ...entryInputs,
  },
  {
    examples: [
      {
        slug: 'checkout-prompt',
        name: 'Checkout prompt',
        status: 'running',
        variants: [VARIANT_A, VARIANT_B],
      },
    ],
  },
);

export const UpdateExperimentBody = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    variants: Type.Optional(Type.Array(VariantSchema, { minItems: 1, maxItems: 100 })),
    metrics: Type.Optional(MetricDefinitions),
    segments: Type.Optional(Segments),
    guardrailAction: Type.Optional(GuardrailActionSchema),
    minimumUnits: Type.Optional(MinimumUnitsSchema),
    ...entryInputs,
    name: Type.Optional(NameSchema),
    description: Type.Optional(DescriptionSchema),
    decision: Type.Optional(DecisionInputSchema),
  },
  {
    minProperties: 1,
    examples: [
      { description: 'Does a concise prompt answer as well, for less?' },
      { status: 'completed', decision: { variant: 'B', note: 'as good, 30% cheaper' } },
    ],
  },
);

export const ListExperimentsQuery = Type.Object({
  status: Type.Optional(StatusSchema),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 50,
      description:
        'Experiments per page at most; a page also ends before its JSON passes 1 MB (at least one)',
      examples: [20],
    }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: "The previous page's nextCursor", examples: ['ZTo1MA'] }),
  ),
});
