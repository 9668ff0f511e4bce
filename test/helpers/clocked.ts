// A runtime on a test clock for one describe block (the rollout tests): started before its tests on the
// test backend in a temporary directory, closed and removed after them; `advance(minutes)` moves the clock
// the runtime reads (RuntimeOptions.now), so steps of hours take no time.
import { after, before } from 'node:test';
import type { RuntimeOptions } from '../../src/runtime.js';
import { makeTempDir, removeTempDir, startTestRuntime, type TestRuntime } from './app.js';

export interface Clocked {
  /** Set once the block's `before` ran. */
  runtime: TestRuntime;
  /** The clock, in ms since the epoch. */
  clock: number;
  advance(minutes: number): void;
}

export function clockedRuntime(
  name: string,
  options: Partial<Omit<RuntimeOptions, 'database' | 'now'>> = {},
  start = '2026-11-28T00:00:00.000Z',
): Clocked {
  let dir = '';
  const clocked: Clocked = {
    runtime: undefined as unknown as TestRuntime,
    clock: Date.parse(start),
    advance(minutes) {
      clocked.clock += minutes * 60_000;
    },
  };
  before(async () => {
    dir = makeTempDir();
    clocked.runtime = await startTestRuntime(dir, name, {
      ...options,
      now: () => new Date(clocked.clock).toISOString(),
    });
  });
  after(async () => {
    await clocked.runtime?.close();
    removeTempDir(dir);
  });
  return clocked;
}
