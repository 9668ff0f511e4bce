// `agentsplit` (bin/agentsplit.mjs runs this): the command line, a thin client of the HTTP API.
// It never opens the database: the root API_KEY bootstraps everything, including the first keys.
import { main } from './agentsplit/program.js';

process.exitCode = await main(process.argv);
