// Lowers the calling thread's scheduling priority (ADR 0008): the SQLite writer and the analysis workers run
// below the event loop, so assign and log go first when the cores are busy.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers this thread's priority by `steps` niceness levels below the process's, as nice(1) does: relative,
 * so the thread stays below the event loop whatever niceness the service was started with, and only ever
 * raised, which needs no privilege. Linux schedules threads, and setpriority() takes a thread id, which
 * /proc/thread-self names; where there is no /proc (not Linux), the thread keeps its priority.
 */
export function lowerThreadPriority(steps: number): void {
  if (steps <= 0) return;
  let tid: number;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return; // not Linux
  }
  if (!Number.isInteger(tid) || tid <= 0) return;
  setPriority(tid, Math.min(19, getPriority(tid) + steps));
}
