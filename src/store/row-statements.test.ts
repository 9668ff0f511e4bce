import assert from 'node:assert/strict';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { compileRows, exposureBatchStatement, MAX_EXPOSURE_BATCH_CHARS } from './row-statements.js';
import type { Database, PendingExposure } from './schema.js';

const pending = (experimentId: number, version: number, id: string, pad = ''): PendingExposure => ({
  experimentId,
  version,
  variantKey: 'A',
  json: JSON.stringify([id, 'A', 'u', pad ? { pad } : null, '2026-01-01T00:00:00.000Z']),
});

test('exposures become one row per experiment version, in order', () => {
  const st = exposureBatchStatement([
    pending(1, 1, 'a'),
    pending(2, 1, 'b'),
    pending(1, 1, 'c'),
    pending(1, 2, 'd'),
  ]);
  const rows = st.rows as Array<{
    experiment_id: number;
    experiment_version: number;
    count: number;
    exposures: string;
  }>;
  assert.deepEqual(
    rows.map((r) => [
      r.experiment_id,
      r.experiment_version,
      r.count,
      JSON.parse(r.exposures).map((e: string[]) => e[0]),
    ]),
    [
      [1, 1, 2, ['a', 'c']],
      [2, 1, 1, ['b']],
      [1, 2, 1, ['d']],
    ],
  );
});

test('a row never grows past the size cap: large exposures start new rows', () => {
  const big = 'x'.repeat(Math.floor(MAX_EXPOSURE_BATCH_CHARS / 3));
  const st = exposureBatchStatement(Array.from({ length: 7 }, (_, i) => pending(1, 1, `e${i}`, big)));
  const rows = st.rows as Array<{ count: number; exposures: string }>;
  assert.ok(rows.length >= 3, `${rows.length} rows`);
  for (const r of rows)
    assert.ok(r.exposures.length <= MAX_EXPOSURE_BATCH_CHARS + 2, `${r.exposures.length}`);
  assert.deepEqual(
    rows.flatMap((r) => JSON.parse(r.exposures).map((e: string[]) => e[0])),
    ['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6'],
  );
  assert.equal(
    rows.reduce((a, r) => a + r.count, 0),
    7,
  );
});

test('compileRows lays rows out as 100-row statements plus the rest, parameters row by row', () => {
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }),
  });
  const rows = Array.from({ length: 250 }, (_, i) => ({
    experiment_id: i,
    experiment_version: 1,
    count: 1,
    exposures: `[${i}]`,
  }));
  const compiled = compileRows(db, {
    name: 'test',
    rows,
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
