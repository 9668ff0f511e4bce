// Two validators: bodies are strict (a number is never coerced into a userId); query strings coerce.
// Compiled once per schema, so Fastify and the fast transport share each validator.
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    ...options,
  });
  addFormats.default(ajv);
  return ajv;
}

export type Validator = ReturnType<FastifySchemaCompiler<unknown>> & {
  errors?: Array<{
    instancePath: string;
    message?: string;
    keyword: string;
    params: Record<string, unknown>;
  }> | null;
};

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv({ coerceTypes: false });
  const coercing = makeAjv({ coerceTypes: 'array' });
  const compiled = { body: new WeakMap<object, Validator>(), other: new WeakMap<object, Validator>() };
  return ({ schema, httpPart }) => {
    const cache = httpPart === 'body' ? compiled.body : compiled.other;
    let validator = cache.get(schema as object);
    if (validator === undefined) {
      validator = (httpPart === 'body' ? strict : coercing).compile(schema as object) as Validator;
      cache.set(schema as object, validator);
    }
    return validator;
  };
}

let itemAjv: Ajv | undefined;

/**
 * A check of one part of a body against `schema`, as strict as a body's (the items of a batch, each
 * checked on its own): null when it fits, else the issues (errors.ts's describeValidation words them).
 */
export function compileItemCheck(schema: object): (value: unknown) => Validator['errors'] {
  itemAjv ??= makeAjv({ coerceTypes: false });
  const validate = itemAjv.compile(schema);
  return (value) => (validate(value) ? null : ([...(validate.errors ?? [])] as Validator['errors']));
}
