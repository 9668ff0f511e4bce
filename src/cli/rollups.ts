// `npm run rollups:rebuild [-- --experiment <slug>]`: recomputes the analysis rollups from raw results
// and exposures (after a restore, a manual data fix, or to check the live ones), then exits.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openStore } from '../store/index.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { experiment: { type: 'string', short: 'e' } } });
  const config = loadConfig(process.env);
  const store = await openStore(config.database);
  try {
    let id: number | undefined;
    if (values.experiment !== undefined) {
      const found = (await store.listExperiments()).find((s) => s.experiment.slug === values.experiment);
      if (!found) throw new Error(`no experiment with slug '${values.experiment}'`);
      id = found.id;
    }
    const started = performance.now();
    const { results, exposures } = await store.rebuildRollups(id);
    const ms = Math.round(performance.now() - started);
    const scope = values.experiment === undefined ? 'every experiment' : `'${values.experiment}'`;
    process.stdout.write(
      `rebuilt the rollups of ${scope} from ${results} results and ${exposures} exposures in ${ms} ms\n`,
    );
  } finally {
    await store.close();
  }
}

main().catch((err) => {
  process.stderr.write(`rollup rebuild failed: ${(err as Error).message}\n`);
  process.exit(1);
});
