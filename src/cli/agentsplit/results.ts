// `agentsplit results export <slug>`: GET /experiment/:slug/results/export streamed to stdout or a file,
// a chunk at a time (memory stays flat at any volume). A file is written beside its final name and
// renamed once the export is complete, so an interrupted export never leaves a truncated file behind.
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Command, Option } from 'commander';
import { formatCount } from '../../answers/format.js';
import { CliError } from './api.js';
import { experimentPath } from './experiments.js';
import { session } from './session.js';

const ACCEPT: Record<string, string> = { ndjson: 'application/x-ndjson', csv: 'text/csv' };

export function registerResults(program: Command): void {
  const results = program.command('results').description("export an experiment's results (needs a read key)");

  results
    .command('export')
    .description('stream every result, oldest first, as NDJSON (one JSON result a line) or CSV')
    .argument('<slug>', "the experiment's slug")
    .addOption(new Option('--format <format>', 'ndjson or csv').choices(['ndjson', 'csv']).default('ndjson'))
    .option('--output <file>', "write to this file instead of stdout ('-': stdout)")
    .addHelpText(
      'after',
      '\nExamples:\n  agentsplit results export checkout-prompt > results.ndjson\n' +
        '  agentsplit results export checkout-prompt --format csv --output results.csv\n',
    )
    .action(async (slug: string, options: { format: string; output?: string }, command: Command) => {
      const { api, json, out } = session(command);
      const path = `${experimentPath(slug)}/results/export?format=${options.format}`;
      // The request is answered (or refused) before any file is opened: a 404 leaves no empty file.
      const body = await api.stream(path, ACCEPT[options.format]!);
      if (options.output === undefined || options.output === '-') {
        await toStdout(body);
        return;
      }
      const bytes = await toFile(body, options.output);
      if (!json)
        out(
          `exported ${slug} results to ${options.output} (${formatCount(bytes)} bytes, ${options.format})\n`,
        );
    });
}

async function toStdout(body: NodeJS.ReadableStream): Promise<void> {
  try {
    await pipeline(body, process.stdout, { end: false });
  } catch (err) {
    // `| head` closed the pipe: the reader has what it wanted, not an error.
    if ((err as { code?: string })?.code === 'EPIPE') return;
    throw err;
  }
}

/** Streams to `<dir>/.<name>.<pid>.partial`, then renames it to `file`; answers the bytes written. */
async function toFile(body: NodeJS.ReadableStream, file: string): Promise<number> {
  const partial = join(dirname(file), `.${basename(file)}.${process.pid}.partial`);
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(body, counter, createWriteStream(partial, { flags: 'wx' }));
    await rename(partial, file);
  } catch (err) {
    await rm(partial, { force: true }).catch(() => {});
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot write ${file}: ${fileReason(err)}`);
  }
  return bytes;
}

function fileReason(err: unknown): string {
  const code = (err as { code?: string })?.code;
  if (code === 'ENOENT') return 'no such directory';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOSPC') return 'no space left on the device';
  return (err as Error)?.message ?? String(err);
}
