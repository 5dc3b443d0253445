/** The stall experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import type { LoopName, StallResult } from './report.ts';

/** Each generator's p99 and its samples taken during the stall; the stall itself, ms. */
export function measures(r: StallResult): Measure[] {
  const pass = (loop: LoopName) => r.passes.find((p) => p.loop === loop);
  return [
    ...measure('stall', 'how long the server was frozen', 'ms', r.stallMs),
    ...(['closed-loop', 'open-loop', 'rated-closed-loop'] as const).flatMap((loop) => [
      ...measure(`${loop}-p99`, `${loop.replace(/-/g, ' ')}: p99`, 'ms', pass(loop)?.p99Ms, {
        line: `stall  ${loop}  p99`,
      }),
      ...measure(
        `${loop}-samples-during-stall`,
        `${loop.replace(/-/g, ' ')}: requests sent before the server woke and answered after it froze`,
        'requests',
        pass(loop)?.duringStall,
        { line: `stall  ${loop}  samples-during-stall` },
      ),
    ]),
  ];
}

const WHERE = 'lessons/01-ceiling.md, "A stall, measured three ways"';
const P99_CHOICES = [
  { label: 'under 10 ms: the stall hardly shows', to: 10 },
  { label: '10 to 100 ms', from: 10, to: 100 },
  { label: '100 to 500 ms', from: 100, to: 500 },
  { label: 'over 500 ms: most of the stall', from: 500 },
] as const;

export const predictions: Question[] = [
  {
    id: 'closed-loop-p99',
    ask: 'A server that answers in under a millisecond freezes for 1 s in the middle of the run. autocannon, 4 connections, sends as fast as the answers come. What p99 does it report?',
    measure: 'closed-loop-p99',
    choices: P99_CHOICES,
    explain:
      'While the server is frozen each connection waits with one request in flight and sends nothing more: 4 slow samples among thousands of fast ones, well under 1 % of them.',
    lesson: WHERE,
  },
  {
    id: 'open-loop-p99',
    ask: 'The same stall, measured by an open loop that sends 400 requests a second whatever the server does, each timed from when it was due. What is its p99?',
    measure: 'open-loop-p99',
    choices: P99_CHOICES,
    explain:
      'The frozen second is a fifth of the run (a third with --quick), so that share of the requests waited: up to a second for those due as it began. The slowest 1 % waited almost all of it.',
    lesson: WHERE,
  },
  {
    id: 'open-loop-samples',
    ask: 'How many of the open loop’s requests were sent before the server woke and answered after it froze?',
    measure: 'open-loop-samples-during-stall',
    choices: [
      { label: 'about 4, one per connection', to: 20 },
      { label: 'about 40', from: 20, to: 150 },
      { label: 'about 400, one for every 2.5 ms of the stall', from: 150 },
    ],
    explain:
      'An open loop keeps sending on schedule: 400 a second for the frozen second. The requests past its 4 connections wait inside the generator, and their wait counts.',
    lesson: WHERE,
  },
];
