// API test harness: a real runtime, also listening on a real socket, on the backend AGENTSPLIT_TEST_BACKEND
// names: `sqlite` (default: a file in a temp directory) or `postgres` (a fresh database, dropped on close).
// `api.call` enters the request pipeline in-process (app.inject, the same pipeline a socket's request
// takes; ADR 0022); `api.port` and `send` are for what needs a socket, and AGENTSPLIT_TEST_SOCKETS=1 sends
// every `api.call` over one too.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, type RawBuilder, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Exposure } from '../../src/core/exposure.js';
import { type Runtime, type RuntimeOptions, startRuntime } from '../../src/runtime.js';
import type { DatabaseTarget } from '../../src/store/index.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from './postgres.js';

export const API_KEY = 'test-api-key-0123456789abcdef';

/** Whether `api.call` goes over a socket rather than in-process (AGENTSPLIT_TEST_SOCKETS=1). */
const SOCKETS = process.env.AGENTSPLIT_TEST_SOCKETS === '1';

/** An answer as the harness read it (off the socket, or from inject). */
export interface Response {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body's bytes, for answers that are not text. */
  rawPayload: Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: the tests read answers of many shapes, as inject's json() did.
  json(): any;
}
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Call {
  method: Method;
  url: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent verbatim (wins over body), with Content-Type application/json unless headers say otherwise. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** The x-api-key to send; null sends none. Default: the right key. */
  key?: string | null;
}

/** A fresh temp directory per test file; remove it in `after`. */
export function makeTempDir(): string {
  return mkdtempSync(join(tmpdir(), 'agentsplit-'));
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export type Backend = 'sqlite' | 'postgres';

function selectedBackend(): Backend {
  const value = process.env.AGENTSPLIT_TEST_BACKEND || 'sqlite';
  if (value !== 'sqlite' && value !== 'postgres') {
    throw new Error(`AGENTSPLIT_TEST_BACKEND must be sqlite or postgres, not ${JSON.stringify(value)}`);
  }
  return value;
}

/** The backend the API suites run on in this process. */
export const BACKEND: Backend = selectedBackend();

/**
 * A skip reason for the API suites when their backend cannot run here (PostgreSQL down on a developer
 * machine; postgresReachable has printed the warning, and in CI it throws instead). Else false.
 */
export const SKIP_BACKEND: string | false =
  BACKEND === 'postgres' && !(await postgresReachable()) ? 'PostgreSQL is not reachable' : false;

/** A skip reason for facts that only hold on SQLite (e.g. its journal mode), else false. */
export const SQLITE_ONLY: string | false =
  BACKEND === 'sqlite' ? false : `SQLite only (running on ${BACKEND})`;

export interface TestRuntime extends Runtime {
  api: Api;
  backend: Backend;
  /**
   * Runs a read-only `sql` template on a connection of its own, bypassing the service, to see what is
   * really committed. Column types differ by backend: JSON is text on SQLite and parsed on PostgreSQL
   * (jsonColumn), times are ISO text or Date (timeColumn), flags are 0/1 or booleans (use Boolean()).
   */
  rows<T>(query: RawBuilder<T>): Promise<T[]>;
  /** Every exposure recorded for the experiment `slug`, in assignment order (read through the store). */
  exposuresOf(slug: string): Promise<Exposure[]>;
}

/**
 * Starts the whole service on `<dir>/<name>.db`, or on a fresh PostgreSQL database. Close it with
 * `runtime.close()`, which also drops that database.
 */
export async function startTestRuntime(
  dir: string,
  name: string,
  options: Partial<Omit<RuntimeOptions, 'database'>> = {},
): Promise<TestRuntime> {
  let target: DatabaseTarget;
  let testDatabase: TestDatabase | undefined;
  if (BACKEND === 'postgres') {
    testDatabase = await createTestDatabase(name);
    target = { kind: 'postgres', url: testDatabase.url };
  } else {
    target = { kind: 'sqlite', path: join(dir, `${name}.db`) };
  }
  let runtime: Runtime;
  try {
    runtime = await startRuntime({ apiKey: API_KEY, ...options, database: target });
    await runtime.app.listen({ port: 0, host: '127.0.0.1' });
  } catch (err) {
    await testDatabase?.drop();
    throw err;
  }
  // Opened on first use; one reader per runtime, closed with it.
  let reader: Kysely<unknown> | undefined;
  const openReader = (): Kysely<unknown> => {
    if (target.kind === 'postgres') {
      const pool = new pg.Pool({ connectionString: target.url, max: 2 });
      pool.on('error', () => {}); // an idle connection dropped by the server must not crash the tests
      return new Kysely({ dialect: new PostgresDialect({ pool }) });
    }
    const database = new BetterSqlite3(target.path, { readonly: true, fileMustExist: true });
    return new Kysely({ dialect: new SqliteDialect({ database }) });
  };
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      try {
        api.close();
        await reader?.destroy();
        await runtime.close();
      } finally {
        await testDatabase?.drop();
      }
    })();
    return closing;
  };
  const api = new Api(runtime);
  return {
    ...runtime,
    close,
    api,
    backend: BACKEND,
    rows: async <T>(query: RawBuilder<T>) => {
      reader ??= openReader();
      return (await query.execute(reader)).rows;
    },
    exposuresOf: async (slug: string) => {
      const found = await runtime.store.findExperiment(slug);
      assert.ok(found, `no experiment ${slug}`);
      return runtime.store.listExposures(found.id);
    },
  };
}

