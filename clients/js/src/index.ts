// @agentsplit/client: assign variants (remote or local), log results, send feedback, an OpenFeature
// provider; fail-open. The hash and id helpers are at @agentsplit/client/conformance, not here.
export { AgentSplit } from './client.js';
export type { CompiledDefinition, Definition } from './local.js';
export { AgentSplitError } from './manage.js';
export type {
  AdjustmentAnalysis,
  Analysis,
  AnalysisParams,
  CapAnalysis,
  CreateExperimentFields,
  Effect,
  EntryReason,
  EntryRules,
  Experiment,
  ExperimentStatus,
  Layer,
  LayerInfo,
  MetricAnalysis,
  MetricDefinition,
  Override,
  Preview,
  SavedGroup,
  SavedGroupSummary,
  SaveGroupFields,
  UpdateExperimentFields,
  Variant,
  VariantAnalysis,
  Verdict,
} from './manage-types.js';
export { AgentSplitProvider, type AgentSplitProviderOptions } from './openfeature.js';
export type { RunFunction } from './run-dataset.js';
export type {
  Dataset,
  DatasetChange,
  DatasetItem,
  DatasetItemFields,
  DatasetRun,
  OfflineRun,
  OpenRunOptions,
  RunComparison,
  RunComparisonParams,
  RunDatasetOptions,
  RunFailure,
  RunOutcome,
  RunProgress,
  RunResult,
  RunVariantComparison,
} from './run-types.js';
export type {
  AgentSplitOptions,
  Assignment,
  AssignmentSource,
  AssignOptions,
  DeliveryStats,
  FeedbackEntry,
  JsonObject,
  JsonValue,
  LogEntry,
  Logger,
  Run,
  TrackOptions,
} from './types.js';
