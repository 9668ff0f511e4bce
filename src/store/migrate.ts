// Applies the numbered SQL migrations once each, in order. One file serves both databases
// (store/migrations/shared/NNN_name.sql), its column types written as the tokens below; the few steps only
// one dialect can express live in store/migrations/<dialect>/ under the same number for each.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { SqlDatabase } from './database.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** What each type token of a shared migration is in each dialect. */
export const COLUMN_TYPES: Readonly<Record<string, Readonly<Record<SqlDatabase['dialect'], string>>>> = {
  serial: { postgres: 'BIGSERIAL PRIMARY KEY', sqlite: 'INTEGER PRIMARY KEY' },
  bigint: { postgres: 'BIGINT', sqlite: 'INTEGER' },
  double: { postgres: 'DOUBLE PRECISION', sqlite: 'REAL' },
  json: { postgres: 'JSONB', sqlite: 'TEXT' },
  time: { postgres: 'TIMESTAMPTZ', sqlite: 'TEXT' },
  bool: { postgres: 'BOOLEAN', sqlite: 'INTEGER' },
};

/** A shared migration's text for one dialect: every {{token}} replaced, an unknown token an error. */
export function renderMigration(text: string, dialect: SqlDatabase['dialect']): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_, token: string) => {
    const type = COLUMN_TYPES[token]?.[dialect];
    if (type === undefined) throw new Error(`unknown column type token {{${token}}} in a migration`);
    return type;
  });
}

function filesIn(dir: URL): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)) : [];
}

export function loadMigrations(dialect: SqlDatabase['dialect']): Migration[] {
  const shared = new URL('./migrations/shared/', import.meta.url);
  const own = new URL(`./migrations/${dialect}/`, import.meta.url);
  const all = [
    ...filesIn(shared).map((f) => ({
      f,
      text: renderMigration(readFileSync(new URL(f, shared), 'utf8'), dialect),
    })),
    ...filesIn(own).map((f) => ({ f, text: readFileSync(new URL(f, own), 'utf8') })),
  ].sort((a, b) => (a.f < b.f ? -1 : 1));
  const migrations = all.map(({ f, text }) => ({
    version: Number(f.slice(0, 3)),
    name: f.slice(4, -4),
    sql: text,
  }));
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version) {
      throw new Error(`two migrations numbered ${migrations[i]!.version} (shared and ${dialect})`);
    }
  }
  return migrations;
}

/**
 * Returns the versions it applied. Each migration and its bookkeeping row commit together, and the
 * whole run holds the dialect's migration lock, so instances starting together never race.
 */
export function migrate(db: SqlDatabase): Promise<number[]> {
  return db.withMigrationLock(() => migrateLocked(db));
}

async function migrateLocked(db: SqlDatabase): Promise<number[]> {
  await db.runScript(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const done = await sql<{ version: number }>`select version from schema_migrations`.execute(db.readWrite);
  const applied = new Set(done.rows.map((r) => Number(r.version)));
  const ran: number[] = [];
  for (const m of loadMigrations(db.dialect)) {
    if (applied.has(m.version)) continue;
    // Names match /[a-z0-9_]+/ (checked above), so they are safe inside the literal.
    await db.runScript(
      `BEGIN;\n${m.sql}\n;INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, '${m.name}', '${new Date().toISOString()}');\nCOMMIT;`,
    );
    ran.push(m.version);
  }
  return ran;
}
