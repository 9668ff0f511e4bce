// @agentsplit/client: assign variants (remote or local), log results, send feedback; fail-open.
export { AgentSplit } from './client.js';
export { bucketRanges, chooseVariation, fnv1a32, hashV2 } from './hash.js';
export { assignmentIdFor, readAssignmentId, uuidv7 } from './ids.js';
export type { CompiledDefinition, Definition } from './local.js';
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
