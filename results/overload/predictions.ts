/** The overload experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import type { OverloadPass, OverloadResult, SpikeClients } from './report.ts';

const at = (r: OverloadResult, kind: OverloadPass['kind'], multiple: number) =>
  r.passes.find((p) => p.kind === kind && p.multiple === multiple);
const spike = (r: OverloadResult, c: SpikeClients) => r.spikes.find((s) => s.clients === c);

/** Capacity; at 2× (or the highest multiple): the p99's growth, goodput with and without a shedder; the spike's figures. */
export function measures(r: OverloadResult): Measure[] {
  const top = Math.max(...r.passes.map((p) => p.multiple), 0);
  const q = at(r, 'queue', top);
  const t = at(r, 'timeout', top);
  const s = at(r, 'shed', top);
  const retrying = spike(r, 'retries');
  return [
    ...measure('capacity', 'the service’s capacity, measured by a closed loop', 'req/s', r.capacity),
    ...measure(
      'p99-growth',
      `${top}× capacity with no timeout: the last quarter’s p99 over the first’s`,
      '×',
      ratio(q?.quarterP99Ms[3], q?.quarterP99Ms[0]),
      { line: 'overload  queue  above-capacity  p99' },
    ),
    ...measure(
      'goodput-with-timeouts',
      `${top}× capacity, users who give up: goodput in the second half, as a share of capacity`,
      '%',
      t && (100 * t.goodputLateHalf) / t.capacity,
      { line: 'overload  timeouts  above-capacity  goodput', threshold: 30 },
    ),
    ...measure(
      'goodput-with-shedding',
      `${top}× capacity, the shedder on: goodput in the second half, as a share of capacity`,
      '%',
      s && (100 * s.goodputLateHalf) / s.capacity,
      { line: 'overload  shedding  above-capacity  goodput', threshold: 60 },
    ),
    ...measure(
      'wasted-share',
      `${top}× capacity, users who give up: the worker’s finished requests whose user had gone`,
      '%',
      t && t.finished ? (100 * t.wasted) / t.finished : undefined,
      { line: 'overload  timeouts  above-capacity  work-for-users-gone', threshold: 20 },
    ),
    ...measure(
      'attempts-per-user-after-spike',
      'users who retry: attempts sent after the spike, per user due after it',
      '×',
      retrying?.attemptsPerUserAfter,
      { line: 'overload  retries  after-spike  offered-load', threshold: 1.5 },
    ),
    ...measure(
      'recovery-without-retries',
      'users who do not retry: from the spike’s end until they are served again',
      'ms',
      spike(r, 'no-retries')?.recoveredAfterMs ?? undefined,
      { line: 'overload  no-retries  after-spike' },
    ),
  ];
}

const WHERE = (section: string) => `lessons/11-overload.md, "${section}"`;

export const predictions: Question[] = [
  {
    id: 'p99-growth',
    ask: 'Users arrive at twice what one worker can serve, and wait as long as it takes. Compare the p99 of the users who came in the run’s last quarter with those of its first quarter.',
    measure: 'p99-growth',
    choices: [
      { label: 'about the same: the service time sets it', to: 1.5 },
      { label: 'up to twice as long', from: 1.5, to: 2 },
      { label: 'several times as long: it grows with the run', from: 2 },
    ],
    explain:
      'Each second past capacity adds a second’s worth of requests to the line, and a user waits for everyone ahead: the longer the overload has lasted, the longer the wait.',
    lesson: WHERE('The queue grows with the run'),
  },
  {
    id: 'goodput-with-timeouts',
    ask: 'Now users give up after 500 ms. At twice the capacity, what share of the capacity is answered in time in the second half of the run?',
    measure: 'goodput-with-timeouts',
    choices: [
      { label: 'about 100 %: the worker is busy all the time', from: 75 },
      { label: 'about half', from: 25, to: 75 },
      { label: 'almost none', to: 25 },
    ],
    explain:
      'The worker is busy, but on requests whose users have gone: once the line is longer than 500 ms of work, everyone it serves has already given up.',
    lesson: WHERE('Timeouts: busy for nobody'),
  },
  {
    id: 'attempts-per-user-after-spike',
    ask: 'A short spike past capacity ends; users come at half the capacity again, and each retries twice at once when an attempt times out. How many attempts does each user send after the spike?',
    measure: 'attempts-per-user-after-spike',
    choices: [
      { label: 'about 1: the spike is over', to: 1.5 },
      { label: 'about 2', from: 1.5, to: 2.5 },
      { label: 'about 3: every attempt still times out', from: 2.5 },
    ],
    explain:
      'The line the spike left is longer than the timeout, so every attempt times out and is sent again: half the capacity offered three times over is more than the worker can serve, and the line never drains.',
    lesson: WHERE('Retries keep it down'),
  },
];
