// The `agentsplit` program: global options, the command groups, and errors as one line on stderr.
// Each group (keys, experiments and the status changes, analyze, results) registers itself from its own module.
import { createRequire } from 'node:module';
import { Command, Option } from 'commander';
import { registerAnalyze } from './analyze.js';
import { CliError, DEFAULT_URL, oneLine } from './api.js';
import { registerExperiments } from './experiments.js';
import { registerKeys } from './keys.js';
import { registerResults } from './results.js';

export function buildProgram(): Command {
  // src/cli/agentsplit/ and dist/cli/agentsplit/ are both three levels below package.json.
  const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };
  const program = new Command('agentsplit')
    .description(
      'The agentsplit command line: a client of the agentsplit HTTP API (it never opens the database)',
    )
    .version(version, '-V, --version')
    .addOption(new Option('--url <url>', 'the agentsplit server').env('AGENTSPLIT_URL').default(DEFAULT_URL))
    .addOption(
      new Option('--key <key>', 'the API key to send (prefer the variable: arguments show in ps)').env(
        'AGENTSPLIT_API_KEY',
      ),
    )
    .option('--json', "print the API's JSON as is, for scripts (default: tables for people)")
    .configureOutput({
      // Commander's own errors (unknown option, missing argument) read like ours: one `agentsplit: ...` line.
      outputError: (text, write) => write(`agentsplit: ${oneLine(text.replace(/^error: /, ''))}\n`),
    })
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  export AGENTSPLIT_URL=http://127.0.0.1:3000 AGENTSPLIT_API_KEY=$(cat data/api-key)',
        '  agentsplit experiments create --file checkout-prompt.json   (--file - reads stdin)',
        '  agentsplit experiments list [--status running] [--limit 20]',
        '  agentsplit experiments show checkout-prompt',
        '  agentsplit start|pause|complete|archive checkout-prompt',
        '  agentsplit analyze checkout-prompt [--metric success,cost_usd] [--version 2] [--method bayesian]',
        '  agentsplit results export checkout-prompt [--format csv] [--output results.csv]',
        '  agentsplit keys create --name support-agent --scopes assign,log [--experiments a,b] [--rate-limit <n>]',
        '  agentsplit keys list',
        '  agentsplit keys revoke <id>',
        "  agentsplit --json experiments list   (the API's JSON as is, for scripts)",
        '',
        "Each command's options: agentsplit analyze --help, agentsplit keys create --help",
        '',
      ].join('\n'),
    );
  registerExperiments(program);
  registerAnalyze(program);
  registerResults(program);
  registerKeys(program);
  return program;
}

/** Runs the command line; answers the exit code (commander exits by itself for --help and bad usage). */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    const message = err instanceof CliError ? err.message : `unexpected error: ${(err as Error)?.message}`;
    process.stderr.write(`agentsplit: ${oneLine(message)}\n`);
    return 1;
  }
}
