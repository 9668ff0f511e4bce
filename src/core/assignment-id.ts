// Assignment ids that say what they were issued for (ADR 0018): `<UUIDv7>.<version>.<variant>.<user>.<check>`,
// so feedback and log can find an assignment's variant and user at once, on any instance, even before its
// exposure is written. Pure. The check is a checksum against ids the service never issued (typos, ids of
// another deployment), not a signature: a key that could forge one can already log any result it likes.
import { fnv1a32 } from './assignment.js';

export interface IssuedAssignment {
  /** The experiment version the assignment was made under. */
  version: number;
  /** Index of the assigned variant in that version's variants. */
  variantIndex: number;
  userId: string;
}

function check(experimentId: number, body: string): string {
  return fnv1a32(`${experimentId}|${body}`).toString(16).padStart(8, '0');
}

/** The id of an assignment: `uuid` (a fresh UUIDv7) followed by what it was issued for. */
export function assignmentIdFor(uuid: string, experimentId: number, issued: IssuedAssignment): string {
  const body = `${uuid}.${issued.version.toString(36)}.${issued.variantIndex.toString(36)}.${Buffer.from(issued.userId, 'utf8').toString('base64url')}`;
  return `${body}.${check(experimentId, body)}`;
}

const SHAPE = /^([0-9a-f-]{36})\.([0-9a-z]{1,8})\.([0-9a-z]{1,3})\.([A-Za-z0-9_-]*)\.([0-9a-f]{8})$/;

/** What an id says it was issued for in this experiment, or null when this service did not issue it there. */
export function readAssignmentId(id: string, experimentId: number): IssuedAssignment | null {
  const m = SHAPE.exec(id);
  if (m === null) return null;
  const body = id.slice(0, id.length - 9);
  if (check(experimentId, body) !== m[5]) return null;
  const userId = Buffer.from(m[4]!, 'base64url').toString('utf8');
  return { version: Number.parseInt(m[2]!, 36), variantIndex: Number.parseInt(m[3]!, 36), userId };
}
