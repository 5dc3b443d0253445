/** The autoscale experiment's --predict questions (results/report/predictions.ts), answered by its measures. */
import type { Question } from '../report/predictions.ts';

export const predictions: Question[] = [
  {
    id: 'p50-40-vs-10-users',
    ask: 'One worker with a 0.25-core quota, 40 users instead of 10: the steady p50 is how many times the 10-user one?',
    measure: 'p50-40-vs-10-users',
    choices: [
      { label: 'about the same (under 3×)', to: 3 },
      { label: '3× to 10×', from: 3, to: 10 },
      { label: '10× or more', from: 10 },
    ],
    explain:
      "With 10 users the typical request finds the worker idle (about 1 ms); with 40 it waits in the worker's queue. A closed loop turns overload into waiting, not errors.",
    lesson: 'lessons/08-autoscaling.md, "The experiment: autoscale", "What to look for"',
  },
  {
    id: 'throughput-auto-vs-1-worker',
    ask: "The same 40 users with the autoscaler (1 to 8 workers): steady req/s over one worker's?",
    measure: 'throughput-auto-vs-1-worker',
    choices: [
      { label: 'barely more (under 1.4×)', to: 1.4 },
      { label: '1.4× to 3×', from: 1.4, to: 3 },
      { label: '3× or more', from: 3 },
    ],
    explain:
      'A closed loop cannot be served more than its users ask: they ask about twice what one saturated worker serves, so more workers help up to about 2×, not 8×.',
    lesson: 'lessons/08-autoscaling.md, "The workload: virtual users in a closed loop"',
  },
  {
    id: 'recommendation-80-users',
    ask: 'With 80 users, how many workers does the controller recommend once the load is steady (at most 8)?',
    measure: 'recommendation-80-users',
    choices: [
      { label: '1 to 3', to: 3.5 },
      { label: '4 to 6', from: 3.5, to: 6.5 },
      { label: '7 or 8', from: 6.5 },
    ],
    explain:
      "ceil(workers × utilization / 60 %): 80 users ask about four saturated workers' CPU, which at a 60 % target is 7 workers, 8 with a 2-core machine's noise.",
    lesson: 'lessons/08-autoscaling.md, "The HPA rule"',
  },
];
