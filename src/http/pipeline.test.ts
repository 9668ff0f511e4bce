// The pipeline's stages on routes declared like the real ones, with fake handlers: what it answers, in
// process through inject() and on a real node:http server where the connection is the point. (These
// were the fast transport's tests; the requests it handed to Fastify are now the pipeline's to answer.)
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { Type } from 'typebox';
import { NotFoundError, UnavailableError } from '../core/errors.js';
import { ROOT } from '../core/keys.js';
import type { IdempotencyService } from '../services/idempotency.js';
import { compileRoute } from './compile.js';
import { createInject } from './inject.js';
import { createPipeline, type Pipeline } from './pipeline.js';
import { createRequestLog } from './request-log.js';
import { JsonBody, type Route, route } from './route.js';
import { AssignBody, SlugParams } from './schemas.js';
import { createValidatorCompiler } from './validation.js';

const KEY = 'fast-path-key-0123456789';

function pipelineOf(routes: Route[], closing = () => false): Pipeline {
  const compile = createValidatorCompiler();
  return createPipeline({
    routes: routes.map((r) => compileRoute(r, compile)),
    authenticate: (k) => (k === KEY ? ROOT : null),
    bodyLimit: 100,
    maxParamLength: 1000,
    log: createRequestLog(pino({ level: 'silent' }), { slowMs: 1000 }),
    idempotency: {} as IdempotencyService,
    onWriteError: (err) => assert.fail(String(err)),
    closing,
  });
}

const schema = (body: object) => ({
  tags: [],
  summary: '',
  params: SlugParams,
  body: body as never,
  response: { 200: Type.Object({ success: Type.Boolean() }) },
});

const calls: Array<{ slug: string; userId: string; context: unknown }> = [];

const ROUTES = [
  route({
    method: 'POST',
    scope: 'log',
    url: '/experiment/:slug/assign',
    schema: schema(AssignBody),
    handle: ({ params, body }) => {
      const { slug } = params as { slug: string };
      if (slug === 'vanishing') throw new NotFoundError(`no running experiment with slug '${slug}'`);
      if (slug === 'broken') throw new Error('boom');
      const { userId, context } = body as { userId: string; context?: unknown };
      calls.push({ slug, userId, context });
      return new JsonBody('{"variant":"A"}');
    },
  }),
  // @ts-expect-error: a field the schema lacks is refused at compile time (answer-check.ts); at run time the serializer drops it (tested below).
  route({
    method: 'POST',
    scope: 'log',
    url: '/experiment/:slug/log',
    schema: schema({ type: 'object' }),
    handle: async ({ params }) => {
      if ((params as { slug: string }).slug === 'away')
        throw new UnavailableError('the database is unavailable', 2);
      return { success: true, extra: 'not in the schema' };
    },
  }),
];

