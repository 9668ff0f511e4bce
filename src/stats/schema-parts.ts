// Schema parts the analysis and its time series share (effects, flags) and the comparison's query options:
// TypeBox declarations, from which both the OpenAPI document and the TypeScript types are derived.
import { Type } from 'typebox';

export const Num = Type.Number();
export const Nullable = (description: string) => Type.Union([Num, Type.Null()], { description });
export const NullableString = (description: string) =>
  Type.Union([Type.String(), Type.Null()], { description });
export const Pair = (description: string) =>
  Type.Array(Type.Union([Num, Type.Null()]), { minItems: 2, maxItems: 2, description });

/** One effect scale; not a named schema, so that each scale keeps its own description. */
export const Effect = (description: string) =>
  Type.Object(
    {
      estimate: Nullable('The effect (the posterior mean for bayesian); null when it cannot be computed'),
      ci: Pair(
        '[lower, upper]: the interval of the test named in `test`, at its level (1 − alpha; adjusted under a ' +
          'correction). The bound a one-sided test does not have, or one that cannot be computed (a lift whose ' +
          'control mean is within noise of 0), is null; never infinite',
      ),
      stdError: Nullable(
        'Standard error of the estimate (the posterior standard deviation for bayesian); null when it cannot ' +
          'be computed, 0 when the effect has no variance',
      ),
      pValue: Nullable(
        "The deciding test's p-value before any correction (both scales share it: their intervals are duals " +
          "of one test); null when it cannot be computed or the lift is undefined. The decision uses the variant's pValue",
      ),
    },
    { description },
  );

/** The query options every comparison takes (the method's description differs per route). */
export const comparisonQuery = {
  control: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The variant key every other variant is compared with. Default: the first variant',
      examples: ['A'],
    }),
  ),
  alpha: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      exclusiveMaximum: 0.5,
      default: 0.05,
      description: 'Significance level: intervals cover 1 − alpha, and p < alpha is significant',
    }),
  ),
  sided: Type.Optional(
    Type.Enum(['two', 'greater', 'less', 'better'], {
      type: 'string',
      default: 'two',
      description:
        "two: any difference; greater: treatment > control; less: treatment < control; better: one-sided toward each metric's declared direction (two-sided, with a warning, where none is declared)",
    }),
  ),
  nStar: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      description:
        'method=sequential: the total sample size at which the confidence sequence is tightest; set it near ' +
        'the size you expect. Default 5000',
    }),
  ),
};

/** Significant in the metric's better (worse) direction; null without a direction. */
export const Better = Type.Optional(
  Type.Union([Type.Boolean(), Type.Null()], {
    description: "Significant and in the metric's better direction; null without a direction",
  }),
);
export const Worse = Type.Optional(
  Type.Union([Type.Boolean(), Type.Null()], {
    description: "Significant and in the metric's worse direction; null without a direction",
  }),
);

/** Which test decided and produced the intervals beside it, and their level. */
export const Test = (description: string) =>
  Type.Object(
    {
      method: Type.String({
        description:
          'welch: Welch t (means); sequence: always-valid confidence sequence; posterior: flat-prior normal ' +
          'posterior (bayesian means); score: Miettinen–Nurminen score test (proportions); score-sequence: the ' +
          'score statistic with the sequence’s critical value; known: no spread in either arm, the difference is exact',
      }),
      level: Type.Number({
        description:
          "The intervals' coverage: 1 − alpha, or 1 − the adjusted level under a correction (0.983 for Holm over " +
          'three at alpha 0.05); 1 for a difference known exactly',
      }),
    },
    { description },
  );
