// Rollouts judged by their error rates, at bench size (issue 38): the A/A run of test/api-rollout-aa.test.ts
// with more users and a monitor round every 5 minutes of a test clock (more looks, more units: the regime where
// false rollbacks happen at all), again with half the users returning (those the ramp moves from control to
// the variant have results in both arms), and a known 10% regression, each beside the dry run's estimate
// for the same plan (which models new users only). In-process on a SQLite file, through the API (`npm run bench -- --rollout-aa`).
import { makeTempDir, removeTempDir, startTestRuntime } from '../test/helpers/app.js';
import { runRolloutTrial, type TrialOutcome, type TrialPlan } from '../test/helpers/rollout-trial.js';

const PLAN: Omit<TrialPlan, 'effect' | 'seed'> = {
  rollouts: 200,
  usersPerRound: 60,
  intervalMinutes: 5,
  steps: [{ percent: 25, minMinutes: 60 }, { percent: 50, minMinutes: 60 }, { percent: 100 }],
  minimumUnits: 100,
  mean: 1000,
  stdDev: 300,
  simulationRuns: 4000,
};

export interface RolloutTrialFigures {
  effect: number;
  returning: number;
  outcome: TrialOutcome;
}

export async function benchRolloutTrials(): Promise<RolloutTrialFigures[]> {
  const dir = makeTempDir();
  let clock = Date.parse('2026-11-28T00:00:00.000Z');
  const runtime = await startTestRuntime(dir, 'bench-rollout-aa', {
    now: () => new Date(clock).toISOString(),
  });
  const advance = (minutes: number) => {
    clock += minutes * 60_000;
  };
  try {
    const figures: RolloutTrialFigures[] = [];
    for (const [effect, returning, seed] of [
      [0, 0, 380],
      [0, 0.5, 382],
      [0.1, 0, 381],
    ] as const) {
      process.stderr.write(
        `rollouts through the API: ${PLAN.rollouts}, effect ${effect}, returning ${returning}\n`,
      );
      const outcome = await runRolloutTrial(runtime, advance, { ...PLAN, effect, returning, seed });
      figures.push({ effect, returning, outcome });
    }
    return figures;
  } finally {
    await runtime.close();
    removeTempDir(dir);
  }
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export function rolloutTrialLines(figures: RolloutTrialFigures[]): string[] {
  return [
    '',
    `rollouts through the API (issue 38): ${PLAN.rollouts} ramps each, 25 → 50 → 100% an hour a step, ` +
      `${PLAN.usersPerRound} users every ${PLAN.intervalMinutes} min, threshold 0, alpha 0.05, minimumUnits ${PLAN.minimumUnits}`,
    '| variant | rolled back (API) | dry run estimate (95%) | median minutes to 100% (API / dry run) | seconds |',
    '|---|---:|---:|---:|---:|',
    ...figures.map(({ effect, returning, outcome: o }) => {
      const sim = `${pct(o.simulated.chance)} (${pct(o.simulated.ci[0])}–${pct(o.simulated.ci[1])})`;
      const what = `${effect === 0 ? 'identical (A/A)' : `${pct(effect)} worse`}${returning > 0 ? `, ${pct(returning)} of users returning` : ''}`;
      return `| ${what} | ${o.rolledBack} of ${o.rollouts} (${pct(o.rate)}) | ${sim} | ${o.minutesToFull.api ?? '–'} / ${o.minutesToFull.simulated ?? '–'} | ${o.seconds.toFixed(0)} |`;
    }),
  ];
}
