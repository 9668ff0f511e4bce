// @agentsplit/client/conformance: the draw and the assignment ids exactly as the server makes them, for
// checking a port against the repository's vectors (test/fixtures/vectors) or the server's answers. Not
// the client's API: `AgentSplit` assigns with these itself; an application has no need to call them.
export {
  bucketRanges,
  chooseVariant,
  fnv1a32,
  getEqualWeights,
  hashV1,
  hashV2,
  inNamespace,
} from './hash.js';
export { assignmentIdFor, readAssignmentId, uuidv7 } from './ids.js';
