/** The shared-compute experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import { computeStats, SPIKE, type SharedComputeResult } from './report.ts';

/** The slowest steady request with a quarter-core quota in 100 ms periods, over the slowest on a core of its own. */
export function measures(r: SharedComputeResult): Measure[] {
  const stats = (name: string) => {
    const s = r.scenarios.find((x) => x.name === name);
    return s ? computeStats(s, r.quota) : undefined;
  };
  return measure(
    'slowest-shared-100ms-vs-dedicated',
    `the slowest steady request with a ${r.quota}-core quota in 100 ms periods, over the slowest on a dedicated core`,
    '×',
    ratio(stats('shared-100ms')?.slowest, stats('dedicated')?.slowest),
    {
      line: 'shared-compute  shared-100ms  slowest-request-vs-dedicated',
      threshold: SPIKE,
    },
  );
}

const WHERE = 'lessons/08-autoscaling.md, "Before autoscaling: a shared quota or a core of its own"';

export const predictions: Question[] = [
  {
    id: 'slowest-shared',
    ask: 'One worker may use a quarter of a core, granted per 100 ms period (25 ms of CPU, then it waits for the next period); on average it uses little more than half of that. Against the same worker on a core of its own, how slow is its slowest request?',
    measure: 'slowest-shared-100ms-vs-dedicated',
    choices: [
      { label: 'about the same (under 2×)', to: SPIKE },
      { label: 'clearly slower: spikes (2× or more)', from: SPIKE },
    ],
    explain:
      "A request that needs CPU after the period's 25 ms are spent waits for the next period, up to 75 ms, however idle the worker is on average.",
    lesson: WHERE,
  },
];
