import assert from 'node:assert/strict';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { compileRows } from './row-statements.js';
import type { Database } from './schema.js';

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
