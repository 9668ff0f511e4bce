// A handler's answer and its route's response schema cannot drift apart (issue 25): the cases below are
// checked by `tsc --noEmit` (each @ts-expect-error must meet its error), and the run-time test shows
// what the check prevents: the serializer drops, silently, a field its schema lacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from 'typebox';
import type { ExtraFields, Fits } from './answer-check.js';
import { compileRoute } from './compile.js';
import { JsonBody, PlainText, route, Stream } from './route.js';
import { createValidatorCompiler } from './validation.js';

const Item = Type.Object({ key: Type.String(), note: Type.Optional(Type.String()) });
const Answer = Type.Object({
  items: Type.Array(Item),
  owner: Type.Union([Type.Object({ name: Type.String() }), Type.Null()]),
  data: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }),
});
const schema = { tags: [], summary: '', response: { 200: Answer } };
const base = { method: 'GET', url: '/x', scope: 'read', schema } as const;
const nothing = { ...schema, response: { 204: { type: 'null' } } };
const good = { items: [{ key: 'a' }], owner: null, data: { anything: { at: ['all'] } } };

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assertType = <T extends true>(): T | undefined => undefined;

test('the paths of the fields a type has and its schema lacks', () => {
  assertType<Equal<ExtraFields<{ a: 1; b: 2 }, { a: number }>, '.b'>>();
  assertType<Equal<ExtraFields<{ a: { b: 1; c: 2 }[] }, { a: { b: number }[] }>, '.a[].c'>>();
  assertType<Equal<ExtraFields<{ a: { b: 1; c: 2 } | null }, { a: { b: number } | null }>, '.a.c'>>();
  assertType<Equal<ExtraFields<{ a: { b: 1 } }, { a: Record<string, unknown> }>, never>>();
  assertType<Equal<ExtraFields<{ a?: number }, { a?: number; b: string }>, never>>();
  assertType<Equal<Fits<{ a: 'x' }, { a: string }>, true>>();
  assertType<Equal<Fits<{ a: 'x'; b: 1 }, { a: string }>, '.b'>>();
  assertType<Equal<Fits<{ a: 1 }, { a: string }>, false>>();
});

test('route() takes an answer of exactly the schema, and the exempt answers', () => {
  route({ ...base, handle: () => good });
  route({ ...base, handle: async () => good });
  route({ ...base, handle: () => new JsonBody('{}') });
  route({
    ...base,
    status: 204,
    schema: { ...schema, response: { 204: { type: 'null' } } },
    handle: () => {},
  });
  const content = { content: { 'text/plain': { schema: { type: 'string' } } } };
  route({
    ...base,
    schema: { ...schema, response: { 200: content } },
    handle: () => new PlainText('', 'text/plain'),
  });
  route({
    ...base,
    schema: { ...schema, response: { 200: content } },
    handle: async () => new Stream(null as never, {}),
  });
});

test('route() refuses an answer with a field its schema lacks, or of another type', () => {
  // @ts-expect-error: `extra` is not in the schema (the serializer would drop it).
  route({ ...base, handle: () => ({ ...good, extra: 1 }) });
  // @ts-expect-error: nested in an array item.
  route({ ...base, handle: async () => ({ ...good, items: [{ key: 'a', secret: 'x' }] }) });
  // @ts-expect-error: nested in a nullable object.
  route({ ...base, handle: () => ({ ...good, owner: { name: 'n', id: 7 } }) });
  // @ts-expect-error: a required field is missing.
  route({ ...base, handle: () => ({ items: [], data: {} }) });
  // @ts-expect-error: a field of another type.
  route({ ...base, handle: () => ({ ...good, items: [{ key: 1 }] }) });
  // @ts-expect-error: a 204 answers nothing.
  route({ ...base, status: 204, schema: nothing, handle: () => good });
  // @ts-expect-error: a success schema that is not TypeBox has no type to check against.
  route({ ...base, schema: { ...schema, response: { 200: { type: 'object' } } }, handle: () => ({}) });
});

test('what the check prevents: the serializer drops a field its schema lacks', () => {
  const declared = route({ ...base, handle: () => good });
  const compiled = compileRoute(declared, createValidatorCompiler());
  const json = compiled.serialize({ ...good, extra: 'dropped' });
  assert.deepEqual(JSON.parse(json), good);
});
