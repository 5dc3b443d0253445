/** The capped-scale-out experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { CAPPED_GROWS_FACTOR, DB_FLAT_FACTOR, step } from './report.ts';
import type { CappedScaleOutResult } from './result.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';

/** Replicas held to a CPU quota: CPU-bound throughput at 5 replicas over 1; the user scenario's at 5 over 3 (SQLite only). */
export function measures(r: CappedScaleOutResult): Measure[] {
  const cpu = r.workloads.find((w) => w.name === 'cpu-bound');
  const user = r.workloads.find((w) => w.name === 'user-scenario');
  return [
    ...measure(
      'cpu-bound-5-vs-1',
      `replicas held to ${r.cap.cores} core each, CPU-bound: throughput with 5 replicas over 1`,
      '×',
      ratio(step(cpu, 5)?.throughput, step(cpu, 1)?.throughput),
      { line: 'cpu-bound  5-replicas-vs-1', threshold: CAPPED_GROWS_FACTOR },
    ),
    ...measure(
      'user-scenario-5-vs-3',
      `replicas held to ${r.cap.cores} core each, creates and reads on one SQLite file: throughput with 5 replicas over 3`,
      '×',
      r.database.kind === 'sqlite' ? ratio(step(user, 5)?.throughput, step(user, 3)?.throughput) : undefined,
      {
        line: 'user-scenario  5-replicas-vs-3',
        threshold: DB_FLAT_FACTOR,
      },
    ),
  ];
}

const WHERE = 'lessons/05-capacity.md, Experiment 2';

export const predictions: Question[] = [
  {
    id: 'capped-cpu',
    ask: 'Each replica is held to a fifth of a core, as a container with a CPU limit is. Requests that burn CPU: from 1 replica to 5, how does throughput change?',
    measure: 'cpu-bound-5-vs-1',
    choices: [
      { label: 'about the same (under 1.5×)', to: 1.5 },
      { label: 'somewhat (1.5× to 3×)', from: 1.5, to: CAPPED_GROWS_FACTOR },
      { label: 'close to 5× (3× or more)', from: CAPPED_GROWS_FACTOR },
    ],
    explain:
      'Five fifths of a core fit in one core, and the other core is left to the balancer and the load generator: each replica added brings CPU that nothing else was using.',
    lesson: WHERE,
  },
  {
    id: 'capped-database',
    ask: 'The same replicas, now creating and reading users in one SQLite file whose every commit holds the writer lock for a modelled 16 ms disk flush. From 3 replicas to 5?',
    measure: 'user-scenario-5-vs-3',
    choices: [
      { label: 'about no more (under 1.25×)', to: DB_FLAT_FACTOR },
      { label: 'more (1.25× or more)', from: DB_FLAT_FACTOR },
    ],
    explain:
      'The writers take turns on one lock, which is already busy most of the time: more replicas add CPU but not commits, so the shared database is the new limit.',
    lesson: WHERE,
  },
];
