/** The distribution experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import type { DistributionResult } from './report.ts';
import { measure, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';

/** Per policy: of the requests sent while one replica held a long request, how many went to it. */
export function measures(r: DistributionResult): Measure[] {
  return Object.entries(r.byPolicy).flatMap(([policy, d]) =>
    measure(
      `${policy}-to-busy`,
      `${policy}: requests sent to the replica holding a long request, of ${d.withBusy.length}`,
      'requests',
      d.withBusy.filter((x) => x === d.busy).length,
      {
        line: `${policy}  ${d.withBusy.length}-requests-with-one-replica-busy`,
      },
    ),
  );
}

const WHERE = 'lessons/04-where-requests-go.md, Experiment 1';
const SHARE_OF_30: Question['choices'] = [
  { label: 'none', to: 0.5 },
  { label: 'a few (1 to 5)', from: 0.5, to: 5.5 },
  { label: 'about a third (6 to 14)', from: 5.5, to: 14.5 },
  { label: 'half or more (15 or more)', from: 14.5 },
];

export const predictions: Question[] = [
  {
    id: 'round-robin-busy',
    ask: 'One of 3 replicas is busy with a long request. Thirty short requests follow, one at a time, under round robin. How many go to the busy replica?',
    measure: 'round-robin-to-busy',
    choices: SHARE_OF_30,
    explain: 'Round robin hands out requests in turn and never looks at load: the busy replica keeps its third.',
    lesson: WHERE,
  },
  {
    id: 'least-connections-busy',
    ask: 'The same under least connections (the replica with the fewest requests in flight wins). How many go to the busy replica?',
    measure: 'least-connections-to-busy',
    choices: SHARE_OF_30,
    explain: 'The busy replica has one request in flight and the others none, so it never has the fewest.',
    lesson: WHERE,
  },
  {
    id: 'two-choices-busy',
    ask: 'The same under power of two choices (two distinct replicas drawn at random, the one with fewer in flight wins). How many go to the busy replica?',
    measure: 'power-of-two-choices-to-busy',
    choices: SHARE_OF_30,
    explain:
      'Two distinct draws out of three always include an idle replica, and the idle one wins every comparison with the busy one.',
    lesson: WHERE,
  },
];
