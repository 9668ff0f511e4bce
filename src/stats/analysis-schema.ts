// The analysis as answered: one TypeBox declaration from which the OpenAPI schema (http/analysis.ts) and the
// TypeScript type (`Analysis`, what analyzeRollups returns) both come, so a field cannot exist in one only.

import { type Static, Type } from 'typebox';
import { ANALYSIS_EXAMPLE } from './analysis-example.js';
import {
  AdjustmentSchema,
  CappedSchema,
  CapSchema,
  RatioSchema,
  UnadjustedSchema,
} from './derived-schema.js';
import { Better, Effect, Nullable, NullableString, Pair, Test, Worse } from './schema-parts.js';

export const VariantAnalysisSchema = Type.Object(
  {
    key: Type.String({ description: "The variant's key" }),
    n: Type.Integer({
      description: 'Units with a value of this metric (of its kind): users (unit user) or values (unit call)',
    }),
    mean: Nullable('Mean of the values (the share of true, for a proportion); null when n = 0'),
    stdDev: Nullable(
      'Sample standard deviation (n − 1); sqrt(p (1 − p)) for a proportion; null when n < 2 (numbers) or ' +
        'when it cannot be computed',
    ),
    absolute: Type.Optional(
      Effect("Treatment mean minus control mean, in the metric's unit. Absent for the control"),
    ),
    relative: Type.Optional(
      Effect(
        'The lift: (treatment mean − control mean) / |control mean|, so 0.05 is +5 %; null estimate when ' +
          'the control mean is 0. Absent for the control',
      ),
    ),
    rawPValue: Type.Optional(
      Nullable(
        'The deciding test’s p-value before any correction (equal to pValue when no correction covers the ' +
          'metric). Absent for the control',
      ),
    ),
    test: Type.Optional(
      Test(
        'The test that decided significance and produced both intervals (absolute and relative), with their ' +
          'level. Absent for the control',
      ),
    ),
    exact: Type.Optional(
      Type.Union(
        [
          Type.Object({
            fisherPValue: Type.Number({
              description:
                "Fisher's exact p-value for the tested alternative, per call (a cross-check; it does not decide)",
            }),
          }),
          Type.Null(),
        ],
        {
          description:
            'Proportions with fewer than 10 successes or failures in an arm: Fisher’s exact test beside the ' +
            'score test that decides; null otherwise. Absent for the control',
        },
      ),
    ),
    chanceToWin: Type.Optional(
      Nullable(
        "bayesian: the probability that this treatment is better than the control in the metric's declared " +
          'direction (sided=greater/less stand for a direction where none is declared); null for the other ' +
          'methods and for metrics without a direction. Absent for the control',
      ),
    ),
    risk: Type.Optional(
      Pair(
        'bayesian: expected loss [of choosing the control, of choosing this treatment], in the better ' +
          'direction, on the lift scale; [null, null] for the other methods and without a direction. Absent for the control',
      ),
    ),
    better: Better,
    worse: Worse,
    pValue: Type.Optional(
      Nullable(
        'The p-value that decides: significant ⟺ pValue < alpha. The test named in `test` (bayesian: the ' +
          'posterior probability of the other side, doubled two-sided), after the correction when one covers ' +
          'this metric (`corrected`); rawPValue is the unadjusted one. Absent for the control',
      ),
    ),
    guardrail: Type.Optional(
      Type.Object(
        {
          status: Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Literal('inconclusive')], {
            description:
              'passed: the whole interval is within the threshold on the worse side; failed: the whole ' +
              'interval is beyond it; inconclusive: neither',
          }),
          threshold: Type.Number({
            description: "The relative loss tolerated (the definition's threshold, default 0)",
          }),
          bound: Nullable(
            "The interval's worse end as a relative change (-0.079: 7.9% lower); null when the lift cannot be computed",
          ),
          absolute: Effect(
            "The effect with the guardrail's interval (two-sided at 1 − 2·alpha: each end a one-sided test at alpha)",
          ),
          relative: Effect("The lift with the guardrail's interval"),
          test: Test("The test that produced the guardrail's interval, at its level 1 − 2·alpha"),
        },
        {
          description:
            'Guardrail metrics: where the interval lies against the tolerated loss (kept out of corrections)',
        },
      ),
    ),
    quantiles: Type.Optional(
      Type.Object(
        {
          p50: Nullable('Median'),
          p90: Nullable('90th percentile'),
          p95: Nullable('95th percentile'),
          p99: Nullable('99th percentile'),
        },
        {
          description:
            "Numeric metrics: quantiles of the variant's values (per call), from write-time DDSketch sketches " +
            "(within 1% relative of a value of that rank, and within the variant's observed min and max)",
        },
      ),
    ),
    capped: Type.Optional(CappedSchema),
    unadjusted: Type.Optional(UnadjustedSchema),
    moreUnits: Type.Optional(
      Nullable(
        'With a declared minimumDetectableEffect and no significant result yet: about how many more units ' +
          '(users or calls) each variant needs to detect it at 80% power; null when it cannot be computed',
      ),
    ),
    significant: Type.Optional(
      Type.Boolean({
        description:
          'pValue < alpha: the deciding test rejects (after the correction). Absent for the control',
      }),
    ),
  },
  {
    title: 'VariantAnalysis',
    description: 'One variant on one metric; a treatment also has its effects against the control',
  },
);

