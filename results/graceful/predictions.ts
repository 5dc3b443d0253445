/** The graceful experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { CLEARLY_WORSE, medianOf, sumOf, type GracefulResult, type StopCase } from './report.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';

/** For the 500 ms requests: client errors after an abrupt stop, and abrupt p99 over graceful p99. */
export function measures(r: GracefulResult): Measure[] {
  const slow = (mode: string): StopCase | undefined => r.cases.find((c) => c.key === 'slow-500ms' && c.mode === mode);
  const abrupt = slow('abrupt');
  const graceful = slow('graceful');
  return [
    ...measure(
      'abrupt-slow-client-errors',
      '500 ms requests, one replica stopped abruptly (retries on): requests that failed at the client',
      'requests',
      abrupt ? sumOf(abrupt, (x) => x.clientErrors) : undefined,
      { line: 'all-stops  client-errors' },
    ),
    ...measure(
      'abrupt-slow-p99-vs-graceful',
      '500 ms requests: p99 with an abrupt stop over p99 with a graceful one',
      '×',
      abrupt && graceful
        ? ratio(
            medianOf(abrupt, (x) => x.p99),
            medianOf(graceful, (x) => x.p99),
          )
        : undefined,
      {
        line: 'slow-500ms  abrupt-p99-vs-graceful',
        threshold: CLEARLY_WORSE,
      },
    ),
  ];
}

const WHERE = 'lessons/06-failure.md, Experiment 2';

export const predictions: Question[] = [
  {
    id: 'abrupt-errors',
    ask: '24 connections send requests that take 500 ms each to 3 replicas. One replica exits at once (an abrupt stop), cutting the 8 or so requests it was working on. The balancer retries failed GETs. How many requests fail at the client?',
    measure: 'abrupt-slow-client-errors',
    choices: [
      { label: 'none', to: 0.5 },
      { label: 'some: about the requests that were cut', from: 0.5 },
    ],
    explain:
      'The cut connections are reset, the balancer sees the reset and sends each GET again to a live replica: the clients wait longer but get their answers.',
    lesson: WHERE,
  },
  {
    id: 'abrupt-p99',
    ask: 'The same requests, once with an abrupt stop and once with a graceful one (the replica finishes what it has before it exits). What is p99 with the abrupt stop against p99 with the graceful one?',
    measure: 'abrupt-slow-p99-vs-graceful',
    choices: [
      { label: 'about the same (under 1.25×)', to: CLEARLY_WORSE },
      { label: 'clearly worse (1.25× or more)', from: CLEARLY_WORSE },
    ],
    explain:
      'A request cut after up to 500 ms of work starts again from nothing on another replica, so it takes up to twice as long; a drained replica finishes its requests instead.',
    lesson: WHERE,
  },
];
