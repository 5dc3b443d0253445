/**
 * The incident experiment's measures and --predict questions (results/report/measures.ts,
 * predictions.ts). Each question asks what a healthy service does; when this run answers
 * otherwise, that is where the incident is. Pure.
 */
import { measure, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import type { IncidentResult } from './result.ts';

/** The profiler's reading of the calmer paced phase; the heap kept over the new pages; when the server closed an idle connection. */
export function measures(r: IncidentResult): Measure[] {
  const calmer = r.books.utilization <= r.search.utilization ? 'books' : 'search';
  return [
    ...measure(
      'utilization-under-profiler',
      `event-loop utilization of the calmer paced phase (${calmer}) under the CPU profiler`,
      '%',
      r.underProfiler[calmer] * 100,
    ),
    ...measure(
      'heap-kept',
      'heap kept after the pages with a new session id each, less the heap before them',
      'MB',
      r.pages.heapAfterMb - r.pages.heapBeforeMb,
      { line: 'incident  heap-under-new-pages' },
    ),
    ...measure(
      'idle-close-s',
      'when the server closed a kept-alive connection left idle (the wait, 4.5 s, when it did not)',
      's',
      (r.idleClose.closedAfterMs ?? r.idleClose.waitedMs) / 1000,
      { line: 'incident  idle-close' },
    ),
  ];
}

const PROFILER = 'lessons/10-diagnosis.md, Measure first, then profile';
const TABLE = 'lessons/10-diagnosis.md, The decision table';

export const predictions: Question[] = [
  {
    id: 'profiler-utilization',
    ask: "Without the profiler, the calmer of the two paced phases keeps the event loop a few % busy. Run again under V8's CPU profiler, how busy does the same phase read?",
    measure: 'utilization-under-profiler',
    choices: [
      { label: 'about the same (under 30 %)', to: 30 },
      { label: 'much busier (30 % or more)', from: 30 },
    ],
    explain:
      "The profiler interrupts the process about every millisecond to take a sample, and the loop's idle time is no longer counted as idle: utilization read under a profiler is not the service's.",
    lesson: PROFILER,
  },
  {
    id: 'heap-kept',
    ask: 'A healthy service answers pages of /books, each with a new session id. After a full garbage collection, how much more heap does it keep than before?',
    measure: 'heap-kept',
    choices: [
      { label: 'almost none (under 15 MB)', to: 15 },
      { label: '15 MB or more', from: 15 },
    ],
    explain:
      'Once a page is sent nothing refers to it, and a full collection frees it. A service that keeps more is keeping every page somewhere: if this run kept more, that is the incident.',
    lesson: TABLE,
  },
  {
    id: 'idle-close',
    ask: "A healthy service keeps Node's default keepAliveTimeout (5 s); the balancer reuses an idle connection for 4 s. When does the service close a kept-alive connection left idle?",
    measure: 'idle-close-s',
    choices: [
      { label: 'before 4 s, while the balancer may still use it', to: 4 },
      { label: 'not before 4 s: the balancer closes it first', from: 4 },
    ],
    explain:
      'The side that closes an idle connection first must be the one that sends on it, the balancer; if this run closed it sooner, that is the incident.',
    lesson: TABLE,
  },
];
