// The migrations both databases run: shared files rendered per dialect, dialect files where only one can
// say it, numbered 1..N without gaps or doubles.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadMigrations, renderMigration } from './migrate.js';

for (const dialect of ['sqlite', 'postgres'] as const) {
  test(`${dialect}: every migration once, numbered from 1 without gaps, no token left unrendered`, () => {
    const migrations = loadMigrations(dialect);
    assert.deepEqual(
      migrations.map((m) => m.version),
      migrations.map((_, i) => i + 1),
    );
    for (const m of migrations) assert.doesNotMatch(m.sql, /\{\{/, `${m.version} ${m.name}`);
  });
}

test('both dialects run migrations of the same names', () => {
  const names = (d: 'sqlite' | 'postgres') => loadMigrations(d).map((m) => `${m.version} ${m.name}`);
  assert.deepEqual(names('sqlite'), names('postgres'));
});

test('type tokens become each dialect’s types; an unknown token is an error', () => {
  const text =
    'CREATE TABLE t (id {{serial}}, n {{bigint}}, x {{double}}, j {{json}}, at {{time}}, b {{bool}});';
  assert.equal(
    renderMigration(text, 'postgres'),
    'CREATE TABLE t (id BIGSERIAL PRIMARY KEY, n BIGINT, x DOUBLE PRECISION, j JSONB, at TIMESTAMPTZ, b BOOLEAN);',
  );
  assert.equal(
    renderMigration(text, 'sqlite'),
    'CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, x REAL, j TEXT, at TEXT, b INTEGER);',
  );
  assert.throws(() => renderMigration('x {{blob}}', 'sqlite'), /unknown column type token \{\{blob\}\}/);
});
