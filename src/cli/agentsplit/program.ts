// The `agentsplit` program: global options, the command groups, and errors as one line on stderr.
// Each group (keys, experiments and the status changes, who enters, analyze, results, mcp) registers itself from its own module.
import { createRequire } from 'node:module';
import { Command, Option } from 'commander';
import { registerAnalyze } from './analyze.js';
import { CliError, DEFAULT_URL, oneLine } from './api.js';
import { registerDatasets } from './datasets.js';
import { registerEntry } from './entry.js';
import { registerExperiments } from './experiments.js';
import { registerKeys } from './keys.js';
import { registerMcp } from './mcp.js';
import { registerResults } from './results.js';
import { registerRollout } from './rollout.js';
import { registerRuns } from './runs.js';

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
    // The program's options end at the command's name, so that a command's own option may share a global
    // one's name (analyze --version <n> is not the program's --version); every command takes the global
    // options too (acceptGlobalOptions), so they still work before or after the command.
    .enablePositionalOptions()
    .configureHelp({
      // As commander's, but '[options]' only for a command with options of its own (not the hidden globals).
      subcommandTerm: (command) => {
        const args = command.registeredArguments.map((arg) => {
          const name = `${arg.name()}${arg.variadic ? '...' : ''}`;
          return arg.required ? `<${name}>` : `[${name}]`;
        });
        const options = command.options.some((option) => !option.hidden) ? ' [options]' : '';
        return [`${command.name()}${options}`, ...args].join(' ');
      },
    })
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
        "  agentsplit complete checkout-prompt --ship B --note 'as good, 30% cheaper'   (--ship none: no change)",
        '  agentsplit target checkout-prompt --targeting \'{"plan": {"$in": ["pro"]}}\' --coverage 20 [--layer prompts:0-0.5]',
        '  agentsplit preview checkout-prompt user-42 --context \'{"plan": "free"}\'',
        '  agentsplit groups list|show <key>|put <key> --values a,b|delete <key>   agentsplit layers show prompts',
        '  agentsplit analyze checkout-prompt [--metric success,cost_usd] [--version 2] [--method bayesian]',
        '  agentsplit results export checkout-prompt [--format csv] [--output results.csv]',
        '  agentsplit rollout start checkout-prompt --variant B [--steps 10,50,100 --minutes 30 --approve 100]',
        '  agentsplit rollout show|approve|pause|resume|rollback checkout-prompt',
        '  agentsplit datasets list   agentsplit datasets push support-questions --file items.jsonl',
        '  agentsplit runs list checkout-prompt',
        "  agentsplit runs compare <run> --fail-if 'correct worse than -2%'   (exit 2 when a variant breaks it)",
        '  agentsplit keys create --name support-agent --scopes assign,log [--experiments a,b] [--rate-limit <n>]',
        '  agentsplit keys list',
        '  agentsplit keys revoke <id>',
        '  agentsplit mcp   (MCP on stdio for a desktop agent: tools call the API with the key)',
        "  agentsplit --json experiments list   (the API's JSON as is, for scripts)",
        '',
        "--url, --key and --json go before or after the command. Each command's options: agentsplit analyze --help",
        '',
      ].join('\n'),
    );
  registerExperiments(program);
  registerEntry(program);
  registerAnalyze(program);
  registerResults(program);
  registerRollout(program);
  registerDatasets(program);
  registerRuns(program);
  registerKeys(program);
  registerMcp(program);
  acceptGlobalOptions(program);
  return program;
}

/**
 * `agentsplit keys list --json` as well as `agentsplit --json keys list`: every command below the program
 * takes --url, --key and --json too (hidden from its help; the program's help lists them). session()
 * reads the one nearest the command, then the program's with its variable and default.
 */
function acceptGlobalOptions(parent: Command): void {
  for (const command of parent.commands) {
    command
      .addOption(new Option('--url <url>').hideHelp())
      .addOption(new Option('--key <key>').hideHelp())
      .addOption(new Option('--json').hideHelp());
    acceptGlobalOptions(command);
  }
}

/** Runs the command line; answers the exit code (commander exits by itself for --help and bad usage). */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    const message = err instanceof CliError ? err.message : `unexpected error: ${(err as Error)?.message}`;
    process.stderr.write(`agentsplit: ${oneLine(message)}\n`);
    return err instanceof CliError ? err.exitCode : 1;
  }
}
