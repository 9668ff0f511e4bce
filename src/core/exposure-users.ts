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
    users?: ReadonlyArray<{ userId: string; variantKey: string }>;
  }>,
): ExposureUser[] {
  const users = new Map<string, ExposureUser>();
  for (const b of batches) {
    if (b.unit !== true) continue;
    for (const e of b.users ?? decodeExposureBatch(b.json, b.experimentId, b.version)) {
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

/**
 * Keys of users known to be committed in this process's database, so repeat users of a sticky
 * experiment cost no read. Only ever holds what a committed batch wrote or read back as stored; bounded
 * by forgetting everything when full (a forgotten user costs one read, never a wrong count).
 */
export class CommittedUsers {
  private keys = new Set<string>();

  /** 50,000 keys hold about 5 MB; at 200,000 the bench's stream of new users added 20–35 MB of peak RSS. */
  constructor(private readonly max = 50_000) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  remember(keys: Iterable<string>): void {
    for (const k of keys) {
      if (this.keys.size >= this.max) this.keys = new Set();
      this.keys.add(k);
    }
  }

  forgetAll(): void {
    this.keys = new Set();
  }
}
