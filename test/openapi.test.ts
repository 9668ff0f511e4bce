// The OpenAPI document (issue 13, section 4), read from /openapi.json as a client would: examples on every
// route, named component schemas, the export's 200, probes without the lock, every analysis field described.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import {
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

interface Schema {
  $ref?: string;
  title?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  [keyword: string]: unknown;
}
interface Media {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Parameter {
  name: string;
  in: string;
  description?: string;
  schema: Schema;
  example?: unknown;
}
interface Operation {
  summary?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}
interface Document {
  security?: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const REF_PREFIX = '#/components/schemas/';

let dir: string;
let runtime: TestRuntime;
let doc: Document;

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return; // the suites below are skipped too
  runtime = await startTestRuntime(dir, 'openapi');
  const res = await runtime.api.get('/openapi.json', null);
  assert.equal(res.statusCode, 200, res.body.slice(0, 200));
  doc = res.json();
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

/** Every operation, labelled `METHOD /path`. */
function operations(): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op]),
  );
}

function operation(method: string, path: string): Operation {
  const op = doc.paths[path]?.[method];
  assert.ok(op, `${method.toUpperCase()} ${path} is not in the document`);
  return op;
}

function successes(op: Operation): Array<[string, { description: string; content?: Record<string, Media> }]> {
  return Object.entries(op.responses).filter(([status]) => /^2\d\d$/.test(status));
}

function examplesOf(media: Media): unknown[] {
  if (media.example !== undefined) return [media.example];
  return Object.values(media.examples ?? {}).map((e) => e.value);
}

function resolve(schema: Schema): Schema {
  if (schema.$ref === undefined) return schema;
  assert.ok(schema.$ref.startsWith(REF_PREFIX), `${schema.$ref} is not a component reference`);
  const target = doc.components.schemas[schema.$ref.slice(REF_PREFIX.length)];
  assert.ok(target, `${schema.$ref} names no component`);
  return target;
}

/** Every schema object inside `schema` (itself included), through the keywords that hold subschemas. */
function* schemasIn(schema: Schema): Generator<Schema> {
  yield schema;
  for (const sub of Object.values(schema.properties ?? {})) yield* schemasIn(sub);
  if (schema.items) yield* schemasIn(schema.items);
  if (typeof schema.additionalProperties === 'object') yield* schemasIn(schema.additionalProperties);
  for (const list of [schema.anyOf, schema.oneOf, schema.allOf]) {
    for (const sub of list ?? []) yield* schemasIn(sub);
  }
}

/** The ref of the JSON success schema of `method path`. */
function successRef(method: string, path: string): string | undefined {
  const [, response] = successes(operation(method, path))[0] ?? [];
  return response?.content?.['application/json']?.schema?.$ref;
}

/**
 * Checks values against the document's own schemas: OpenAPI 3.0's `nullable` is an Ajv keyword, and the
 * components go under `$defs` so that the references resolve inside the schema being compiled.
 */
function validator(): (schema: Schema, value: unknown) => string | null {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return (schema, value) => {
    const withDefs = { ...schema, $defs: doc.components.schemas };
    const validate = ajv.compile(
      JSON.parse(JSON.stringify(withDefs).replaceAll(`"${REF_PREFIX}`, '"#/$defs/')),
    );
    return validate(value) ? null : ajv.errorsText(validate.errors);
  };
}

