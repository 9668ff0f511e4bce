// The OpenAPI document's named schemas: every titled schema in a request or response body becomes one of
// components.schemas, referenced where it was.
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, unknown>;

function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Where a schema holds subschemas; every other keyword's value is data (examples, enum, default), whose
// objects may well have a `title` of their own and must be left alone.
const SUBSCHEMA = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'];
const SUBSCHEMA_LISTS = ['items', 'prefixItems', 'anyOf', 'oneOf', 'allOf'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties'];

/** `schema` with every titled schema in it, itself included, moved to `named` and referenced. */
function referenceTitled(schema: unknown, named: Json): unknown {
  if (!isJsonObject(schema)) return schema;
  const out: Json = { ...schema };
  for (const k of SUBSCHEMA) if (isJsonObject(out[k])) out[k] = referenceTitled(out[k], named);
  for (const k of SUBSCHEMA_LISTS) {
    const list = out[k];
    if (Array.isArray(list)) out[k] = list.map((s) => referenceTitled(s, named));
  }
  for (const k of SUBSCHEMA_MAPS) {
    const map = out[k];
    if (isJsonObject(map)) {
      out[k] = Object.fromEntries(Object.entries(map).map(([n, s]) => [n, referenceTitled(s, named)]));
    }
  }
  if (typeof out.title !== 'string') return out;
  const name = out.title;
  const seen = named[name];
  if (seen === undefined) {
    named[name] = out;
  } else {
    // The same schema is converted once per use: where it is a whole body its example moved to the
    // media type, where nested it kept it. Anything else differing is two schemas sharing a title.
    const { example: seenExample, ...seenRest } = seen as Json;
    const { example, ...rest } = out;
    if (!isDeepStrictEqual(seenRest, rest)) throw new Error(`two different schemas are titled '${name}'`);
    if (seenExample === undefined && example !== undefined) (seen as Json).example = example;
  }
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * @fastify/swagger's transformObject: every schema with a title in a request or response body becomes
 * components.schemas[title], referenced where it was. The route schemas keep their schemas inline, so
 * validation and serialization are untouched. Parameters are left inline (their schemas lose their
 * descriptions to the parameter, so copies would differ, and Swagger UI shows them better inline).
 */
export function nameSchemas<T extends object>(document: T): T {
  const doc = document as Json;
  const components = (isJsonObject(doc.components) ? doc.components : {}) as Json;
  const named: Json = {};
  const paths = isJsonObject(doc.paths) ? doc.paths : {};
  for (const item of Object.values(paths)) {
    if (!isJsonObject(item)) continue;
    for (const operation of Object.values(item)) {
      if (!isJsonObject(operation)) continue;
      const bodies = [
        (operation.requestBody as Json | undefined)?.content,
        ...Object.values((operation.responses as Json | undefined) ?? {}).map((r) => (r as Json).content),
      ];
      for (const content of bodies) {
        if (!isJsonObject(content)) continue;
        for (const media of Object.values(content)) {
          if (isJsonObject(media) && 'schema' in media) media.schema = referenceTitled(media.schema, named);
        }
      }
    }
  }
  const schemas = isJsonObject(components.schemas) ? components.schemas : {};
  for (const name of Object.keys(named)) {
    if (Object.hasOwn(schemas, name)) throw new Error(`components.schemas already has '${name}'`);
  }
  return { ...doc, components: { ...components, schemas: { ...schemas, ...named } } } as T;
}
