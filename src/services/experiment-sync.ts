// Keeps this instance's in-memory experiments in step with changes made through other instances.
import type { Store } from '../store/store.js';
import type { ExperimentCache } from './experiment-cache.js';

export interface ExperimentSync {
  stop(): Promise<void>;
}

export interface SyncOptions {
  /**
   * The revision read just before the experiments were loaded. Read before, not after: a change landing
   * between the two is then seen as a difference and reloaded, not taken as already loaded.
   */
  loadedRevision: number;
  /** The safety net: how often the revision is compared even without a notification (ms). */
  pollMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * A notification (LISTEN/NOTIFY) triggers a check at once; a poll of the revision counter catches any
 * notification that was missed. A check reloads every experiment when the revision moved.
 */
export async function startExperimentSync(
  experiments: Pick<ExperimentCache, 'load'>,
  store: Pick<Store, 'experimentsRevision' | 'watchExperiments'>,
  options: SyncOptions,
): Promise<ExperimentSync> {
  let known = options.loadedRevision;
  let checking = false;
  let again = false;

  const check = async (): Promise<void> => {
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    try {
      do {
        again = false;
        // Revision first, then the data: a change in between only causes one more (harmless) reload.
        const revision = await store.experimentsRevision();
        if (revision !== known) {
          await experiments.load();
          known = revision;
        }
      } while (again);
    } catch (err) {
      options.onError?.(err);
    } finally {
      checking = false;
    }
  };

  const timer = setInterval(() => void check(), options.pollMs ?? 1000);
  timer.unref();
  const unwatch = await store.watchExperiments?.(() => void check());
  return {
    stop: async () => {
      clearInterval(timer);
      await unwatch?.();
    },
  };
}