describe('the OpenAPI document', { skip: SKIP_BACKEND }, () => {
  test('every operation has a summary and documents a 2xx answer', () => {
    const ops = operations();
    assert.ok(ops.length >= 12, `only ${ops.length} operations`);
    for (const [label, op] of ops) {
      assert.ok(op.summary && op.summary.length > 0, `${label} has no summary`);
      assert.ok(successes(op).length > 0, `${label} documents no 2xx response`);
    }
  });

  test('every request body has an example', () => {
    const withBodies = operations().filter(([, op]) => op.requestBody !== undefined);
    assert.ok(withBodies.length >= 5, `only ${withBodies.length} operations take a body`);
    for (const [label, op] of withBodies) {
      for (const [type, media] of Object.entries(op.requestBody!.content)) {
        assert.ok(examplesOf(media).length > 0, `${label} ${type} body has no example`);
      }
    }
  });

  test('every 2xx JSON answer has an example', () => {
    let checked = 0;
    for (const [label, op] of operations()) {
      for (const [status, response] of successes(op)) {
        const media = response.content?.['application/json'];
        if (media === undefined) continue;
        assert.ok(examplesOf(media).length > 0, `${label} ${status} has no example`);
        checked++;
      }
    }
    assert.ok(checked >= 11, `only ${checked} JSON answers`);
  });

  test('every example (bodies, answers, parameters) is valid against its schema', () => {
    const check = validator();
    for (const [label, op] of operations()) {
      const media = [
        ...Object.entries(op.requestBody?.content ?? {}).map(([t, m]) => [`body ${t}`, m] as const),
        ...Object.entries(op.responses).flatMap(([status, r]) =>
          Object.entries(r.content ?? {}).map(([t, m]) => [`${status} ${t}`, m] as const),
        ),
      ];
      for (const [where, m] of media) {
        for (const example of examplesOf(m)) {
          const problem = check(m.schema ?? {}, example);
          assert.equal(problem, null, `${label} ${where}: ${problem}`);
        }
      }
      for (const p of op.parameters ?? []) {
        if (p.example === undefined) continue;
        const problem = check(p.schema, p.example);
        assert.equal(problem, null, `${label} parameter ${p.name}: ${problem}`);
      }
    }
  });

  test('the slug, cursor and metrics parameters have examples', () => {
    const example = (method: string, path: string, name: string) =>
      operation(method, path).parameters?.find((p) => p.name === name)?.example;
    assert.equal(example('get', '/experiment/{slug}', 'slug'), 'checkout-prompt');
    assert.equal(typeof example('get', '/experiment/{slug}/results', 'cursor'), 'string');
    assert.equal(example('get', '/experiment/{slug}/analysis', 'metrics'), 'latency_ms,rating');
  });

  test('the shared schemas are named once in components.schemas and referenced from the paths', () => {
    const names = [
      'Experiment',
      'ExperimentList',
      'Variant',
      'Error',
      'Assignment',
      'LogResponse',
      'LogManyResponse',
      'Result',
      'ResultPage',
      'Analysis',
      'Health',
    ];
    for (const name of names)
      assert.ok(doc.components.schemas[name], `components.schemas.${name} is missing`);

    assert.equal(successRef('post', '/experiments'), `${REF_PREFIX}Experiment`);
    assert.equal(successRef('get', '/experiments'), `${REF_PREFIX}ExperimentList`);
    assert.equal(successRef('get', '/experiment/{slug}'), `${REF_PREFIX}Experiment`);
    assert.equal(successRef('patch', '/experiment/{slug}'), `${REF_PREFIX}Experiment`);
    assert.equal(successRef('post', '/experiment/{slug}/assign'), `${REF_PREFIX}Assignment`);
    assert.equal(successRef('post', '/experiment/{slug}/log'), `${REF_PREFIX}LogResponse`);
    assert.equal(successRef('post', '/experiment/{slug}/logs'), `${REF_PREFIX}LogManyResponse`);
    assert.equal(successRef('get', '/experiment/{slug}/results'), `${REF_PREFIX}ResultPage`);
    assert.equal(successRef('get', '/experiment/{slug}/analysis'), `${REF_PREFIX}Analysis`);
    assert.equal(successRef('get', '/healthz'), `${REF_PREFIX}Health`);
    const created = operation('post', '/experiments');
    assert.equal(created.responses['409']?.content?.['application/json']?.schema?.$ref, `${REF_PREFIX}Error`);
    const variants = created.requestBody?.content['application/json']?.schema?.properties?.variants;
    assert.equal(variants?.items?.$ref, `${REF_PREFIX}Variant`, 'the create body does not reference Variant');
    const experiment = doc.components.schemas.Experiment!;
    assert.equal(experiment.properties?.variants?.items?.$ref, `${REF_PREFIX}Variant`);
    assert.equal(doc.components.schemas.ResultPage?.properties?.results?.items?.$ref, `${REF_PREFIX}Result`);

    // Once: no titled schema is left inline in the paths, and every reference names a component.
    for (const [label, op] of operations()) {
      const bodies = [op.requestBody, ...Object.values(op.responses)].flatMap((r) =>
        Object.values(r?.content ?? {}),
      );
      for (const media of bodies) {
        for (const s of schemasIn(media.schema ?? {})) {
          assert.equal(s.title, undefined, `${label} has an inline copy of ${s.title}`);
          if (s.$ref !== undefined) resolve(s);
        }
      }
    }
    for (const component of Object.values(doc.components.schemas)) {
      for (const s of schemasIn(component)) if (s.$ref !== undefined) resolve(s);
    }
  });

  test('the history: both event routes answer an EventList of Events with an Actor, and document their filters', () => {
    assert.equal(successRef('get', '/experiment/{slug}/events'), `${REF_PREFIX}EventList`);
    assert.equal(successRef('get', '/events'), `${REF_PREFIX}EventList`);
    const list = doc.components.schemas.EventList!;
    assert.equal(list.properties?.events?.items?.$ref, `${REF_PREFIX}Event`);
    assert.equal(doc.components.schemas.Event?.properties?.actor?.$ref, `${REF_PREFIX}Actor`);
    const names = (method: string, path: string) =>
      (operation(method, path).parameters ?? []).map((p) => p.name).sort();
    assert.deepEqual(names('get', '/events'), ['cursor', 'limit', 'since', 'type']);
    assert.deepEqual(names('get', '/experiment/{slug}/events'), ['cursor', 'limit', 'since', 'slug', 'type']);
    assert.ok(operation('get', '/events').responses['403'], '/events documents its 403');
  });

  test('the export documents a 200 answering NDJSON or CSV text', () => {
    const ok = operation('get', '/experiment/{slug}/results/export').responses['200'];
    assert.ok(ok, 'the export documents no 200');
    assert.ok(ok.description.length > 0);
    for (const type of ['application/x-ndjson', 'text/csv']) {
      const media: Media | undefined = ok.content?.[type];
      assert.ok(media, `the export's 200 has no ${type}`);
      assert.equal(media.schema?.type, 'string', `${type} is not a string`);
      assert.equal(typeof media.example, 'string', `${type} has no example`);
    }
    assert.equal(ok.content?.['application/json'], undefined);
  });

  test('/healthz and /readyz need no key (security: [], no lock); the other operations keep the key', () => {
    assert.deepEqual(doc.security, [{ apiKey: [] }]);
    for (const path of ['/healthz', '/readyz']) {
      assert.deepEqual(operation('get', path).security, [], `${path} shows the lock`);
    }
    for (const [label, op] of operations()) {
      if (label === 'GET /healthz' || label === 'GET /readyz') continue;
      assert.notDeepEqual(op.security, [], `${label} is documented as needing no key`);
    }
  });

  test('every property of the analysis answer, at any depth, has a description', () => {
    const undescribed: string[] = [];
    const seen: string[] = [];
    const visit = (schema: Schema, path: string, refs: Set<string>): void => {
      if (schema.$ref !== undefined) {
        if (refs.has(schema.$ref)) return;
        refs = new Set([...refs, schema.$ref]);
      }
      const s = resolve(schema);
      for (const [name, property] of Object.entries(s.properties ?? {})) {
        const at = path === '' ? name : `${path}.${name}`;
        seen.push(at);
        // A property that is a reference is described by the schema it names.
        if (!property.description && !resolve(property).description) undescribed.push(at);
        visit(property, at, refs);
      }
      if (s.items) visit(s.items, `${path}[]`, refs);
      if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${path}{}`, refs);
      for (const member of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) {
        visit(member, path, refs);
      }
    };
    const ok = operation('get', '/experiment/{slug}/analysis').responses['200'];
    visit(ok?.content?.['application/json']?.schema ?? {}, '', new Set());
    assert.deepEqual(undescribed, []);
    for (const field of [
      'exposures',
      'srm.pValue',
      'srm.mismatch',
      'metrics[].kind',
      'metrics[].variants[].n',
      'metrics[].variants[].stdDev',
      'metrics[].variants[].relative.ci',
      'metrics[].variants[].absolute.pValue',
      'metrics[].variants[].rawPValue',
      'metrics[].variants[].test.method',
      'metrics[].variants[].test.level',
      'metrics[].variants[].exact',
      'metrics[].variants[].chanceToWin',
      'metrics[].variants[].risk',
      'metrics[].variants[].significant',
      'warnings',
      'version',
    ]) {
      assert.ok(seen.includes(field), `${field} is not in the analysis schema`);
    }
  });

  test('every analysis query parameter has a description', () => {
    const parameters = operation('get', '/experiment/{slug}/analysis').parameters ?? [];
    const query = parameters.filter((p) => p.in === 'query');
    assert.deepEqual(query.map((p) => p.name).sort(), [
      'alpha',
      'control',
      'correction',
      'method',
      'metrics',
      'nStar',
      'segment',
      'segmentValues',
      'sided',
      'version',
    ]);
    for (const p of query) assert.ok(p.description, `${p.name} has no description`);
  });

  test('the request examples are accepted by the service as they are', async () => {
    const body = (method: string, path: string) =>
      examplesOf(operation(method, path).requestBody!.content['application/json']!)[0];
    const created = await runtime.api.post('/experiments', body('post', '/experiments'));
    assert.equal(created.statusCode, 201, created.body);
    const slug: string = created.json().slug;
    const calls: Array<['patch' | 'post', string]> = [
      ['patch', '/experiment/{slug}'],
      ['post', '/experiment/{slug}/assign'],
      ['post', '/experiment/{slug}/log'],
      ['post', '/experiment/{slug}/logs'],
    ];
    for (const [method, path] of calls) {
      const url = path.replace('{slug}', slug);
      const example = body(method, path);
      const res =
        method === 'patch' ? await runtime.api.patch(url, example) : await runtime.api.post(url, example);
      assert.equal(res.statusCode, 200, `${method} ${path}: ${res.body}`);
    }
    const analysis = await runtime.api.get(`/experiment/${slug}/analysis?metrics=latency_ms,rating`);
    assert.equal(analysis.statusCode, 200, analysis.body);
  });
});
