// The copies in test/fixtures must equal the team's shared files they stand in for.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixturesDir, sharedDir } from './helpers/shared.js';

const shared = sharedDir();

test('the vendored reference vectors equal shared/vectors', {
  skip: !shared && 'shared/ is not beside the repository',
}, () => {
  for (const file of readdirSync(join(fixturesDir, 'vectors'))) {
    const copy = JSON.parse(readFileSync(join(fixturesDir, 'vectors', file), 'utf8'));
    const original = JSON.parse(readFileSync(join(shared!, 'vectors', file), 'utf8'));
    assert.deepEqual(
      copy,
      original,
      `test/fixtures/vectors/${file} differs from shared/vectors/${file}: copy it again`,
    );
  }
});
