// The package's entry points as an installed copy resolves them: built with tsconfig.build.json, laid out
// as node_modules/@agentsplit/client, and imported by name. The hash and id helpers are reached only
// through the `conformance` subpath; the main entry is the client and its OpenFeature provider.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot } from './server.js';

const clientDir = join(repoRoot, 'clients', 'js');
const pkg = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, { types: string; import: string }>;
};
let dir = '';

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentsplit-exports-'));
  const installed = join(dir, 'node_modules', ...pkg.name.split('/'));
  mkdirSync(installed, { recursive: true });
  execFileSync(
    process.execPath,
    [
      join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      join(clientDir, 'tsconfig.build.json'),
      '--outDir',
      join(installed, 'dist'),
    ],
    { stdio: 'pipe' },
  );
  cpSync(join(clientDir, 'package.json'), join(installed, 'package.json'));
  // The package's one dependency, where an install would put it (local evaluation compiles conditions).
  symlinkSync(join(repoRoot, 'node_modules', 're2js'), join(dir, 'node_modules', 're2js'), 'dir');
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The names an ES module exports, imported by `specifier` from a script in the temporary directory. */
function exportedNames(specifier: string): string[] {
  const script = join(dir, 'names.mjs');
  writeFileSync(
    script,
    `const m = await import(${JSON.stringify(specifier)});\nconsole.log(JSON.stringify(Object.keys(m).sort()));\n`,
  );
  return JSON.parse(execFileSync(process.execPath, [script], { cwd: dir, encoding: 'utf8' })) as string[];
}

test('the exports map names "." and "./conformance", each with its types', () => {
  assert.deepEqual(Object.keys(pkg.exports).sort(), ['.', './conformance']);
  assert.equal(pkg.exports['./conformance']!.import, './dist/conformance.js');
  assert.equal(pkg.exports['./conformance']!.types, './dist/conformance.d.ts');
  for (const entry of Object.values(pkg.exports)) {
    const installed = join(dir, 'node_modules', ...pkg.name.split('/'));
    readFileSync(join(installed, entry.import));
    readFileSync(join(installed, entry.types));
  }
});

test('the main entry is the client, its error class and the OpenFeature provider, without the hash and id helpers', () => {
  // The temporary directory has no @openfeature package: the provider needs none at run time.
  assert.deepEqual(exportedNames(pkg.name), ['AgentSplit', 'AgentSplitError', 'AgentSplitProvider']);
});

test('the conformance subpath has the draw and the ids, named "variant"', () => {
  assert.deepEqual(exportedNames(`${pkg.name}/conformance`), [
    'assignmentIdFor',
    'bucketRanges',
    'chooseVariant',
    'fnv1a32',
    'getEqualWeights',
    'hashV1',
    'hashV2',
    'inNamespace',
    'readAssignmentId',
    'uuidv7',
  ]);
});

test("the provider's declarations type-check in an application that has @openfeature/server-sdk", () => {
  const of = join(dir, 'node_modules', '@openfeature');
  mkdirSync(of, { recursive: true });
  for (const name of ['server-sdk', 'core']) {
    symlinkSync(join(repoRoot, 'node_modules', '@openfeature', name), join(of, name), 'dir');
  }
  writeFileSync(
    join(dir, 'app.ts'),
    [
      "import { OpenFeature, type Provider } from '@openfeature/server-sdk';",
      "import { AgentSplit, AgentSplitProvider } from '@agentsplit/client';",
      "const p: Provider = new AgentSplitProvider({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', maxTrackedUsers: 5 });",
      'OpenFeature.setProvider(p);',
      'OpenFeature.setProvider(new AgentSplitProvider(new AgentSplit({ local: true })));',
      '',
    ].join('\n'),
  );
  // skipLibCheck off: the .d.ts files themselves are checked, against the published OpenFeature types.
  execFileSync(
    process.execPath,
    [
      join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'),
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      'false',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
      '--typeRoots',
      join(repoRoot, 'node_modules', '@types'),
      join(dir, 'app.ts'),
    ],
    { cwd: dir, stdio: 'pipe' },
  );
});
