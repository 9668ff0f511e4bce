// An analysis worker thread (analysis-pool.ts, piscina): opens its own read connection to the database on
// its first task, runs below the event loop's priority, and answers one task at a time.
import { workerData } from 'node:worker_threads';
import { type DatabaseTarget, openReadStore } from '../store/index.js';
import { lowerThreadPriority } from '../thread-priority.js';
import type { AnalysisTask, TaskOutcome, TaskRunner } from './analysis-tasks.js';
import { taskRunner } from './analysis-tasks.js';

const { database, nice } = workerData as { database: DatabaseTarget; nice: number };
lowerThreadPriority(nice);

let runner: Promise<TaskRunner> | undefined;

export default async function run(task: AnalysisTask): Promise<TaskOutcome> {
  runner ??= openReadStore(database).then(taskRunner, (err) => {
    runner = undefined;
    throw err;
  });
  return (await runner).run(task);
}
