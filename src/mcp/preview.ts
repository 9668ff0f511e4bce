// preview_assignment's answer: which variant assign would give a user, computed with the pure core's own
// draw (core/assignment.ts) from the experiment as the API answers it, so nothing is assigned or counted.
import { assignVariant, compileExperiment } from '../core/assignment.js';
import type { Experiment } from '../core/experiment.js';

export interface Preview {
  slug: string;
  userId: string;
  status: string;
  assignment: string;
  /** Sticky: the variant the user gets; random: null (each call is a fresh draw). */
  variant: string | null;
  payload: unknown;
  /** Each variant's share of traffic (%), what a random draw follows. */
  weights: Record<string, number>;
  summary: string;
}

interface Shown {
  slug: string;
  status: string;
  assignment: string;
  seed: string;
  variants: Array<{ key: string; trafficPercent: number; payload: unknown }>;
}

export function previewOf(experiment: Shown, userId: string): Preview {
  const weights = Object.fromEntries(experiment.variants.map((v) => [v.key, v.trafficPercent]));
  const serving =
    experiment.status === 'running'
      ? ''
      : ` (the experiment is ${experiment.status}: assign answers 404 until it runs)`;
  if (experiment.assignment !== 'sticky') {
    const split = experiment.variants.map((v) => `${v.key} ${v.trafficPercent}%`).join(', ');
    return {
      slug: experiment.slug,
      userId,
      status: experiment.status,
      assignment: experiment.assignment,
      variant: null,
      payload: null,
      weights,
      summary: `'${experiment.slug}' assigns at random: each assign call is a fresh weighted draw (${split}), so '${userId}' has no fixed variant${serving}.`,
    };
  }
  // The random source is never asked for a sticky experiment (only for float dust at the very end).
  const index = assignVariant(compileExperiment(experiment as Experiment), userId, () => 0.999999);
  const variant = experiment.variants[index]!;
  return {
    slug: experiment.slug,
    userId,
    status: experiment.status,
    assignment: 'sticky',
    variant: variant.key,
    payload: variant.payload,
    weights,
    summary: `'${userId}' gets variant ${variant.key} of '${experiment.slug}' (sticky: always the same)${serving}.`,
  };
}
