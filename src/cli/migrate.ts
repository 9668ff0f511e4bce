// `npm run migrate`: brings the database named by DATABASE_URL up to date, then exits.
// The service also migrates at start (under the same lock); this lets a deploy do it as its own step.
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../store/index.js';
import { migrate } from '../store/migrate.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = await openDatabase(config.database);
  try {
    const applied = await migrate(db);
    process.stdout.write(
      applied.length > 0 ? `applied migrations: ${applied.join(', ')}\n` : 'the database is up to date\n',
    );
  } finally {
    await db.close();
  }
}

main().catch((err) => {
  process.stderr.write(
    `migration failed: ${err instanceof ConfigError ? err.message : (err as Error).message}\n`,
  );
  process.exit(1);
});