export const MetricAnalysisSchema = Type.Object(
  {
    name: Type.String({ description: 'The metric, as named in the logged metrics' }),
    kind: Type.String({
      description:
        'mean: numeric values, analysed as a mean; proportion: true/false values, as the share of true',
    }),
    direction: NullableString(
      "The declared direction ('increase' or 'decrease' is better); null: undeclared, no win wording",
    ),
    role: NullableString('The declared role: primary, secondary or guardrail; null: undeclared'),
    unit: Type.String({
      description:
        'user: sticky experiment, each user one unit (a ratio of sums, delta method; n counts users); call: each result one unit',
    }),
    sided: Type.String({ description: 'The alternative tested for this metric: two, greater or less' }),
    minimumDetectableEffect: Nullable('The declared minimum detectable effect (relative), or null'),
    statistic: Type.String({
      description:
        'What is compared: mean (a proportion for true/false values), or p50, p90, p95, p99 (a quantile)',
    }),
    threshold: Nullable('Guardrails: the relative loss tolerated (default 0); null for other roles'),
    label: Type.String({
      description: "What each variant's number is, in words: e.g. 'mean per call, users as units'",
    }),
    noVariation: Type.Boolean({
      description: 'Every value is the same in every variant: nothing to compare (no effects, no intervals)',
    }),
    corrected: Type.Boolean({
      description: "This metric's comparisons are in the correction's family (see the analysis' correction)",
    }),
    ratio: Type.Optional(RatioSchema),
    cap: Type.Optional(CapSchema),
    adjustment: Type.Optional(AdjustmentSchema),
    variants: Type.Array(VariantAnalysisSchema, {
      description: "Every variant, in the experiment's order; the control has no effects",
    }),
  },
  { title: 'MetricAnalysis', description: 'One metric across the variants' },
);

const SEGMENTS_DESCRIPTION =
  'With ?segment=key: per value of the key (the 50 values with most results, most first; the rest merged as ' +
  "one '(other)'), the metrics in the shape of the analysis's own, with its unit (per user in a sticky " +
  'experiment), and no verdict';

export const SegmentAnalysisSchema = Type.Object(
  {
    value: Type.String({
      description: "The key's value (numbers and true/false as their JSON text), or '(other)'",
    }),
    mergedValues: Type.Optional(Type.Integer({ description: "'(other)' only: how many values it merges" })),
    unit: Type.String({
      description:
        "user: every metric is analysed per user within this value (a sticky experiment's users' sums kept " +
        'per value: a user with calls in two values is a unit in each); call: some metric is per call',
    }),
    results: Type.Record(Type.String(), Type.Integer(), {
      description: 'Results in this segment per variant key',
    }),
    metrics: Type.Array(MetricAnalysisSchema, { description: 'The metrics analysed, within this segment' }),
    warnings: Type.Array(Type.String(), { description: "This segment's own warnings" }),
  },
  { title: 'SegmentAnalysis' },
);

