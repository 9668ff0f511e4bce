// The remote assign: POST /experiment/:slug/assign, at most timeoutMs. A failure is a warning and no
// answer (the client then answers the default), never an exception.
import { isObject } from './assignment.js';
import type { EntryReason } from './entry.js';
import { describeError, errorText, httpRequest } from './http.js';
import type { Assignment, AssignOptions } from './types.js';
import type { Warnings } from './warnings.js';

const ENTRY_REASONS = new Set<unknown>(['override', 'layer', 'targeting', 'coverage']);

/** Where a remote assign goes. */
export interface AssignTarget {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

/** The server's assignment of `userId` in `slug`, or undefined (said through `warnings`) when there is none. */
export async function requestAssignment<P>(
  to: AssignTarget,
  slug: string,
  userId: string,
  options: AssignOptions<P> | undefined,
  warnings: Warnings,
): Promise<Assignment<P> | undefined> {
  try {
    const answer = await httpRequest(`${to.baseUrl}/experiment/${encodeURIComponent(slug)}/assign`, {
      method: 'POST',
      apiKey: to.apiKey,
      body: JSON.stringify(
        options?.context === undefined ? { userId } : { userId, context: options.context },
      ),
      timeoutMs: to.timeoutMs,
    });
    const b = answer.body as
      | {
          variant?: unknown;
          payload?: unknown;
          assignmentId?: unknown;
          inExperiment?: unknown;
          reason?: unknown;
        }
      | undefined;
    if (
      answer.status === 200 &&
      typeof b?.variant === 'string' &&
      typeof b.assignmentId === 'string' &&
      isObject(b.payload)
    ) {
      return {
        experiment: slug,
        userId,
        variant: b.variant,
        payload: b.payload as P,
        assignmentId: b.assignmentId,
        source: 'server',
        // An older server answers neither: everyone entered.
        inExperiment: b.inExperiment !== false,
        reason: b.inExperiment === false && ENTRY_REASONS.has(b.reason) ? (b.reason as EntryReason) : null,
      };
    }
    if (answer.status === 401 || answer.status === 403) {
      warnings.auth(`assign ${slug} answered ${errorText(answer)}`);
    } else {
      warnings.warn(`assign:${answer.status}`, `assign ${slug} answered ${errorText(answer)}: default used`);
    }
  } catch (err) {
    warnings.warn('assign:network', `assign ${slug} failed (${describeError(err)}): default used`);
  }
  return undefined;
}
