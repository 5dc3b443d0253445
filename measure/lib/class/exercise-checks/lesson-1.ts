/** Lesson 1's exercises that a run can check (measure/lib/class/exercises.ts). */
import { NEAR_IDEAL, type CeilingResult } from '../../../../results/ceiling/report.ts';
import { fmtMs, fmtRate } from '../../../../results/report/format.ts';
import type { ExerciseCheck } from '../exercises.ts';

/** Exercise 1 reads the CPU-bound route at this many connections: the process is never idle there. */
const BUSY_CONNECTIONS = 4;

export const LESSON_1: readonly ExerciseCheck[] = [
  {
    lesson: 1,
    n: 1,
    title: 'Where is 200?',
    runs: [{ script: 'measure/ceiling.ts', args: [] }],
    quickOk: true,
    expect: `at ${BUSY_CONNECTIONS} connections /work?ms=5 answers fewer than 200 req/s, so each request costs some CPU beyond its 5 ms, but less than the 5 ms themselves`,
    check: ([result]) => {
      const r = result as CeilingResult;
      const steps = r.routes.find((x) => x.name === 'cpu-bound')?.steps ?? [];
      const at = (n: number) => steps.find((s) => s.connections === n);
      const busy = at(BUSY_CONNECTIONS);
      const one = at(1);
      const beyond = (rate: number) => 1000 / rate - r.ms;
      // Beyond 0: the HTTP work around the route costs CPU too. Below the shape's own "near
      // 1000/ms" floor (NEAR_IDEAL): past it, something else took the core, not the request.
      const held =
        busy !== undefined &&
        busy.throughput > 0 &&
        beyond(busy.throughput) > 0 &&
        busy.throughput >= NEAR_IDEAL[0] * (1000 / r.ms);
      return {
        held,
        saw: [
          busy
            ? `${BUSY_CONNECTIONS} connections: ${fmtRate(busy.throughput)}, so 1000 / req/s − ${r.ms} = ${fmtMs(beyond(busy.throughput))} beyond each request's ${r.ms} ms`
            : `no step of ${BUSY_CONNECTIONS} connections on the CPU-bound route`,
          ...(one
            ? [
                `1 connection: ${fmtRate(one.throughput)}, the same sum ${fmtMs(beyond(one.throughput))}: it also counts the moments the process waited for the next request`,
              ]
            : []),
        ],
      };
    },
  },
];
