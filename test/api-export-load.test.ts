// Exports of large experiments must not hold up the server (issue 13, hole 3): while four exports of
// 200,000 results each stream, /healthz keeps answering (the diagnostic prints how fast; timings belong
// to `npm run bench`), and every export is whole.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { NewResult } from '../src/core/writes.js';
import {
  API_KEY,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  send,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const RESULTS = 200_000;
const EXPORTS = 4;
const POLL_MS = 20;

let dir: string;
let runtime: TestRuntime;
let slug: string;

/** Straight through the store in batches of 5,000, as bench/load.ts does: seconds, not minutes. */
async function load(experimentId: number): Promise<void> {
  const createdAt = new Date().toISOString();
  for (let done = 0; done < RESULTS; done += 5000) {
    const results: NewResult[] = [];
    for (let i = done; i < Math.min(RESULTS, done + 5000); i++) {
      results.push({
        logId: `load-${i}`,
        experimentId,
        version: 1,
        variantKey: i % 2 ? 'B' : 'A',
        knownVariant: true,
        userId: `u${i}`,
        assignmentId: null,
        input: `{"question":"where is order ${i}?"}`,
        output: '{"answer":"it ships today"}',
        metrics: `{"latency_ms":${800 + (i % 100)},"tokens":${150 + (i % 40)},"resolved":${i % 3 === 0}}`,
        context: null,
        timestamp: null,
        createdAt,
      });
    }
    await runtime.store.appendBatch({ results, exposures: [] });
  }
}

/**
 * Reads a whole export over its own connection: how many lines, and the first and last logId. Lines are
 * counted, not parsed (the client shares the server's process and core; parsing would be the load).
 */
function exportLines(): Promise<{ status: number; lines: number; first?: string; last?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: runtime.api.port,
        path: `/experiment/${slug}/results/export?format=ndjson`,
        headers: { 'x-api-key': API_KEY },
      },
      (res) => {
        let lines = 0;
        let head = '';
        let tail = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (head.length < 4096) head += chunk.slice(0, 4096);
          for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) lines++;
          tail = (tail + chunk).slice(-4096);
        });
        res.on('error', reject);
        res.on('end', () => {
          if (!tail.endsWith('\n')) return reject(new Error(`export ended mid-line: ${tail.slice(-100)}`));
          const logId = (line: string | undefined) => (JSON.parse(line ?? '{}') as { logId?: string }).logId;
          const lastLines = tail.split('\n');
          resolve({
            status: res.statusCode!,
            lines,
            first: logId(head.split('\n')[0]),
            last: logId(lastLines[lastLines.length - 2]),
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return;
  runtime = await startTestRuntime(dir, 'export-load');
  slug = (await runtime.api.createExperiment()).slug;
  const found = await runtime.store.findExperiment(slug);
  await load(found!.id);
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

describe('exports under load', { skip: SKIP_BACKEND }, () => {
  test(`/healthz keeps answering while ${EXPORTS} exports of ${RESULTS} results stream, and each export is whole`, async (t) => {
    let exporting = true;
    const healthz: number[] = [];
    const poll = (async () => {
      while (exporting) {
        const started = performance.now();
        const res = await send(runtime.api.port, { method: 'GET', url: '/healthz', headers: {} });
        healthz.push(performance.now() - started);
        assert.equal(res.statusCode, 200);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    })();
    const started = performance.now();
    const exports = await Promise.all(Array.from({ length: EXPORTS }, () => exportLines())).finally(() => {
      exporting = false;
    });
    const seconds = (performance.now() - started) / 1000;
    await poll;
    for (const e of exports) {
      assert.equal(e.status, 200);
      assert.equal(e.lines, RESULTS);
      assert.equal(e.first, 'load-0');
      assert.equal(e.last, `load-${RESULTS - 1}`);
    }
    const sorted = [...healthz].sort((a, b) => a - b);
    const slowest = sorted.at(-1)!;
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
    t.diagnostic(
      `${EXPORTS} exports in ${seconds.toFixed(1)} s; /healthz ×${healthz.length}: median ${median.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms`,
    );
    // Liveness, not speed (timings belong to npm run bench): an export that held the event loop (the hole
    // this guards) let no poll through until it ended; here polls are answered all along.
    assert.ok(healthz.length >= 5, `only ${healthz.length} /healthz answers while exporting`);
  });
});
