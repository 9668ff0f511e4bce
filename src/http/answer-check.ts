// What a route's handler may answer, tied at compile time to the route's success response schema
// (issue 25). Both transports serialize an answer with fast-json-stringify by that schema (compile.ts),
// which drops, silently, every field the schema does not declare. So route() (route.ts) refuses, as a
// type error, a handler whose answer is not the schema's Static type, or whose answer carries a field
// the schema lacks at any depth: the type of an answer and its schema cannot drift apart.
//
// Exempt, because nothing serializes them by the schema: JsonBody (assign's answer, pre-serialized from
// a prefix compiled per experiment), Tagged (the definitions, JSON made ahead under an entity tag), and
// the answers whose schema documents `content` by media type, Stream (exports), PlainText (metrics) and
// Relayed (MCP).
import type { Static, TSchema } from 'typebox';
import type { JsonBody, PlainText, Relayed, RouteInput, RouteSchema, Stream, Tagged } from './route-types.js';

/** A schema built by TypeBox: its type carries what it validates (a plain JSON object's does not). */
type Typed = TSchema & ({ '~kind': string } | { '~unsafe': unknown });

/** Answers sent as they are, never serialized by the response schema. */
export type Unserialized = JsonBody | Tagged;

/** What the handler of a route with schema `S`, answering status `St` on success, may return. */
export type Expected<S extends RouteSchema, St extends number> = St extends 204
  ? // biome-ignore lint/suspicious/noConfusingVoidType: a 204's handler returns nothing, `async () => {}` included
    void
  : S['response'][St] extends infer Sch
    ? Sch extends { content: object }
      ? Stream | PlainText | Relayed
      : Sch extends Typed
        ? Static<Sch> | Unserialized
        : never
    : never;

/** The answer the success schema serializes (its Static type), or never. */
type Serialized<S extends RouteSchema, St extends number> = St extends 204
  ? never
  : S['response'][St] extends infer Sch
    ? Sch extends { content: object }
      ? never
      : Sch extends Typed
        ? Static<Sch>
        : never
    : never;

/** The keys of every object in `B` (a union: `X | null`). */
type KeysOf<B> = B extends readonly unknown[] ? never : B extends object ? keyof B : never;
/** The type of key `K` in whichever objects of `B` have it. */
type At<B, K> = B extends object ? (K extends keyof B ? B[K] : never) : never;
/** The element type of whichever arrays are in `B`. */
type Items<B> = B extends readonly (infer I)[] ? I : never;

/**
 * The paths (`.experiments[].foo`) of the fields `A` has and `B` lacks, at any depth; never when none.
 * Both may be unions (a field `X | null`); an index signature in `B` (a client's JSON object) takes any key.
 */
export type ExtraFields<A, B, Path extends string = ''> = A extends readonly (infer I)[]
  ? ExtraFields<I, Items<B>, `${Path}[]`>
  : A extends object
    ? string extends KeysOf<B>
      ? never
      : {
          [K in keyof A & string]-?: K extends KeysOf<B>
            ? ExtraFields<A[K], At<B, K>, `${Path}.${K}`>
            : `${Path}.${K}`;
        }[keyof A & string]
    : never;

/**
 * What route() asks of a declaration on top of its shape: `handle` answers the Expected type, and no
 * field of its answer is missing from the schema (the error names the paths in `fieldsMissingFromSchema`).
 */
export type AnswerCheck<S extends RouteSchema, St extends number, R> = {
  handle(input: RouteInput<S>): Expected<S, St> | Promise<Expected<S, St>>;
} & (ExtraFields<
  Exclude<Awaited<R>, Unserialized | Stream | PlainText | Relayed>,
  Serialized<S, St>
> extends infer Extra
  ? [Extra] extends [never]
    ? unknown
    : { fieldsMissingFromSchema: Extra }
  : never);

/**
 * `true` when an answer of type `A` serializes by a schema of Static type `B` without loss: `A` is a `B`
 * and has no field `B` lacks. For the answers made without the serializer (assign's, the definitions):
 * `type _ = Assert<Fits<Answer, Static<typeof Schema>>>` fails to compile when they drift apart.
 */
export type Fits<A, B> = [A] extends [B]
  ? [ExtraFields<A, B>] extends [never]
    ? true
    : ExtraFields<A, B>
  : false;

export type Assert<T extends true> = T;
