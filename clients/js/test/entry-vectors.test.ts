// The shared entry vectors (test/fixtures/entry/vectors.json, made by scripts/entry-vectors.ts from the
// server's evaluator): every case through the client's local assign, its definitions and groups served
// as GET /experiments/definitions would serve them. Variant, variant index (read from the id),
// inExperiment and reason must all match. Skipped, saying so, while the file is not in the checkout.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON fixtures
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { readAssignmentId } from '../src/conformance.js';
import { AgentSplit } from '../src/index.js';
import { memoryLogger, repoRoot } from './server.js';

const file = join(repoRoot, 'test', 'fixtures', 'entry', 'vectors.json');

interface Vectors {
  groups: Record<string, unknown[]>;
  experiments: Record<string, any>;
  cases: Array<{
    experiment: string;
    userId: string;
    context: Record<string, any> | null;
    expected: { variant: string; variantIndex: number; inExperiment: boolean; reason: string | null };
  }>;
}

test('every shared entry vector through the local assign', {
  skip: existsSync(file) ? false : 'test/fixtures/entry/vectors.json is not in this checkout yet',
}, async () => {
  const vectors = JSON.parse(readFileSync(file, 'utf8')) as Vectors;
  assert.ok(vectors.cases.length > 0);
  const exposed: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/experiments/definitions') {
        res.end(JSON.stringify({ experiments: Object.values(vectors.experiments), groups: vectors.groups }));
      } else {
        if (req.url === '/exposures')
          exposed.push(...JSON.parse(body).exposures.map((e: any) => e.assignmentId));
        res.end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const client = new AgentSplit({
    baseUrl,
    apiKey: 'k',
    local: true,
    logger: memoryLogger(),
    batchSize: 1000,
    maxQueueSize: 1_000_000,
  });
  try {
    await client.refreshDefinitions();
    const entered: string[] = [];
    const failures: string[] = [];
    for (const [i, c] of vectors.cases.entries()) {
      const def = vectors.experiments[c.experiment];
      const a = client.assignLocal(def.slug, c.userId, c.context === null ? {} : { context: c.context });
      const read = readAssignmentId(a.assignmentId, def.assignmentIdKey);
      const got = {
        variant: a.variant,
        variantIndex: read?.variantIndex,
        inExperiment: a.inExperiment,
        reason: a.reason,
      };
      if (a.source !== 'local' || read?.inExperiment !== c.expected.inExperiment) {
        failures.push(`#${i}: source ${a.source}, id ${a.assignmentId}`);
      }
      try {
        assert.deepEqual(got, c.expected);
      } catch {
        failures.push(
          `#${i} ${c.experiment} ${c.userId} ${JSON.stringify(c.context)}: got ${JSON.stringify(got)}, want ${JSON.stringify(c.expected)}`,
        );
      }
      if (a.inExperiment) entered.push(a.assignmentId);
    }
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} of ${vectors.cases.length} cases differ`);
    // Exposures for the entered cases only.
    assert.equal(await client.flush(10_000), true);
    assert.deepEqual(exposed.sort(), entered.sort());
  } finally {
    await client.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
