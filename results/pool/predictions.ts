/** The pool experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, ratio, type Measure } from '../report/measures.ts';
import { WAITED_SHARE, type PoolResult } from './report.ts';
import { SHARE_OF_HEAVY, type Question } from '../report/predictions.ts';
import { FLAT_FACTOR, GROWS_FACTOR, scalingRatios } from '../report/scaling.ts';

/** Per pool size, the small pooled task's and /books' time as a share of a heavy check's; the sweep's two ratios. */
export function measures(r: PoolResult): Measure[] {
  const out: Measure[] = [];
  for (const w of r.waits) {
    const at = `pool-${w.threads}-threads`;
    out.push(
      ...measure(
        `${at}-verify-light-share`,
        `${w.threads} pool threads, 4 busy: the small pooled task's time as a share of a heavy check's`,
        '×',
        ratio(w.lightMs, r.heavyReferenceMs),
        { line: `${at}  verify-light`, threshold: WAITED_SHARE },
      ),
    );
    out.push(
      ...measure(
        `${at}-books-share`,
        `${w.threads} pool threads, 4 busy: /books' time as a share of a heavy check's`,
        '×',
        ratio(w.booksMs, r.heavyReferenceMs),
        { line: `${at}  books`, threshold: WAITED_SHARE },
      ),
    );
  }
  const { growth, plateau } = scalingRatios(
    r.sweep.steps.map((s) => ({ n: s.connections, throughput: s.throughput })),
    r.machine.cores,
  );
  out.push(
    ...measure('throughput-up-to-core-count', 'pooled throughput at the core count over 1 connection', '×', growth, {
      line: 'throughput  up-to-core-count',
      threshold: GROWS_FACTOR,
    }),
  );
  out.push(
    ...measure(
      'throughput-past-core-count',
      'pooled throughput past the core count over at it (the most)',
      '×',
      plateau,
      { line: 'throughput  past-core-count', threshold: FLAT_FACTOR },
    ),
  );
  return out;
}

const WHERE = 'lessons/03-runtime.md, Experiment 2';

export const predictions: Question[] = [
  {
    id: 'small-task-full-pool',
    ask: "Four heavy scrypt checks keep libuv's default 4 pool threads busy. A small pooled task (a cheap scrypt) arrives: how much of a heavy check's time does it take?",
    measure: 'pool-4-threads-verify-light-share',
    choices: SHARE_OF_HEAVY,
    explain:
      "All four threads are taken, so the small task sits in the pool's queue until a heavy check ends, however cheap it is.",
    lesson: `${WHERE} (a)`,
  },
  {
    id: 'books-full-pool',
    ask: "At the same moment, /books (no pool work at all): how much of a heavy check's time does it take?",
    measure: 'pool-4-threads-books-share',
    choices: SHARE_OF_HEAVY,
    explain: 'The event loop is free: work that never touches the pool does not wait for it.',
    lesson: `${WHERE} (a)`,
  },
  {
    id: 'past-core-count',
    ask: "Pooled scrypt throughput, with enough pool threads: from the core count's number of connections to twice it, how much more?",
    measure: 'throughput-past-core-count',
    choices: [
      { label: 'about none (under 1.25×)', to: 1.25 },
      { label: 'some (1.25× to 1.8×)', from: 1.25, to: 1.8 },
      { label: 'about double (1.8× or more)', from: 1.8 },
    ],
    explain:
      'scrypt computes on its thread the whole time: past one busy thread per core, more threads only share the same cores, and requests queue.',
    lesson: `${WHERE} (b) and "Why"`,
  },
];
