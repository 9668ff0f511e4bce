// Who enters an experiment (ADR 0038): the schemas of targeting, coverage, layer, overrides and
// defaultVariant. Shapes only; core/entry-rules.ts checks conditions and references, naming each path.
import Type from 'typebox';
import type { JsonObject } from '../../core/json.js';

const Condition = (description: string) =>
  Type.Unsafe<JsonObject>({ type: 'object', additionalProperties: true, description });

export const TargetingSchema = Type.Union(
  [
    Condition(
      'A GrowthBook condition over the assign context (plus userId): {"plan": {"$in": ["pro", "team"]}}. Operators $eq $ne $gt $gte $lt $lte $in $nin $all $elemMatch $size $exists $type $regex $not $and $or $nor, $ini $nini $alli $regexi, $veq … $vlte, $inGroup/$notInGroup (saved groups)',
    ),
    Type.Null(),
  ],
  { description: 'Who may enter; null (default): everyone' },
);

export const CoverageSchema = Type.Number({
  minimum: 0,
  maximum: 100,
  description:
    'Percent of targeted units that enter (default 100). GrowthBook bucket ranges: raising it only adds units',
});

export const LayerSchema = Type.Union(
  [
    Type.Object(
      {
        key: Type.String({ description: 'The layer: experiments of one layer never share a unit' }),
        range: Type.Array(Type.Number({ minimum: 0, maximum: 1 }), {
          minItems: 2,
          maxItems: 2,
          description: '[start, end): the share of the layer this experiment takes (hash v1 of the unit id)',
        }),
      },
      { title: 'ExperimentLayer' },
    ),
    Type.Null(),
  ],
  { description: 'Mutual exclusion: running experiments of one layer take disjoint ranges (409 otherwise)' },
);

const OverrideSchema = Type.Object(
  {
    variant: Type.String(),
    userIds: Type.Optional(Type.Array(Type.String())),
    condition: Type.Optional(Condition('A condition over the attributes, as targeting')),
  },
  { title: 'Override', description: 'Exactly one of userIds or condition' },
);
const OVERRIDES =
  'QA overrides, first match wins, before layer and targeting: the unit is served the variant, marked inExperiment false, never analysed';
export const OverridesSchema = Type.Array(OverrideSchema, { description: OVERRIDES });

export const DefaultVariantSchema = Type.Union([Type.String(), Type.Null()], {
  description: 'Served to units that do not enter; null (default): the first variant',
});

/** The five fields, as an experiment shows them. */
export const entryProperties = {
  targeting: TargetingSchema,
  coverage: CoverageSchema,
  layer: LayerSchema,
  overrides: OverridesSchema,
  defaultVariant: DefaultVariantSchema,
};

/** The five fields, as create and PATCH take them (each optional). */
export const entryInputs = {
  targeting: Type.Optional(TargetingSchema),
  coverage: Type.Optional(CoverageSchema),
  layer: Type.Optional(LayerSchema),
  overrides: Type.Optional(Type.Array(OverrideSchema, { maxItems: 50, description: OVERRIDES })),
  defaultVariant: Type.Optional(DefaultVariantSchema),
};
