// The README runs as written (issue 36): its shell blocks, in order, in one shell, against a fresh server
// that made its own key in data/api-key as `npm start` does; any answer that is not 2xx fails unless the
// block shows that status. Also: every fence closes, and every #anchor names a heading.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { makeTempDir } from './helpers/app.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const README = readFileSync(join(root, 'README.md'), 'utf8');
const run = promisify(execFile);

interface Block {
  line: number;
  lang: string;
  text: string;
  /** The nearest heading above it. */
  section: string;
}

/** Fenced blocks, and the fences left open (a count of problems). */
function blocksOf(markdown: string): { blocks: Block[]; unclosed: number[] } {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let open: { line: number; lang: string; fence: string; body: string[] } | null = null;
  let section = '';
  lines.forEach((l, i) => {
    const fence = /^(`{3,})(\S*)\s*$/.exec(l);
    if (open) {
      if (fence && fence[1] === open.fence && fence[2] === '') {
        blocks.push({ line: open.line, lang: open.lang, text: open.body.join('\n'), section });
        open = null;
      } else open.body.push(l);
      return;
    }
    if (fence) open = { line: i + 1, lang: fence[2]!, fence: fence[1]!, body: [] };
    else if (/^#{1,6} /.test(l)) section = l.replace(/^#+ /, '');
  });
  return { blocks, unclosed: open ? [(open as { line: number }).line] : [] };
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/**
 * Blocks not run, by section, and why: they start or stop processes of their own, or need tools the
 * test does not (they are run by their own tests: the clients', the CLI's, the bench).
 */
const NOT_RUN: Record<string, string> = {
  'Quick start': 'starts the server and runs the tests themselves',
  'PostgreSQL and many instances': 'starts more servers on PostgreSQL',
  Performance: 'runs the benchmark (minutes)',
  Development: 'runs the tests and the build',
  'Command line': 'the CLI has its own test (test/cli*.test.ts)',
  MCP: 'starts an MCP client',
};

describe('README', () => {
  test('every fence closes and every #anchor names a heading', () => {
    const { unclosed } = blocksOf(README);
    assert.deepEqual(unclosed, [], 'fences opened on these lines never close');
    const headings = new Set<string>();
    let inFence = false;
    for (const l of README.split('\n')) {
      if (/^```/.test(l)) inFence = !inFence;
      else if (!inFence && /^#{1,6} /.test(l)) headings.add(anchorOf(l.replace(/^#+ /, '')));
    }
    const links = [...README.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    assert.ok(links.length > 10);
    assert.deepEqual(
      links.filter((a) => !headings.has(a)),
      [],
      'links to anchors that no heading makes',
    );
    const files = [...README.matchAll(/\]\(((?:docs|clients|src|test|bench|scripts)\/[^)#\s]+)/g)].map(
      (m) => m[1]!,
    );
    assert.deepEqual(
      files.filter((f) => !existsSync(join(root, f))),
      [],
      'links to files that do not exist',
    );
  });

  let dir: string;
  let server: ServerProcess;

  before(async () => {
    dir = makeTempDir();
    mkdirSync(join(dir, 'data'));
    // As `npm start` runs on a fresh machine: no API_KEY, so it makes one and writes data/api-key.
    server = await startServer({
      DATA_DIR: join(dir, 'data'),
      DATABASE_URL: `sqlite:${join(dir, 'data', 'readme.db')}`,
    });
  });

  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('its shell blocks run in order, each answer 2xx or the status the block shows', async () => {
    const port = new URL(server.baseUrl).port;
    const blocks = blocksOf(README).blocks.filter((b) => b.lang === 'sh' && !(b.section in NOT_RUN));
    // Our curl writes each status to stderr after a marker; a call with its own --write-out keeps it.
    const script = [
      'set -u',
      `curl() { case " $* " in *" -w "*|*" --write-out "*) command curl "$@";; *) command curl "$@" --write-out '%{stderr}@@HTTP %{http_code}\\n';; esac; }`,
      ...blocks.flatMap((b, i) => [
        `echo "@@BLOCK ${i}" >&2`,
        b.text
          .replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`)
          .replaceAll('data/api-key', join(dir, 'data', 'api-key')),
      ]),
      'echo "@@END" >&2',
    ].join('\n');
    // In a copy of the checkout (its entries linked), as a reader runs them there, so the files they write
    // (exports) land in the copy; the npm scripts they call use this server's database.
    const work = join(dir, 'checkout');
    mkdirSync(work);
    for (const entry of readdirSync(root)) {
      // Not data/ (the server's is elsewhere), nor files the blocks write: they must not reach the checkout.
      if (!['data', '.git', 'results.csv', 'results.ndjson'].includes(entry)) {
        symlinkSync(join(root, entry), join(work, entry));
      }
    }
    const env = {
      ...process.env,
      DATA_DIR: join(dir, 'data'),
      DATABASE_URL: `sqlite:${join(dir, 'data', 'readme.db')}`,
    };
    const { stderr } = await run('bash', ['-c', script], {
      cwd: work,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 240_000,
    }).catch((err: { stdout: string; stderr: string }) => err);
    assert.match(stderr, /@@END/, `the script stopped early:\n${stderr.slice(-2000)}`);
    const problems: string[] = [];
    stderr
      .split(/@@BLOCK (\d+)\n/)
      .slice(1)
      .forEach((part, k, parts) => {
        if (k % 2 === 1) return;
        const block = blocks[Number(part)]!;
        const out = parts[k + 1]!.replace('@@END\n', '');
        for (const m of out.matchAll(/@@HTTP (\d{3})/g)) {
          const status = m[1]!;
          if (!status.startsWith('2') && !new RegExp(`\\b${status}\\b`).test(block.text)) {
            problems.push(
              `README line ${block.line} (${block.section}): an answer ${status} the block does not show`,
            );
          }
        }
        const other = out.replace(/@@HTTP \d{3}\n?/g, '').trim();
        if (other !== '')
          problems.push(
            `README line ${block.line} (${block.section}) wrote to stderr: ${other.slice(0, 300)}`,
          );
      });
    assert.deepEqual(problems, []);
    assert.ok(blocks.length >= 20, `${blocks.length} blocks run`);
  });
});