/** A JSON column as a value: SQLite returns the text, PostgreSQL (json) the parsed value. */
export function jsonColumn(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** A time column as an ISO string: SQLite returns the text, PostgreSQL (timestamptz) a Date. */
export function timeColumn(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/** Runs `body` against a runtime of its own and always closes it. */
export async function withRuntime(
  dir: string,
  name: string,
  options: Partial<Omit<RuntimeOptions, 'database'>>,
  body: (runtime: TestRuntime) => Promise<void>,
): Promise<void> {
  const runtime = await startTestRuntime(dir, name, options);
  try {
    await body(runtime);
  } finally {
    await runtime.close();
  }
}

/** Sends one request over a real socket to `port` on 127.0.0.1 and reads the whole answer. */
export function send(
  port: number,
  c: { method: string; url: string; headers: Record<string, string>; payload?: string | Buffer },
  agent?: Agent,
): Promise<Response> {
  const payload = c.payload === undefined ? undefined : Buffer.from(c.payload);
  const headers = { ...c.headers };
  if (payload !== undefined) headers['content-length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: c.method, path: c.url, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('error', reject);
      res.on('end', () => {
        const rawPayload = Buffer.concat(chunks);
        const body = rawPayload.toString('utf8');
        resolve({
          statusCode: res.statusCode!,
          headers: res.headers,
          body,
          rawPayload,
          json: () => JSON.parse(body),
        });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export class Api {
  /** Kept-alive connections, as a real client would keep them. */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });

  constructor(
    private readonly runtime: Pick<Runtime, 'app'>,
    /** Every call over a socket (kept-alive connections), not in-process. */
    private readonly sockets = SOCKETS,
  ) {}

  /** The port the runtime listens on. */
  get port(): number {
    return (this.runtime.app.server.address() as AddressInfo).port;
  }

  async call(c: Call): Promise<Response> {
    const headers: Record<string, string> = {};
    if (c.key !== null) headers['x-api-key'] = c.key ?? API_KEY;
    let payload: string | Buffer | undefined;
    if (c.raw !== undefined) payload = c.raw;
    else if (c.body !== undefined) payload = JSON.stringify(c.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, c.headers);
    if (this.sockets) return send(this.port, { method: c.method, url: c.url, headers, payload }, this.agent);
    // As Node's client sends it: with its length, and a Host.
    if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
    const res = await this.runtime.app.inject({ method: c.method, url: c.url, headers, payload });
    return {
      statusCode: res.statusCode,
      headers: res.headers as IncomingHttpHeaders,
      body: res.body,
      rawPayload: res.rawPayload,
      json: () => JSON.parse(res.body),
    };
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  get(url: string, key?: string | null): Promise<Response> {
    return this.call({ method: 'GET', url, key });
  }

  post(url: string, body: unknown, key?: string | null): Promise<Response> {
    return this.call({ method: 'POST', url, body, key });
  }

  postRaw(url: string, raw: string, headers?: Record<string, string>): Promise<Response> {
    return this.call({ method: 'POST', url, raw, headers });
  }

  put(url: string, body: unknown, key?: string | null): Promise<Response> {
    return this.call({ method: 'PUT', url, body, key });
  }

  patch(url: string, body: unknown): Promise<Response> {
    return this.call({ method: 'PATCH', url, body });
  }

  delete(url: string): Promise<Response> {
    return this.call({ method: 'DELETE', url });
  }

  /** POST /experiments, asserting 201. Defaults: a unique slug, running, A/B 50/50. */
  async createExperiment(fields: Record<string, unknown> = {}): Promise<Experiment> {
    const res = await this.post('/experiments', {
      slug: uniqueSlug(),
      status: 'running',
      variants: [
        { key: 'A', payload: { prompt: 'You are terse.' }, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'You are verbose.' }, trafficPercent: 50 },
      ],
      ...fields,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as Experiment;
  }

  async setStatus(slug: string, status: string): Promise<void> {
    const res = await this.patch(`/experiment/${slug}`, { status });
    assert.equal(res.statusCode, 200, res.body);
  }

  async assign(slug: string, body: unknown = { userId: 'user-1' }): Promise<Assignment> {
    const res = await this.post(`/experiment/${slug}/assign`, body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Assignment;
  }

  async log(slug: string, body: unknown): Promise<LogAnswer> {
    const res = await this.post(`/experiment/${slug}/log`, body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as LogAnswer;
  }

  async logMany(slug: string, results: unknown[]): Promise<string[]> {
    const res = await this.post(`/experiment/${slug}/logs`, { results });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { logIds: string[] }).logIds;
  }

  /** Every result of `slug`, walking the pages. */
  async allResults(slug: string, query = ''): Promise<Result[]> {
    const all: Result[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await this.get(`/experiment/${slug}/results?limit=1000${query}${after}`);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json() as ResultPage;
      all.push(...page.results);
      cursor = page.nextCursor;
    } while (cursor !== null);
    return all;
  }
}

export interface Variant {
  key: string;
  payload: Record<string, unknown>;
  trafficPercent: number;
}

export interface Experiment {
  slug: string;
  name: string;
  description: string;
  status: string;
  active: boolean;
  assignment: string;
  seed: string;
  variants: Variant[];
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface Assignment {
  variant: string;
  payload: Record<string, unknown>;
  assignmentId: string;
}

export interface LogAnswer {
  success: boolean;
  logId: string;
  warning?: string;
}

export interface Result {
  logId: string;
  variantKey: string;
  userId: string | null;
  assignmentId: string | null;
  input: unknown;
  output: unknown;
  metrics: unknown;
  context: unknown;
  timestamp: string | null;
  createdAt: string;
  experimentVersion: number;
}

export interface ResultPage {
  results: Result[];
  nextCursor: string | null;
}

let slugCounter = 0;

/** Unique within a process, so tests in one file never share an experiment. */
export function uniqueSlug(prefix = 'exp'): string {
  slugCounter += 1;
  return `${prefix}-${process.pid}-${slugCounter}`;
}

/** Asserts an error answer: the status, and a body that is exactly {"error": "<non-empty message>"}. */
export function assertError(res: Response, status: number, message?: RegExp): string {
  assert.equal(res.statusCode, status, `expected ${status}, got ${res.statusCode}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json() as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['error'], `error body has other fields: ${res.body}`);
  assert.equal(typeof body.error, 'string');
  const text = body.error as string;
  assert.ok(text.length > 0, 'error message is empty');
  if (message) assert.match(text, message);
  return text;
}

/** The exact 401 of the spec. */
export function assertUnauthorized(res: Response): void {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(res.body, '{"error":"Unauthorized"}');
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** An assignment id: a UUIDv7, then what it was issued for (core/assignment-id.ts). */
export function assertAssignmentId(value: unknown): void {
  assert.equal(typeof value, 'string');
  const [uuid, ...rest] = (value as string).split('.');
  assertUuidV7(uuid);
  assert.equal(rest.length, 4, `not an assignment id: ${String(value)}`);
}

export function assertUuidV7(value: unknown): void {
  assert.equal(typeof value, 'string');
  assert.match(value as string, UUID_V7, `not a UUIDv7: ${String(value)}`);
}

/** An object nested `levels` deep: 1 is {}, 2 is {"d":{}}. */
export function nestedObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { d: value };
  return value;
}

/** A small RFC 4180 parser: quoted fields, doubled quotes, CR LF or LF inside quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export { alternating, seededRandom } from './random.js';
