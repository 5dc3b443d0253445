/**
 * Result, table and shape of the `pool` experiment (lesson 3): (a) with 4 heavy pooled scrypts in
 * flight, does a small pooled task wait for a thread, with 4 threads and with 8? (b) how pooled
 * throughput grows with connections, up to and past the core count. Pure functions only.
 */
import { fmtMs, fmtRate, machineCaption, makeChalk, makeTable, type MachineInfo } from '../report/format.ts';
import { CANNOT_SHOW, line } from '../report/shape.ts';
import {
  growthVerdict as scalingGrowth,
  plateauVerdict as scalingPlateau,
  type ScalingPoint,
} from '../report/scaling.ts';

export interface PoolWaitBlock {
  /** UV_THREADPOOL_SIZE the server was started with. */
  threads: number;
  /** Heavy pooled requests in flight when the light ones were sent. */
  heavyInFlight: number;
  /** /member/verify-light (small pooled scrypt), ms. */
  lightMs: number;
  /** /books (event loop only) with the pool full, ms: the median of 3 in a row. */
  booksMs: number;
  /** Durations of the heavy requests, ms; empty when they were abandoned once the light ones answered. */
  heavyMs: number[];
  /** The same two requests sent together with nothing else running (median of three), ms: the yardsticks for "at once". */
  idleLightMs: number;
  idleBooksMs: number;
}

export interface SweepStep {
  connections: number;
  /** Completed requests per second. */
  throughput: number;
  p50: number;
  p95: number;
  p99: number;
  completed: number;
  errors: number;
  /** CPU of the load generator, as a fraction of one core. */
  generatorCpu: number;
}

export interface PoolResult {
  machine: MachineInfo;
  heavyCost: string;
  /** The heavy request's duration with the pool full: the yardstick for "waited", ms. */
  heavyReferenceMs: number;
  waits: PoolWaitBlock[];
  sweep: { cost: string; threadPoolSize: number; stepS: number; steps: SweepStep[] };
}

/**
 * "Waited" when at least this share of a heavy request's time with the pool full: a task that
 * waits for a thread takes about all of it.
 */
export const WAITED_SHARE = 0.5;
/**
 * "At once" when within this factor of the same request's time with nothing else running: an
 * order of magnitude. One that gets a thread at once still shares the cores with the four heavy
 * threads (five runnable threads on two cores), so it takes a few times its idle time, not
 * hundreds of times.
 */
const AT_ONCE_FACTOR = 10;
function classifyWait(ms: number, referenceMs: number, idleMs: number, waited: string, atOnce: string): string {
  if (ms >= WAITED_SHARE * referenceMs) return waited;
  if (ms <= AT_ONCE_FACTOR * idleMs) return atOnce;
  return 'in-between';
}

const asPoints = (r: PoolResult): ScalingPoint[] =>
  r.sweep.steps.map((s) => ({ n: s.connections, throughput: s.throughput }));

/** 'grows' | 'does-not-grow' | CANNOT_SHOW (one core: nothing between 1 connection and the core count). */
export function growthVerdict(r: PoolResult): string {
  return scalingGrowth(asPoints(r), r.machine.cores);
}

/** 'flat' | 'keeps-growing' | CANNOT_SHOW (no step past the core count). */
export function plateauVerdict(r: PoolResult): string {
  return scalingPlateau(asPoints(r), r.machine.cores);
}

export function shape(r: PoolResult): string[] {
  const out: string[] = [];
  for (const w of r.waits) {
    out.push(
      line(
        `pool-${w.threads}-threads`,
        'verify-light',
        classifyWait(w.lightMs, r.heavyReferenceMs, w.idleLightMs, 'waited-for-a-pool-thread', 'got-a-thread-at-once'),
      ),
    );
    out.push(
      line(
        `pool-${w.threads}-threads`,
        'books',
        classifyWait(w.booksMs, r.heavyReferenceMs, w.idleBooksMs, 'waited', 'answered-at-once'),
      ),
    );
  }
  out.push(line('throughput', 'up-to-core-count', growthVerdict(r)));
  out.push(line('throughput', 'past-core-count', plateauVerdict(r)));
  return out;
}

