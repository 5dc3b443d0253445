/** The cluster experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import type { ClusterResult } from './report.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';

/** The highest worker counter as a share of all loans; the replacement's first counter; the workers one kept-alive connection reached. */
export function measures(r: ClusterResult): Measure[] {
  const counters = Object.values(r.counters.byPid);
  return [
    ...measure(
      'highest-counter-share',
      "the highest worker's loan counter as a share of all loans",
      '×',
      ratio(counters.length ? Math.max(...counters) : undefined, r.counters.total),
      { line: 'counters  after-every-loan' },
    ),
    ...measure(
      'new-worker-counter',
      "the replacement worker's loan counter when it first answered",
      'loans',
      r.kill.newWorkerCounter,
      { line: 'kill-worker  new-worker-counter' },
    ),
    ...measure(
      'keep-alive-workers',
      `workers that answered ${r.keepAlive.requests} requests over one kept-alive connection`,
      'workers',
      Object.keys(r.keepAlive.byPid).length,
      { line: `keep-alive  ${r.keepAlive.requests}-requests-one-connection` },
    ),
  ];
}

const WHERE = 'lessons/03-runtime.md, Experiment 3';

export const predictions: Question[] = [
  {
    id: 'highest-counter',
    ask: 'Each worker counts loans in its own memory. After every loan has been answered, what does the highest worker counter show, as a share of all loans?',
    measure: 'highest-counter-share',
    choices: [
      { label: 'all of them (1×)', from: 0.995 },
      { label: 'only its own share (under 1×)', to: 0.995 },
    ],
    explain:
      'Workers are separate processes: a variable in one is not seen by another, so each counter holds only the loans that worker served.',
    lesson: WHERE,
  },
  {
    id: 'replacement-counter',
    ask: "A worker is killed and the primary forks a replacement. What is the replacement's loan counter when it first answers (before its own loan)?",
    measure: 'new-worker-counter',
    choices: [
      { label: 'zero', to: 0.5 },
      { label: 'where the killed worker stopped, or more', from: 0.5 },
    ],
    explain: 'A new process starts with fresh memory; what the killed worker counted died with it.',
    lesson: WHERE,
  },
  {
    id: 'keep-alive-spread',
    ask: 'Thirty requests over ONE kept-alive connection: how many workers answer them?',
    measure: 'keep-alive-workers',
    choices: [
      { label: 'one', to: 1.5 },
      { label: 'two or more, in turn', from: 1.5 },
    ],
    explain:
      'node:cluster hands out connections, not requests: every request on a connection goes to the worker that accepted it.',
    lesson: WHERE,
  },
];
