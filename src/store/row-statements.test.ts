import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serialize } from 'node:v8';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { compileRows } from './compile-rows.js';
import { inKeyOrder, upsertStatement } from './row-statements.js';
import type { Database } from './schema.js';

const memoryDb = () =>
  new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });

function exposureRows(n: number, exposures: (i: number) => string | null) {
  return Array.from({ length: n }, (_, i) => ({
    experiment_id: i,
    experiment_version: 1,
    count: 1,
    exposures: exposures(i),
  }));
}

test('compileRows lays rows out as 100-row statements plus the rest, parameters row by row', () => {
  const compiled = compileRows(memoryDb(), {
    name: 'test',
    rows: exposureRows(250, (i) => `[${i}]`),
    chunk: 1000,
    build: (k, r) => k.insertInto('exposure_batches').values(r as never),
  });
  assert.deepEqual(
    compiled.map((c) => c.rows.map((p) => p.length)),
    [[400, 400], [200]],
  );
  assert.deepEqual(compiled[0]!.rows[1]!.slice(0, 4), [100, 1, 1, '[100]']);
  assert.deepEqual(compiled[1]!.rows[0]!.slice(-4), [249, 1, 1, '[249]']);
  assert.match(compiled[1]!.sql, /^insert into "exposure_batches"/);
});

test('compileRows builds packed parameter arrays, which the writer thread receives in one block', () => {
  const [compiled] = compileRows(memoryDb(), {
    name: 'test',
    rows: exposureRows(3, (i) => (i === 1 ? null : `[${i}]`)),
    chunk: 1000,
    build: (k, r) => k.insertInto('exposure_batches').values(r as never),
  });
  const params = compiled!.rows[0]!;
  // A literal array is packed; the structured clone of a holey one (e.g. from \`new Array(n)\`) differs
  // (its elements are written one by one, with their indexes).
  assert.deepEqual(serialize(params), serialize([...params]));
  const holey = new Array<unknown>(params.length);
  params.forEach((p, i) => {
    holey[i] = p;
  });
  assert.notDeepEqual(serialize(holey), serialize([...params]));
});

test('inKeyOrder: an upsert in its key order (numbers as numbers, then text), stable; other statements as they are', () => {
  const row = (experiment_id: number, variant_key: string, n: number) => ({
    experiment_id,
    experiment_version: 1,
    variant_key,
    n,
  });
  const rows = [row(10, 'B', 1), row(9, 'B', 2), row(10, 'A', 3), row(9, 'B', 4), row(10, 'A', 5)];
  const sorted = inKeyOrder(upsertStatement('exposure_rollups', rows)).rows as Array<ReturnType<typeof row>>;
  assert.deepEqual(
    sorted.map((r) => r.n),
    [2, 4, 3, 5, 1],
  );
  const insert = { name: 'results', rows, chunk: 10, build: () => ({}) as never };
  assert.equal(inKeyOrder(insert), insert);
});
