// Distinct users per variant (issue 23): in a sticky experiment the sample-ratio check counts users, not
// assign calls, so a user who calls a hundred times weighs as one. The store keeps each (experiment,
// version, user) once, with the variant it was first exposed to, and per variant the count of those rows,
// incremented by the rows a batch inserts. Pure.
import { decodeExposureBatch } from './exposure.js';
import { type ExposureRollup, rollUpExposures } from './rollups.js';

export interface ExposureUser {
  experimentId: number;
  version: number;
  userId: string;
  variantKey: string;
}

export const exposureUserKey = (u: Omit<ExposureUser, 'variantKey'>) =>
  `${u.experimentId}\u0000${u.version}\u0000${u.userId}`;

/** The users of the batches of sticky experiments (`unit`), each (experiment, version, user) once, first exposure first. */
export function exposureUsersOf(
  batches: ReadonlyArray<{
    experimentId: number;
    version: number;
    json: string;
    unit?: boolean;
  }>,
): ExposureUser[] {
  const users = new Map<string, ExposureUser>();
  for (const b of batches) {
    if (b.unit !== true) continue;
    for (const e of decodeExposureBatch(b.json, b.experimentId, b.version)) {
      const user = {
        experimentId: b.experimentId,
        version: b.version,
        userId: e.userId,
        variantKey: e.variantKey,
      };
      const key = exposureUserKey(user);
      if (!users.has(key)) users.set(key, user);
    }
  }
  return [...users.values()];
}

/** The users not `stored` yet (keys of exposureUserKey), and how many that adds to each variant's count. */
export function newExposureUsers(
  users: readonly ExposureUser[],
  stored: { has(key: string): boolean },
): { rows: ExposureUser[]; counts: ExposureRollup[] } {
  const rows = users.filter((u) => !stored.has(exposureUserKey(u)));
  return { rows, counts: rollUpExposures(rows) };
}
