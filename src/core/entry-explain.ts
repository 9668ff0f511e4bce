// Why a unit is where it is (ADR 0038): the clause that decided, in words, for preview and MCP. Not the
// hot path: conditions are compiled again clause by clause here. Pure.
import { bucketRanges, hashV1, hashV2 } from './assignment.js';
import { compileCondition, type SavedGroups } from './condition.js';
import { attributesOf, type Decision } from './entry.js';
import type { Experiment } from './experiment.js';
import type { JsonObject } from './json.js';

const MAX_SHOWN = 200;

function shown(value: unknown): string {
  const text = value === undefined ? 'missing' : JSON.stringify(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}

function valueAt(attributes: Record<string, unknown>, path: string): unknown {
  let at: unknown = attributes;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function range(r: readonly [number, number]): string {
  return `[${r[0]}, ${r[1]})`;
}

/** The first top-level clause of `condition` the attributes fail, in words (a condition ANDs its keys). */
export function failingClause(
  condition: JsonObject,
  attributes: Record<string, unknown>,
  groups: SavedGroups,
): string {
  for (const [key, want] of Object.entries(condition)) {
    if (compileCondition({ [key]: want }).matches(attributes, groups)) continue;
    if (key.startsWith('$')) return `clause ${key} ${shown(want)} does not match`;
    return `\`${key}\` is ${shown(valueAt(attributes, key))}, rule wants ${shown(want)}`;
  }
  return 'the condition does not match';
}

/** The decision in words: which step decided and with what. */
export function explain(
  experiment: Experiment,
  decision: Decision,
  userId: string,
  context: JsonObject | undefined | null,
  groups: SavedGroups,
): string {
  const attributes = attributesOf(userId, context);
  const variant = experiment.variants[decision.index]!.key;
  const sticky = experiment.assignment === 'sticky';
  switch (decision.reason) {
    case 'override': {
      const i = experiment.overrides.findIndex(
        (o) =>
          o.userIds?.includes(userId) ||
          (o.condition && compileCondition(o.condition).matches(attributes, groups)),
      );
      const o = experiment.overrides[i]!;
      const why = o.userIds ? `'${userId}' is listed` : `its condition ${shown(o.condition)} matches`;
      return `override: overrides[${i}] serves ${variant} (${why}); not in the experiment, never analysed`;
    }
    case 'layer': {
      const layer = experiment.layer!;
      const n = hashV1(`__${layer.key}`, userId);
      return `layer: '${userId}' hashes to ${n} in layer '${layer.key}', outside this experiment's range ${range(layer.range)}; served the default ${variant}`;
    }
    case 'targeting':
      return `targeting: ${failingClause(experiment.targeting!, attributes, groups)}; served the default ${variant}`;
    case 'coverage': {
      const where = sticky ? `'${userId}' hashes to ${hashV2(experiment.seed, userId)}` : 'this call drew';
      return `coverage: ${where}, outside the ${experiment.coverage}% covered; served the default ${variant}`;
    }
    default: {
      const passed = [experiment.layer && 'layer', experiment.targeting && 'targeting'].filter(Boolean);
      const gate = passed.length > 0 ? `${passed.join(' and ')} let '${userId}' in; ` : '';
      if (!sticky)
        return `split: ${gate}a random draw gave ${variant} (random experiments draw again on every call)`;
      const n = hashV2(experiment.seed, userId);
      const weights = experiment.variants.map((v) => v.trafficPercent / 100);
      const r = bucketRanges(weights.length, experiment.coverage / 100, weights)[decision.index]!;
      return `split: ${gate}'${userId}' hashes to ${n}, in ${variant}'s range ${range(r)}`;
    }
  }
}
