// Applies the dialect's numbered SQL migrations (store/migrations/<dialect>/NNN_name.sql) once each, in order.
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { SqlDatabase } from './database.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dialect: SqlDatabase['dialect']): Migration[] {
  const dir = new URL(`./migrations/${dialect}/`, import.meta.url);
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({
      version: Number(f.slice(0, 3)),
      name: f.slice(4, -4),
      sql: readFileSync(new URL(f, dir), 'utf8'),
    }));
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
