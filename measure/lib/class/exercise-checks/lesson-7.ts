/** Lesson 7's exercises that a run can check (measure/lib/class/exercises.ts). */
import { allowedVerdict, type RateLimitResult } from '../../../../results/rate-limit/report.ts';
import type { ExerciseCheck } from '../exercises.ts';

export const LESSON_7: readonly ExerciseCheck[] = [
  {
    lesson: 7,
    n: 1,
    title: 'Four workers, one limit',
    runs: [{ script: 'measure/rate-limit.ts', args: [] }],
    quickOk: true,
    expect:
      'with the count in memory each worker lets the limit through on its own: 4 workers allow 4 × the limit, so 8 would allow 8 ×',
    check: ([result]) => {
      const r = result as RateLimitResult;
      const memory = r.runs.find((x) => x.store === 'memory');
      const shared = r.runs.filter((x) => x.store !== 'memory');
      return {
        held: memory !== undefined && allowedVerdict(memory, r.limit, r.workers) === 'one-limit-per-worker',
        saw: [
          memory
            ? `memory: ${memory.allowed} of ${memory.attempts} attempts allowed (${Object.values(memory.allowedByWorker).join(' + ')} on ${r.workers} workers), limit ${r.limit}: with 8 workers, up to ${8 * r.limit}`
            : 'no memory run in the result',
          ...shared.map((x) => `${x.store}: ${x.allowed} allowed, whichever worker answered`),
        ],
      };
    },
  },
];
