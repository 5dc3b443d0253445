/** Lesson 3's exercises that a run can check (measure/lib/class/exercises.ts). */
import type { ClusterResult } from '../../../../results/cluster/report.ts';
import type { ExerciseCheck } from '../exercises.ts';

export const LESSON_3: readonly ExerciseCheck[] = [
  {
    lesson: 3,
    n: 2,
    title: 'Workers',
    runs: [{ script: 'measure/cluster.ts', args: ['--workers', '4'] }],
    quickOk: true,
    expect:
      'no line changes with 4 workers: 4 loans land on every worker, each counts only its own, and one kept-alive connection stays on one worker',
    check: ([result]) => {
      const r = result as ClusterResult;
      const fresh = Object.values(r.fresh.byPid);
      const counters = Object.values(r.counters.byPid);
      const highest = counters.length ? Math.max(...counters) : 0;
      const keptOn = Object.keys(r.keepAlive.byPid).length;
      return {
        held:
          r.workers === 4 &&
          fresh.length === 4 &&
          fresh.every((x) => x === 4) &&
          highest < r.counters.total &&
          keptOn === 1,
        saw: [
          `${r.workers} workers; ${r.fresh.requests} loans on fresh connections landed ${fresh.join('/')}`,
          `the highest worker counter held ${highest} of ${r.counters.total} loans`,
          `${r.keepAlive.requests} requests on one kept-alive connection reached ${keptOn} worker${keptOn === 1 ? '' : 's'}`,
        ],
      };
    },
  },
];
