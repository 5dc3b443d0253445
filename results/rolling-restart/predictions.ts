/** The rolling-restart experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import type { RollingRestartResult } from './report.ts';

/** Requests that failed (non-2xx or no answer) over the run, and requests answered while the workers were being replaced. */
export function measures(r: RollingRestartResult): Measure[] {
  return [
    ...measure(
      'failed-requests',
      'requests that failed (non-2xx or no answer) while every worker was replaced under load',
      'requests',
      r.totals.non2xx + r.totals.errors,
      { line: 'rolling-restart  errors' },
    ),
    ...measure(
      'requests-during-restart',
      "requests answered between the restart's start and its end",
      'requests',
      r.duringRestart,
      { line: 'rolling-restart  requests-during-restart' },
    ),
  ];
}

const WHERE = 'lessons/06-failure.md, Experiment 3';

export const predictions: Question[] = [
  {
    id: 'failed',
    ask: 'Every worker of a busy node:cluster server is replaced, one at a time: a new worker starts, then the old one drains and exits. How many requests fail?',
    measure: 'failed-requests',
    choices: [
      { label: 'none', to: 0.5 },
      { label: 'a few (1 to 10)', from: 0.5, to: 10.5 },
      { label: 'many (more than 10)', from: 10.5 },
    ],
    explain:
      'The new worker listens before the old one stops accepting, and the old one finishes its requests and tells keep-alive clients to reconnect (Connection: close), so no request meets a closed door.',
    lesson: WHERE,
  },
  {
    id: 'during',
    ask: 'While the workers are being replaced, does the server keep answering?',
    measure: 'requests-during-restart',
    choices: [
      { label: 'no: it pauses until the restart is over', to: 0.5 },
      { label: 'yes: requests are answered throughout', from: 0.5 },
    ],
    explain:
      'At every moment at least all but one worker are serving; the one being replaced hands over to its successor first.',
    lesson: WHERE,
  },
];
