// Who enters (ADR 0038): POST /experiment/:slug/preview (what assign would answer, and why; nothing
// recorded) and GET /layers/:key (the experiments of a layer and its free ranges).
import Type from 'typebox';
import type { LayerAnswer } from '../core/layers.js';
import type { Preview } from '../services/preview.js';
import { type Route, route } from './route.js';
import { AssignBody } from './schemas/assign.js';
import { errorResponses, JsonObjectSchema, SlugParams } from './schemas/common.js';

const tags = ['targeting'];

const Reason = Type.Union(
  [Type.Enum(['override', 'layer', 'targeting', 'coverage'], { type: 'string' }), Type.Null()],
  { description: 'Why the unit did not enter; null when it entered' },
);

const PreviewResponse = Type.Object(
  {
    variant: Type.String({ description: 'The variant assign would serve' }),
    payload: JsonObjectSchema,
    inExperiment: Type.Boolean(),
    reason: Reason,
    explanation: Type.String({ description: 'The step and clause that decided, in words' }),
    status: Type.String({ description: "The experiment's status (assign serves running experiments only)" }),
  },
  {
    title: 'Preview',
    examples: [
      {
        variant: 'A',
        payload: { prompt: 'You are a helpful assistant.' },
        inExperiment: false,
        reason: 'targeting',
        explanation: 'targeting: `plan` is "free", rule wants {"$in":["pro","team"]}; served the default A',
        status: 'running',
      },
    ],
  },
);

const Range = Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[start, end)' });

const LayerResponse = Type.Object(
  {
    key: Type.String(),
    experiments: Type.Array(Type.Object({ experiment: Type.String(), status: Type.String(), range: Range }), {
      description: 'Non-archived experiments naming the layer, by range start',
    }),
    free: Type.Array(Range, { description: 'Ranges no running experiment of the layer takes' }),
  },
  {
    title: 'Layer',
    examples: [
      {
        key: 'prompts',
        experiments: [{ experiment: 'checkout-prompt', status: 'running', range: [0, 0.5] }],
        free: [[0.5, 1]],
      },
    ],
  },
);

export function entryRoutes(preview: Preview, layer: (key: string) => LayerAnswer): Route[] {
  return [
    route({
      method: 'POST',
      url: '/experiment/:slug/preview',
      scope: 'read',
      schema: {
        tags,
        summary: 'Preview who enters: what assign would answer a user, and why',
        description:
          'Runs overrides → layer → targeting → coverage → split for the user and context as assign would, ' +
          'for an experiment in any status, and records nothing (no exposure). Random experiments draw once.',
        params: SlugParams,
        body: AssignBody,
        response: { 200: PreviewResponse, ...errorResponses },
      },
      handle: ({ params, body }) => preview(params.slug, body.userId, body.context),
    }),
    route({
      method: 'GET',
      url: '/layers/:key',
      scope: 'read',
      schema: {
        tags,
        summary: 'A layer: its experiments and free ranges',
        description:
          'Layers are named by the experiments that use them (layer: {key, range}); a key no experiment names ' +
          'answers no experiments and the whole range free.',
        params: Type.Object({ key: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: LayerResponse, ...errorResponses },
      },
      handle: ({ params }) => layer(params.key),
    }),
  ];
}
