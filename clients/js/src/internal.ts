// What the OpenFeature provider needs of a client and users do not: a local draw whose exposure is
// recorded only when the caller takes the variant, and the client's rate-limited warnings. Symbol-keyed,
// so neither is part of the client's API.
import type { EntryReason } from './entry.js';
import type { JsonObject } from './types.js';

export const LOCAL_DRAW: unique symbol = Symbol('agentsplit.localDraw');
export const WARN: unique symbol = Symbol('agentsplit.warn');

/** Why no variant could be drawn locally. */
export type DrawFailure = 'closed' | 'not-local' | 'not-loaded' | 'not-found' | 'bad-user';

export type LocalDraw =
  | {
      kind: 'ok';
      variant: string;
      /** The definition's own payload object, shared between calls. */
      payload: JsonObject;
      experimentVersion: number;
      inExperiment: boolean;
      reason: EntryReason | null;
      /** Records the exposure (queued for POST /exposures; none when not entered) and answers its id. */
      expose(context: JsonObject | undefined): string;
    }
  | { kind: DrawFailure; message: string };
