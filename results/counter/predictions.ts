/** The counter experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import type { CounterResult, CounterRun } from './report.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';

/** Answered loans missing from the total afterwards: as % of the answered ones for memory, as loans for SQLite. */
export function measures(r: CounterResult): Measure[] {
  const run = (store: string): CounterRun | undefined =>
    r.runs.find((x) => x.topology === 'cluster' && x.store === store);
  const missing = (x: CounterRun | undefined) => (x ? Math.max(0, x.answered - x.total) : undefined);
  const memory = run('memory');
  const share = ratio(missing(memory), memory?.answered);
  return [
    ...measure(
      'memory-missing-share',
      'cluster workers counting in memory, one killed halfway: answered loans missing from the total afterwards',
      '%',
      share === undefined ? undefined : 100 * share,
      { line: 'cluster-memory  total-vs-200s' },
    ),
    ...measure(
      'sqlite-missing',
      'cluster workers counting in one SQLite file, one killed halfway: answered loans missing from the total afterwards',
      'loans',
      missing(run('sqlite')),
      { line: 'cluster-sqlite  total-vs-200s' },
    ),
  ];
}

const WHERE = 'lessons/07-shared-state.md, Experiment 2';

export const predictions: Question[] = [
  {
    id: 'memory-after-kill',
    ask: "Three cluster workers count loans in their own memory; one is SIGKILLed halfway and the primary starts a replacement. Afterwards the surviving workers' counts are added up. What share of the loans the clients got 200 for is missing from that total?",
    measure: 'memory-missing-share',
    choices: [
      { label: 'none (under 0.5 %)', to: 0.5 },
      { label: 'some: about what the killed worker had counted (0.5 to 50 %)', from: 0.5, to: 50 },
      { label: 'most (50 % or more)', from: 50 },
    ],
    explain: "The killed worker's count lived in its memory and died with it; its replacement starts at 0.",
    lesson: WHERE,
  },
  {
    id: 'sqlite-after-kill',
    ask: 'The same kill, with every worker incrementing one count in a SQLite file. How many loans that got a 200 are missing from the count?',
    measure: 'sqlite-missing',
    choices: [
      { label: 'none', to: 0.5 },
      { label: 'a few: the ones the killed worker was answering', from: 0.5 },
    ],
    explain:
      'A worker answers 200 only after its increment is committed, so a kill can lose an answer but never a counted loan: the total can only be higher than the 200s (by the loans in flight).',
    lesson: WHERE,
  },
];
