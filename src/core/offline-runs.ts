// Offline runs (issue 40, ADR 0047): an experiment's variants run over one version of a dataset, each item
// `trials` times, before (or beside) the online test. A run's results are results that name it, an item of
// its dataset version and a trial; they are stored and never counted online. Pure: the run's shape, the
// checks of a request to open one and of a result that names one.
import { ValidationError } from './errors.js';

export interface OfflineRun {
  id: string;
  experimentId: number;
  datasetId: string;
  /** The dataset's name. */
  dataset: string;
  /** The dataset version the run answers (its items are that version's). */
  version: number;
  /** The variants run, in order; the first is the default control. */
  variants: string[];
  trials: number;
  /** Items in that dataset version. */
  items: number;
  createdAt: string;
}

/** The most trials a run may ask of each item and variant. */
export const MAX_TRIALS = 20;

export interface OpenRunInput {
  dataset: string;
  version?: number;
  variants?: string[];
  trials?: number;
}

/** The variants and trials a request opens a run with, checked against the experiment's variants. */
export function runPlan(
  input: OpenRunInput,
  experimentVariants: readonly string[],
): { variants: string[]; trials: number } {
  const variants = input.variants ?? [...experimentVariants];
  const unknown = variants.filter((v) => !experimentVariants.includes(v));
  if (unknown.length > 0) {
    throw new ValidationError(
      `variants ${unknown.map((v) => `'${v}'`).join(', ')} are not variants of the experiment (it has ${experimentVariants.map((v) => `'${v}'`).join(', ')})`,
    );
  }
  if (new Set(variants).size !== variants.length)
    throw new ValidationError('variants must not repeat a variant');
  if (variants.length < 2) throw new ValidationError('a run compares at least two variants');
  const trials = input.trials ?? 1;
  if (!Number.isInteger(trials) || trials < 1 || trials > MAX_TRIALS) {
    throw new ValidationError(`trials must be an integer from 1 to ${MAX_TRIALS} (got ${trials})`);
  }
  return { variants, trials };
}

/** What a result says of the run it answers (log's runId, itemId, trial). */
export interface OfflineAnswer {
  runId: string;
  itemId: string;
  trial: number;
}

/**
 * Why a result naming `run` cannot be stored (null when it can): its variant must be one the run runs, its
 * trial within the run's, its item one of the dataset version's (`hasItem`).
 */
export function offlineProblem(
  run: OfflineRun,
  variantKey: string,
  answer: OfflineAnswer,
  hasItem: (itemId: string) => boolean,
): string | null {
  if (!run.variants.includes(variantKey)) {
    return `run ${run.id} runs variants ${run.variants.map((v) => `'${v}'`).join(', ')}, not '${variantKey}'`;
  }
  if (!Number.isInteger(answer.trial) || answer.trial < 1 || answer.trial > run.trials) {
    return `trial must be from 1 to ${run.trials} in run ${run.id} (got ${answer.trial})`;
  }
  if (!hasItem(answer.itemId)) {
    return `item '${answer.itemId}' is not in version ${run.version} of dataset '${run.dataset}'`;
  }
  return null;
}