describe('the pipeline', () => {
  const inject = createInject(pipelineOf(ROUTES));

  async function send(
    path: string,
    body: string | Buffer,
    headers: Record<string, string> = {},
    method = 'POST',
  ) {
    const res = await inject({
      method,
      url: path,
      payload: body,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-api-key': KEY,
        ...headers,
      },
    });
    return { status: res.statusCode, body: res.body };
  }

  test('answers a well-formed assign', async () => {
    const res = await send('/experiment/x/assign', '{"userId":"u","context":{"a":1}}');
    assert.deepEqual(res, { status: 200, body: '{"variant":"A"}' });
    assert.deepEqual(calls.at(-1), { slug: 'x', userId: 'u', context: { a: 1 } });
  });

  test('serializes an answer by the route schema', async () => {
    assert.deepEqual(await send('/experiment/x/log', '{}'), { status: 200, body: '{"success":true}' });
  });

  test('answers what the fast transport handed to Fastify, as Fastify did', async () => {
    const body = '{"userId":"u"}';
    const cases: Array<[string, string, Record<string, string>, number, string?]> = [
      ['wrong key', '/experiment/x/assign', { 'x-api-key': 'nope' }, 401],
      ['other media type', '/experiment/x/assign', { 'content-type': 'text/plain' }, 400],
      [
        'a charset other than UTF-8',
        '/experiment/x/assign',
        { 'content-type': 'application/json; charset=latin1' },
        400,
      ],
      ['other route', '/experiment/x/results', {}, 404],
      ['inherited name', '/experiment/x/constructor', {}, 404],
      ['percent-encoded slug', '/experiment/%78/assign', {}, 200],
      ['empty slug', '/experiment//assign', {}, 404],
      ['nested path', '/experiment/a/b/assign', {}, 404],
      ['trailing slash', '/experiment/x/assign/', {}, 404],
      ['slug over the limit', `/experiment/${'s'.repeat(1001)}/assign`, {}, 404],
      ['GET', '/experiment/x/assign', {}, 404, 'GET'],
      ['over the limit', '/experiment/x/assign', { 'content-length': '101' }, 413],
    ];
    for (const [name, path, headers, status, method] of cases) {
      const res = await send(path, name === 'over the limit' ? 'x'.repeat(101) : body, headers, method);
      assert.equal(res.status, status, `${name}: ${res.body}`);
      if (status !== 200) assert.match(res.body, /^\{"error":"[^"]+"\}$/, name);
    }
  });

  test('answers problems in a body it has read, as the route would', async () => {
    assert.deepEqual(await send('/experiment/x/assign', '{"userId":5}'), {
      status: 400,
      body: '{"error":"body/userId must be string"}',
    });
    assert.equal((await send('/experiment/x/assign', '{')).status, 400);
    assert.deepEqual(await send('/experiment/vanishing/assign', '{"userId":"u"}'), {
      status: 404,
      body: `{"error":"no running experiment with slug 'vanishing'"}`,
    });
    assert.deepEqual(await send('/experiment/broken/assign', '{"userId":"u"}'), {
      status: 500,
      body: '{"error":"Internal Server Error"}',
    });
  });

  test('a body that is not UTF-8 is refused, not stored with replacement characters', async () => {
    const res = await send(
      '/experiment/x/assign',
      Buffer.from([0x7b, 0x22, 0x75, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    );
    assert.deepEqual(res, {
      status: 400,
      body: '{"error":"body is not valid UTF-8 (byte 3); send JSON in UTF-8"}',
    });
  });

  test('answers an asynchronous route once it settles, with Retry-After on 503', async () => {
    const res = await inject({
      method: 'POST',
      url: '/experiment/away/log',
      payload: '{}',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    });
    assert.deepEqual(
      { status: res.statusCode, retryAfter: res.headers['retry-after'] },
      { status: 503, retryAfter: '2' },
    );
  });
});

describe('the pipeline on a socket', () => {
  let server: ReturnType<typeof createServer>;
  let port: number;
  before(async () => {
    server = createServer(pipelineOf(ROUTES));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test('a body that does not parse is answered with Connection: close; a refused schema keeps the connection', async () => {
    const connection = (body: string) =>
      new Promise<string | undefined>((resolve, reject) => {
        const req = request(
          {
            port,
            path: '/experiment/x/assign',
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'content-length': String(body.length),
              'x-api-key': KEY,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.headers.connection));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    assert.equal(await connection('{"userId":'), 'close');
    assert.equal(await connection('{"userId":5}'), 'keep-alive');
  });
});

describe('the pipeline while the server closes', () => {
  // In the app, SIGTERM's handler runs in the poll phase, and app.close() reaches preClose and
  // server.closeIdleConnections() in the same run of ticks, before the check phase. A connection whose
  // answer waits in the outbox then is not idle (its response is not finished), so it is skipped; the
  // answer would leave with keep-alive and the idle connection hold server.close() until the keep-alive
  // timeout. So a success written once the server has stopped listening closes its connection (writer.ts).
  test('an answer made in the turn closing starts does not keep its connection open', {
    timeout: 10_000,
  }, async () => {
    const pipeline = pipelineOf([ROUTES[0]!]);
    let closeStarted!: () => void;
    const started = new Promise<void>((r) => {
      closeStarted = r;
    });
    let serverClosed!: Promise<void>;
    const server = createServer((req, res) => {
      pipeline(req, res);
      // Closing starts in this turn, after the pipeline has made its answer (its 'end' listener ran first).
      req.on('end', () => {
        serverClosed = new Promise<void>((r) => server.close(() => r()));
        closeStarted();
      });
    });
    server.keepAliveTimeout = 72_000; // Fastify's default
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const body = '{"userId":"u"}';
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const answered = new Promise<void>((r) => {
      socket.on('data', (d: Buffer) => {
        received += d.toString('latin1');
        if (received.endsWith('{"variant":"A"}')) r();
      });
      socket.on('close', () => r());
    });
    socket.on('error', () => undefined);
    try {
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(
        `POST /experiment/x/assign HTTP/1.1\r\nhost: x\r\nx-api-key: ${KEY}\r\n` +
          `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      await started;
      const outcome = await Promise.race([
        serverClosed.then(() => 'closed'),
        new Promise<string>((r) => setTimeout(() => r('still open after 1 s'), 1000)),
      ]);
      await answered;
      assert.match(received, /^HTTP\/1\.1 200 /, received);
      assert.match(received, /\r\nconnection: close\r\n/i, received);
      assert.equal(outcome, 'closed', received);
    } finally {
      socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => (server.listening ? server.close(() => r()) : r()));
    }
  });
});

describe('a route that shapes its own error bodies (errorBody)', () => {
  const shaped = route({
    method: 'POST',
    scope: 'assign',
    url: '/shaped/:key',
    experimentParam: 'key',
    errorBody: (f) =>
      JSON.stringify({ key: f.params.key, stage: f.stage, status: f.status, error: f.message }),
    schema: { ...schema(Type.Object({ n: Type.Integer() })), params: Type.Object({ key: Type.String() }) },
    handle: ({ params }) => {
      if ((params as { key: string }).key === 'gone') throw new NotFoundError('no such thing');
      return { success: true };
    },
  });
  const limited = { ...ROOT, scopes: new Set(['assign']), experiments: new Set(['allowed']) } as typeof ROOT;
  const compile = createValidatorCompiler();
  const inject = createInject(
    createPipeline({
      routes: [compileRoute(shaped, compile)],
      authenticate: (k) => (k === KEY ? ROOT : k === 'limited' ? limited : null),
      bodyLimit: 100,
      maxParamLength: 1000,
      log: createRequestLog(pino({ level: 'silent' }), { slowMs: 1000 }),
      idempotency: {} as IdempotencyService,
      onWriteError: (err) => assert.fail(String(err)),
      closing: () => false,
    }),
  );
  const post = async (path: string, body: string, key = KEY) => {
    const res = await inject({
      method: 'POST',
      url: path,
      payload: body,
      headers: {
        'content-type': 'application/json',
        'content-length': String(body.length),
        'x-api-key': key,
      },
    });
    return { status: res.statusCode, body: res.body };
  };

  test("the body, schema and handler's errors take the route's shape, with their stage", async () => {
    const malformed = await post('/shaped/a', '{"n":');
    assert.equal(malformed.status, 400);
    const parsed = JSON.parse(malformed.body);
    assert.deepEqual([parsed.key, parsed.stage, parsed.status], ['a', 'body', 400]);
    assert.match(parsed.error, /^body is not valid JSON/);
    const invalid = JSON.parse((await post('/shaped/a', '{"n":"x"}')).body);
    assert.deepEqual([invalid.stage, invalid.key], ['validation', 'a']);
    assert.match(invalid.error, /body\/n must be integer/);
    assert.deepEqual(await post('/shaped/gone', '{"n":1}'), {
      status: 404,
      body: JSON.stringify({ key: 'gone', stage: 'handle', status: 404, error: 'no such thing' }),
    });
  });

  test("key and scope refusals keep the pipeline's bodies; experimentParam names what a limited key is checked on", async () => {
    assert.deepEqual(await post('/shaped/a', '{"n":1}', 'wrong'), {
      status: 401,
      body: '{"error":"Unauthorized"}',
    });
    const refused = await post('/shaped/other', '{"n":1}', 'limited');
    assert.equal(refused.status, 403);
    assert.deepEqual(Object.keys(JSON.parse(refused.body)), ['error']);
    assert.equal((await post('/shaped/allowed', '{"n":1}', 'limited')).status, 200);
  });
});
