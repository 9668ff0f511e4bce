// The work an analysis worker does (analysis-pool.ts): one analysis or time series of an experiment the
// main thread found, answered as JSON text serialized by the route's own schema, so the main thread only
// sends it. Errors the client should see cross the thread as data (status, message), not as exceptions.
import fastJson from 'fast-json-stringify';
import { AppError, UnavailableError } from '../core/errors.js';
import { type SimulationOutcome, type SimulationPlan, simulateRollout } from '../core/rollout-simulation.js';
import { AnalysisSchema } from '../stats/analysis-schema.js';
import type { Analysis } from '../stats/index.js';
import { TimeseriesSchema } from '../stats/timeseries-schema.js';
import type { Store } from '../store/store.js';
import { type AnalysedExperiment, type AnalysisQuery, AnalysisService } from './analysis.js';
import { type TimeseriesQuery, TimeseriesService } from './timeseries.js';

export type AnalysisTask =
  | { kind: 'analysis'; experiment: AnalysedExperiment; query: AnalysisQuery; as: 'json' | 'value' }
  | { kind: 'timeseries'; experiment: AnalysedExperiment; query: TimeseriesQuery; as: 'json' }
  | { kind: 'simulate'; plan: SimulationPlan }
  | { kind: 'exposures'; experiment: AnalysedExperiment; version: number };

export type TaskOutcome =
  | { ok: true; json: string }
  | { ok: true; value: Analysis }
  | { ok: true; simulation: SimulationOutcome }
  | { ok: true; exposures: Record<string, number> }
  | { ok: false; status: number; message: string; retryAfterSeconds?: number };

export type ReadStore = Pick<
  Store,
  'readRollups' | 'listVersions' | 'readSegments' | 'readHourly' | 'listResults' | 'listExposures'
>;

export interface TaskRunner {
  run(task: AnalysisTask): Promise<TaskOutcome>;
}

const none = { find: async () => undefined };

/** Runs tasks against `store` (a worker's own read connection, or the main store when it cannot be shared). */
export function taskRunner(store: ReadStore): TaskRunner {
  const analysis = new AnalysisService({ experiments: none, store });
  const timeseries = new TimeseriesService({ experiments: none, store });
  let serializers: { analysis: (v: unknown) => string; timeseries: (v: unknown) => string } | undefined;
  const serialize = (kind: 'analysis' | 'timeseries', value: unknown) => {
    serializers ??= {
      analysis: fastJson(AnalysisSchema as never),
      timeseries: fastJson(TimeseriesSchema as never),
    };
    return serializers[kind](value);
  };
  return {
    async run(task) {
      try {
        if (task.kind === 'simulate') return { ok: true, simulation: simulateRollout(task.plan) };
        if (task.kind === 'exposures') {
          const counts: Record<string, number> = {};
          for (const e of (await store.readRollups(task.experiment.id)).exposures) {
            if (e.version === task.version) counts[e.variantKey] = (counts[e.variantKey] ?? 0) + e.n;
          }
          return { ok: true, exposures: counts };
        }
        if (task.kind === 'timeseries') {
          const series = await timeseries.timeseriesOf(task.experiment, task.query);
          return { ok: true, json: serialize('timeseries', series) };
        }
        const answer = await analysis.analyzeExperiment(task.experiment, task.query);
        return task.as === 'value'
          ? { ok: true, value: answer }
          : { ok: true, json: serialize('analysis', answer) };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const retry = err instanceof UnavailableError ? { retryAfterSeconds: err.retryAfterSeconds } : {};
        return { ok: false, status: err.status, message: err.message, ...retry };
      }
    },
  };
}
