// Literal results and exposures for the tests of the ingest pipeline and what observes it.
import type { Exposure } from '../core/exposure.js';
import type { NewResult } from '../core/writes.js';

export function result(id: string, experiment = 1): NewResult {
  return {
    logId: id,
    experimentId: experiment,
    version: 1,
    variantKey: 'A',
    knownVariant: true,
    userId: null,
    assignmentId: null,
    input: null,
    output: null,
    metrics: null,
    context: null,
    timestamp: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}

export function exposure(id: string): Exposure {
  return {
    assignmentId: id,
    experimentId: 1,
    version: 1,
    variantKey: 'A',
    userId: 'u',
    context: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}
