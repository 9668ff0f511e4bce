// The metric names each experiment rolls up, as the SQL store knows them, so that it can apply the cap
// (core/metric-cap.ts, ADR 0014) to every batch it writes without reading them back each time.
import { applyMetricCap, MAX_METRICS_PER_EXPERIMENT } from '../core/metric-cap.js';
import { metricKind, type RolledResult } from '../core/rollups.js';

/** Reads the names each of `experimentIds` rolls up, from the database (committed rollups). */
export type ReadNames = (experimentIds: number[]) => Promise<Map<number, Set<string>>>;

export class MetricNames {
  /** Names each experiment rolls up, as far as this instance knows: never a name no rollup has. */
  private readonly known = new Map<number, Set<string>>();
  private readonly loading = new Map<number, Promise<void>>();

  constructor(private readonly cap = MAX_METRICS_PER_EXPERIMENT) {}

  /**
   * For the only writer of a database (SQLite's writer thread). Each experiment's names are read once,
   * before anything of it is written through here; after that this instance's set is the truth, and
   * names are added as they are admitted, before the commit. A batch that then fails leaves names in
   * the set that no rollup has: they still count, so the cap can only admit fewer names, never more.
   * The order in which batches then commit does not matter: each result records its own decision.
   */
  async decideAsOnlyWriter(results: RolledResult[], read: ReadNames): Promise<void> {
    const missing = [...new Set(results.map((r) => r.experimentId))].filter((id) => !this.known.has(id));
    if (missing.length > 0) await Promise.all(this.load(missing, read));
    applyMetricCap(results, (id) => this.namesOf(id), this.cap);
  }

  /**
   * For writers that hold the experiments' append lock (PostgreSQL, any number of instances; SQLite on
   * one connection): decides from committed names, read under the lock only when a result has a name
   * this instance has not seen committed and the cap may still admit it. Exact across instances, as
   * appends to an experiment are serialized. Call `committed` once the transaction has committed.
   */
  async decideUnderLock(results: RolledResult[], read: ReadNames): Promise<{ committed(): void }> {
    const stale = new Set<number>();
    for (const r of results) if (this.mayAdmit(r)) stale.add(r.experimentId);
    const current = stale.size > 0 ? await read([...stale]) : undefined;
    const decided = new Map<number, Set<string>>();
    applyMetricCap(
      results,
      (id) => {
        let names = decided.get(id);
        if (!names) {
          names = new Set(this.known.get(id));
          for (const name of current?.get(id) ?? []) names.add(name);
          decided.set(id, names);
        }
        return names;
      },
      this.cap,
    );
    return {
      committed: () => {
        for (const [id, names] of decided) this.known.set(id, names);
      },
    };
  }

  /** An experiment was deleted (only drafts without results can be): its id may be given out again. */
  forget(experimentId: number): void {
    this.known.delete(experimentId);
  }

  private namesOf(experimentId: number): Set<string> {
    let names = this.known.get(experimentId);
    if (!names) {
      names = new Set();
      this.known.set(experimentId, names);
    }
    return names;
  }

  /** Whether `r` has a name to roll up that this instance does not know of, and the cap may admit. */
  private mayAdmit(r: RolledResult): boolean {
    if (!r.metrics) return false;
    const known = this.known.get(r.experimentId);
    // Known names are committed ones: that many committed means no room, whatever else is committed.
    if (known && known.size >= this.cap) return false;
    for (const name in r.metrics) {
      const value = r.metrics[name];
      if (metricKind(value) !== undefined && !known?.has(name)) return true;
    }
    return false;
  }

  private load(ids: number[], read: ReadNames): Array<Promise<void>> {
    const fresh = ids.filter((id) => !this.loading.has(id));
    if (fresh.length > 0) {
      const done = read(fresh).then(
        (names) => {
          for (const id of fresh) {
            if (!this.known.has(id)) this.known.set(id, names.get(id) ?? new Set());
            this.loading.delete(id);
          }
        },
        (err) => {
          for (const id of fresh) this.loading.delete(id);
          throw err;
        },
      );
      for (const id of fresh) this.loading.set(id, done);
    }
    return ids.map((id) => this.loading.get(id) ?? Promise.resolve());
  }
}
