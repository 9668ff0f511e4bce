// preview_assignment's answer: which variant assign would give a user and why, from the server's own
// preview (POST /experiment/:slug/preview: overrides, layer, targeting, coverage, split; ADR 0038), so
// nothing is assigned or counted, with the weights a random experiment's draw follows.

export interface Preview {
  slug: string;
  userId: string;
  status: string;
  assignment: string;
  /** Sticky or kept out: the variant the user gets; random and entered: null (each call is a fresh draw). */
  variant: string | null;
  payload: unknown;
  /** False when the user does not enter (served the default variant, or an override's), never analysed. */
  inExperiment: boolean;
  /** Why the user does not enter (override, layer, targeting, coverage); null when they enter. */
  reason: string | null;
  /** The step and clause that decided, in words. */
  explanation: string;
  /** Each variant's share of traffic (%), what a random draw follows. */
  weights: Record<string, number>;
  summary: string;
}

interface Shown {
  slug: string;
  status: string;
  assignment: string;
  variants: Array<{ key: string; trafficPercent: number }>;
}

/** What the server's preview answers. */
export interface Previewed {
  variant: string;
  payload: unknown;
  inExperiment: boolean;
  reason: string | null;
  explanation: string;
}

export function previewOf(experiment: Shown, userId: string, answer: Previewed): Preview {
  const weights = Object.fromEntries(experiment.variants.map((v) => [v.key, v.trafficPercent]));
  const serving =
    experiment.status === 'running'
      ? ''
      : ` (the experiment is ${experiment.status}: assign answers 404 until it runs)`;
  const base = {
    slug: experiment.slug,
    userId,
    status: experiment.status,
    assignment: experiment.assignment,
    inExperiment: answer.inExperiment,
    reason: answer.reason,
    explanation: answer.explanation,
    weights,
  };
  if (!answer.inExperiment) {
    return {
      ...base,
      variant: answer.variant,
      payload: answer.payload,
      summary: `'${userId}' is not in '${experiment.slug}' (${answer.reason}): assign serves ${answer.variant} and nothing of theirs is analysed${serving}. ${answer.explanation}.`,
    };
  }
  if (experiment.assignment !== 'sticky') {
    const split = experiment.variants.map((v) => `${v.key} ${v.trafficPercent}%`).join(', ');
    return {
      ...base,
      variant: null,
      payload: null,
      summary: `'${experiment.slug}' assigns at random: '${userId}' enters, and each assign call is a fresh weighted draw (${split}), so they have no fixed variant${serving}.`,
    };
  }
  return {
    ...base,
    variant: answer.variant,
    payload: answer.payload,
    summary: `'${userId}' gets variant ${answer.variant} of '${experiment.slug}' (sticky: always the same)${serving}. ${answer.explanation}.`,
  };
}
