// Schema parts of what a definition derives (ADR 0035): a ratio's parts, a cap and what it capped, an
// adjustment on a covariate and the effects before it. TypeBox, as analysis-schema.ts.
import { Type } from 'typebox';
import { Effect, Nullable, Test } from './schema-parts.js';

export const RatioSchema = Type.Object(
  {
    numerator: Type.String({ description: "The metric summed over each unit's values above the line" }),
    denominator: Type.String({ description: "The metric summed over each unit's values below the line" }),
  },
  {
    description:
      "A ratio metric: Σ numerator / Σ denominator over each unit's values (a user's in sticky experiments, a call's otherwise), by the delta method",
  },
);

export const CapSchema = Type.Object(
  {
    value: Nullable(
      'The cap used (the percentile read from the sketches, or the declared value); null: not capped',
    ),
    percentile: Nullable(
      'The declared percentile of the units pooled over the variants; null for a fixed value',
    ),
    units: Nullable("Units above the cap, all variants (a straddling bin's users count in part)"),
    share: Nullable('units / all units'),
  },
  {
    description:
      "Capping: a unit's mean per call above the cap counts as the cap (a call's value; a user's mean per call in sticky experiments). Every mean, interval and p-value of this metric is of the capped values",
  },
);

export const AdjustmentSchema = Type.Object(
  {
    covariate: Type.String({ description: 'The declared covariate' }),
    adjusted: Type.Boolean({
      description: 'The adjustment was made (false: too few units, or no covariance)',
    }),
    theta: Nullable('The pooled within-variant slope of the metric on the covariate'),
    covariateMean: Nullable("The covariate's mean over every unit"),
    varianceReduction: Nullable(
      '1 − adjusted / unadjusted variance of a difference between variants (0.4: intervals about 23% narrower)',
    ),
  },
  {
    description:
      "Regression adjustment (CUPED) on a covariate the treatment cannot change: the variants' means, effects, intervals and p-values are the adjusted ones; `unadjusted` per variant keeps the others",
  },
);

export const CappedSchema = Type.Object(
  {
    units: Nullable('Units of this variant above the cap'),
    share: Nullable("units / the variant's units"),
  },
  { description: 'With a cap: what it capped in this variant' },
);

export const UnadjustedSchema = Type.Object(
  {
    mean: Nullable('The mean before the adjustment'),
    absolute: Type.Optional(Effect('The absolute effect before the adjustment')),
    relative: Type.Optional(Effect('The lift before the adjustment')),
    pValue: Type.Optional(Nullable('The p-value before the adjustment (before any correction)')),
    test: Type.Optional(Test('The test of the unadjusted comparison')),
  },
  { description: 'With a covariate: the reading without the adjustment' },
);