export const AnalysisSchema = Type.Object(
  {
    slug: Type.String({ description: "The experiment's slug" }),
    control: Type.String({ description: 'The variant the others are compared with' }),
    method: Type.String({ description: 'The method used: frequentist, bayesian or sequential' }),
    alpha: Type.Number({ description: 'The significance level used' }),
    sided: Type.String({ description: 'The sided option asked for: two, greater, less or better' }),
    correction: Type.String({
      description:
        'The multiple-comparison correction used: none, holm or bh. By default bh across the secondary and ' +
        'undeclared metrics; asked for explicitly, across every metric but guardrails; intervals are adjusted with ' +
        'the p-values',
    }),
    version: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The version analysed; null when every version is pooled',
    }),
    versions: Type.Array(Type.Integer(), {
      description:
        'The versions whose data is analysed: the one asked for, or every version with data, pooled',
    }),
    unit: Type.String({
      description: 'user when every metric is analysed per user (sticky experiments), else call',
    }),
    verdict: Type.Object(
      {
        status: Type.String({
          description: 'winner, no-winner-yet, guardrail-failed, sample-ratio-mismatch or not-enough-data',
        }),
        variant: Type.Optional(
          Type.String({ description: 'The winner, or the variant that failed a guardrail' }),
        ),
        metric: Type.Optional(
          Type.String({ description: 'The primary metric, or the guardrail that failed' }),
        ),
        summary: Type.String({ description: 'One plain sentence: what to do and how sure to be' }),
      },
      { description: 'Which variant to ship, by the rule in docs/statistics.md' },
    ),
    results: Type.Record(Type.String(), Type.Integer(), {
      description: 'Results logged per variant key, in the versions analysed',
    }),
    exposures: Type.Record(Type.String(), Type.Integer(), {
      description:
        "Assignments (exposures) per variant key, in the versions analysed: every assign call, a user's repeats " +
        'included. To show how many were randomized, use exposed',
    }),
    exposed: Type.Object(
      {
        unit: Type.Union([Type.Literal('user'), Type.Literal('call')], {
          description:
            'user: distinct users (sticky experiments, whose users were randomized); call: assign calls (random ' +
            'experiments, or sticky ones whose users were not counted: npm run rollups:rebuild)',
        }),
        counts: Type.Record(Type.String(), Type.Integer(), {
          description:
            'Units exposed per variant key, in the versions analysed (a user once per version: pooled, a user ' +
            'seen under two versions counts in each)',
        }),
      },
      {
        description:
          'Exposures in the unit of the randomization: distinct users in sticky experiments (a user who calls ' +
          'a hundred times is one), assign calls in random ones. The units the sample-ratio check tests',
      },
    ),
    srm: Type.Object(
      {
        chiSquare: Nullable('The chi-square statistic; null when it cannot be computed (no exposures)'),
        pValue: Nullable('Its p-value; null when it cannot be computed'),
        mismatch: Type.Boolean({
          description:
            'pValue < 0.001: assignment or logging is broken, and no effect can be trusted until it is explained',
        }),
        unit: Type.Union([Type.Literal('user'), Type.Literal('call')], {
          description:
            'What was counted: distinct users per variant (sticky experiments: the unit randomized), or assign calls (random)',
        }),
        counts: Type.Record(Type.String(), Type.Integer(), {
          description: 'The counts tested, per variant key (users or calls, in the versions analysed)',
        }),
      },
      {
        description:
          'Sample-ratio-mismatch check: a chi-square test of the randomized units (users in sticky experiments, ' +
          "calls in random ones) against trafficPercent (each version's weights, mixed by its units)",
      },
    ),
    metrics: Type.Array(MetricAnalysisSchema, { description: 'One entry per metric analysed' }),
    warnings: Type.Array(Type.String(), {
      description: 'Why a number is null or should not be trusted, each prefixed with its metric and variant',
    }),
    segment: Type.Optional(
      Type.String({ description: 'With ?segment=key: the context key the results are split by' }),
    ),
    segmentNote: Type.Optional(
      Type.String({
        description:
          'With ?segment: segment reads are exploratory (no verdict per segment; with many segments some ' +
          'differences are chance: multiple comparisons)',
      }),
    ),
    withoutSegment: Type.Optional(
      Type.Integer({
        description:
          "With ?segment: results with no value of the key (none in their own or their assign's context, or " +
          'logged before the key was declared), in no segment',
      }),
    ),
    segments: Type.Optional(Type.Array(SegmentAnalysisSchema, { description: SEGMENTS_DESCRIPTION })),
  },
  {
    title: 'Analysis',
    description: 'Which variant wins: per metric and variant, statistics and effects against the control',
    examples: [ANALYSIS_EXAMPLE],
  },
);

export type Analysis = Static<typeof AnalysisSchema>;
export type MetricAnalysis = Static<typeof MetricAnalysisSchema>;
export type VariantAnalysis = Static<typeof VariantAnalysisSchema>;