export function notShown(r: PoolResult): string[] {
  const out: string[] = [];
  if (growthVerdict(r) === CANNOT_SHOW) {
    out.push(
      `this machine has ${r.machine.cores} core(s), so throughput cannot grow between 1 connection and the core count; run it on a machine with 2 or more cores to see it.`,
    );
  }
  if (plateauVerdict(r) === CANNOT_SHOW)
    out.push(
      `the sweep had no step past this machine's ${r.machine.cores} cores, so it cannot show where throughput stops growing.`,
    );
  return out;
}

export function caveats(r: PoolResult): string[] {
  const out: string[] = [];
  const busy = r.sweep.steps.filter((s) => s.generatorCpu > 0.5);
  if (busy.length) {
    out.push(
      `the load generator itself used more than half a core at ${busy.map((s) => s.connections).join(', ')} connection(s): it competed with the server for the cores.`,
    );
  }
  return out;
}

export const hints: Record<string, string> = {
  'pool-4-threads  verify-light':
    'the small pooled task should queue behind the 4 heavy ones when the pool has 4 threads; did the server start with UV_THREADPOOL_SIZE=4?',
  'pool-8-threads  verify-light':
    'with 8 threads 4 are free and the small task gets one at once; a long wait means it queued: did the server start with UV_THREADPOOL_SIZE=8?',
  'pool-4-threads  books': '/books never touches the pool; a slow /books means the event loop itself was blocked',
  'pool-8-threads  books': '/books never touches the pool; a slow /books means the event loop itself was blocked',
  'throughput  up-to-core-count':
    'pooled scrypt should use one core per connection up to the core count; was UV_THREADPOOL_SIZE at least the core count, or was the load generator the bottleneck (see the notes)?',
  'throughput  past-core-count':
    'past the core count the threads share the cores, so throughput should stop growing; growth there means this machine has more cores than os.availableParallelism() reported',
};

export function render(r: PoolResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const wait = makeTable(
    [
      'UV_THREADPOOL_SIZE',
      'heavy in flight',
      '/member/verify-light\n(small pooled scrypt)',
      'idle',
      '/books\n(event loop only)',
      'idle',
      'heavy requests took',
    ],
    ['right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  for (const w of r.waits) {
    const lightV = classifyWait(w.lightMs, r.heavyReferenceMs, w.idleLightMs, 'w', 'a');
    const light =
      lightV === 'w'
        ? c.red(`${fmtMs(w.lightMs)}  waited for a thread`)
        : lightV === 'a'
          ? c.green(fmtMs(w.lightMs))
          : fmtMs(w.lightMs);
    const heavy = w.heavyMs.length
      ? w.heavyMs.map((m) => fmtMs(m)).join(', ')
      : c.dim('(stopped once the light ones answered)');
    wait.push([
      String(w.threads),
      String(w.heavyInFlight),
      light,
      c.dim(fmtMs(w.idleLightMs)),
      fmtMs(w.booksMs),
      c.dim(fmtMs(w.idleBooksMs)),
      heavy,
    ]);
  }
  const sweep = makeTable(
    ['connections', 'throughput', 'p50', 'p95', 'p99', 'requests', 'errors'],
    ['right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  for (const s of r.sweep.steps) {
    const mark = s.connections === r.machine.cores ? c.bold(' ← core count') : '';
    sweep.push([
      `${s.connections}${mark}`,
      fmtRate(s.throughput),
      fmtMs(s.p50),
      fmtMs(s.p95),
      fmtMs(s.p99),
      String(s.completed),
      String(s.errors),
    ]);
  }
  return [
    c.bold('Lesson 3 · pool (a): 4 heavy scrypts on the thread pool, then one small pooled task and one /books'),
    c.dim(`heavy cost ${r.heavyCost} · ${caption}`),
    wait.toString(),
    `A request ${c.red('waited for a thread')} when it took at least half of a heavy request's time with the pool full ` +
      `(${fmtMs(r.heavyReferenceMs)}); at once means within ${AT_ONCE_FACTOR}× its own time with nothing else running (the idle columns).`,
    '',
    c.bold(
      `Lesson 3 · pool (b): throughput of /member/verify-pooled by connections (${r.sweep.stepS} s each, the steps taking turns in 1 s slices)`,
    ),
    c.dim(`cost ${r.sweep.cost}, UV_THREADPOOL_SIZE=${r.sweep.threadPoolSize} so only the cores limit it · ${caption}`),
    sweep.toString(),
  ].join('\n');
}
