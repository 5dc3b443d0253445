/** The sim-vs-lab experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import { find, RATIO_FACTOR, type SimVsLabResult } from './report.ts';

/** Round robin's p95, the model's over the lab's. */
export function measures(r: SimVsLabResult): Measure[] {
  return measure(
    'round-robin-p95-sim-vs-lab',
    "round robin's p95 with one replica blocked: the model's over the lab's",
    '×',
    ratio(find(r.sim, 'round-robin')?.p95, find(r.lab, 'round-robin')?.p95),
    { line: 'round-robin-p95  lab-vs-sim' },
  );
}

const WHERE = 'lessons/04-where-requests-go.md, Experiment 3';

export const predictions: Question[] = [
  {
    id: 'model-p95',
    ask: "A simulation with no sockets and no servers, only queues, the balancer's own picking code and the service times measured on this machine, predicts round robin's p95 with one replica blocked. How close does it come to the lab's?",
    measure: 'round-robin-p95-sim-vs-lab',
    choices: [
      { label: 'far below it (under half)', to: 1 / RATIO_FACTOR },
      { label: 'within 2× either way', from: 1 / RATIO_FACTOR, to: RATIO_FACTOR },
      { label: 'far above it (2× or more)', from: RATIO_FACTOR },
    ],
    explain:
      "Round robin's p95 is the wait behind the hog on the blocked replica, and that wait comes from the hog's requests and the event loop's turns, both of which the model has.",
    lesson: WHERE,
  },
];
