// What was decided when an experiment completed: its shape, validation rules and how it is said. Pure: no I/O.
import { ValidationError } from './errors.js';
import { isJsonObject } from './json.js';
import type { Variant } from './variants.js';

/** `variant` when no variant shipped (the control stays, or nothing changed). */
export const NO_VARIANT = 'none';
export const MAX_DECISION_NOTE = 2000;

/**
 * What was decided when the experiment completed ("shipped B: cheaper at equal success"). It belongs to
 * completing: set with `status: "completed"`, or corrected while completed. `variant` is a variant's key or
 * 'none' ('none' always means no variant shipped, even if a variant is keyed 'none').
 */
export interface Decision {
  variant: string;
  note: string;
  decidedAt: string;
}

export interface DecisionInput {
  variant: string;
  note?: string;
}

/** A decision as kept: its variant names one of `variants` or is 'none'; the note is trimmed. */
export function validateDecision(input: unknown, variants: readonly Variant[], now: string): Decision {
  if (!isJsonObject(input)) throw new ValidationError('decision must be an object {variant, note}');
  const { variant, note } = input as Record<string, unknown>;
  const keys = variants.map((v) => v.key);
  if (typeof variant !== 'string' || (variant !== NO_VARIANT && !keys.includes(variant))) {
    throw new ValidationError(
      `decision.variant must be one of the variants (${keys.join(', ')}) or '${NO_VARIANT}' (got ${JSON.stringify(variant ?? null)})`,
    );
  }
  if (note !== undefined && typeof note !== 'string')
    throw new ValidationError('decision.note must be a string');
  const text = (note ?? '').trim();
  if (text.length > MAX_DECISION_NOTE) {
    throw new ValidationError(
      `decision.note must be at most ${MAX_DECISION_NOTE} characters (got ${text.length})`,
    );
  }
  return { variant, note: text, decidedAt: now };
}

/** "shipped B: cheaper at equal success", "no change shipped": how lists and the history say it. */
export function describeDecision(d: Decision): string {
  const what = d.variant === NO_VARIANT ? 'no change shipped' : `shipped ${d.variant}`;
  return d.note === '' ? what : `${what}: ${d.note}`;
}
