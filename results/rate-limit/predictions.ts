/** The rate-limit experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import type { RateLimitResult } from './report.ts';

/** Loans allowed for the one member, per store (the limit is r.limit). */
export function measures(r: RateLimitResult): Measure[] {
  return ['memory', 'sqlite', 'redis'].flatMap((store) =>
    measure(
      `${store}-allowed`,
      `loans allowed with the count in ${store === 'memory' ? "each worker's memory" : store === 'sqlite' ? 'one SQLite file' : 'Redis'} (limit ${r.limit})`,
      'loans',
      r.runs.find((x) => x.store === store)?.allowed,
      {
        line: `${store}  allowed-vs-limit`,
        threshold: r.limit,
      },
    ),
  );
}

const WHERE = 'lessons/07-shared-state.md, Experiment 3';

export const predictions: Question[] = [
  {
    id: 'memory-limit',
    ask: "A member may borrow 10 loans a minute, counted in each worker's memory, on a 4-worker cluster. The member tries 60 times, each on a fresh connection. How many loans get through?",
    measure: 'memory-allowed',
    choices: [
      { label: '10, the limit', to: 10.5 },
      { label: '11 to 39', from: 10.5, to: 39.5 },
      { label: '40: 10 on each worker', from: 39.5, to: 40.5 },
      { label: 'more than 40 (up to all 60)', from: 40.5 },
    ],
    explain:
      'Each worker counts alone and lets the member through 10 times: a limit in process memory is a limit per process.',
    lesson: WHERE,
  },
  {
    id: 'sqlite-limit',
    ask: 'The same 60 attempts, one after another, with the count in one SQLite file that all 4 workers share. How many get through?',
    measure: 'sqlite-allowed',
    choices: [
      { label: 'exactly 10', to: 10.5 },
      { label: 'more than 10: each worker still lets some through', from: 10.5 },
    ],
    explain:
      "Every worker increments and reads the one count, so the 11th attempt sees 11 whichever worker takes it. (Attempts at the same instant would also need the increment and the check to be one atomic step, as the store's single upsert statement is.)",
    lesson: WHERE,
  },
];
