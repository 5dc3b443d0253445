/**
 * Result, table and shape of the `pool` experiment (lesson 3): (a) with 4 heavy pooled scrypts in
 * flight, does a small pooled task wait for a thread, with 4 threads and with 8? (b) how pooled
 * throughput grows with connections, up to and past the core count. Pure functions only.
 */
import { fmtMs, fmtRate, machineCaption, makeChalk, makeTable, type MachineInfo } from '../lib/output.ts';
import { CANNOT_SHOW, line } from '../lib/shape.ts';
import { growthVerdict as scalingGrowth, plateauVerdict as scalingPlateau, type ScalingPoint } from '../lib/scaling.ts';

export interface PoolWaitBlock {
  /** UV_THREADPOOL_SIZE the server was started with. */
  threads: number;
  /** Heavy pooled requests in flight when the light ones were sent. */
  heavyInFlight: number;
  /** /member/verify-light (small pooled scrypt), ms. */
  lightMs: number;
  /** /books (event loop only), ms. */
  booksMs: number;
  /** Durations of the heavy requests, ms; empty when they were abandoned once the light ones answered. */
  heavyMs: number[];
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
 * "Waited" when at least this share of the yardstick (a heavy request's time with the pool full);
 * "at once" when at most AT_ONCE_SHARE of it. A task that waits for a thread takes about the whole
 * yardstick. One that gets a thread at once still shares the cores with the four heavy threads
 * (five runnable threads on two cores), so its 3 ms of CPU take tens of ms of wall time on a busy
 * laptop: measured here 20-80 ms against a yardstick of 0.7-2.5 s, hence a quarter, not a tenth.
 */
export const WAITED_SHARE = 0.5;
export const AT_ONCE_SHARE = 0.25;
function classifyWait(ms: number, referenceMs: number, waited: string, atOnce: string): string {
  if (ms >= WAITED_SHARE * referenceMs) return waited;
  if (ms <= AT_ONCE_SHARE * referenceMs) return atOnce;
  return 'in-between';
}

const asPoints = (r: PoolResult): ScalingPoint[] => r.sweep.steps.map((s) => ({ n: s.connections, throughput: s.throughput }));

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
    out.push(line(`pool-${w.threads}-threads`, 'verify-light', classifyWait(w.lightMs, r.heavyReferenceMs, 'waited-for-a-pool-thread', 'got-a-thread-at-once')));
    out.push(line(`pool-${w.threads}-threads`, 'books', classifyWait(w.booksMs, r.heavyReferenceMs, 'waited', 'answered-at-once')));
  }
  out.push(line('throughput', 'up-to-core-count', growthVerdict(r)));
  out.push(line('throughput', 'past-core-count', plateauVerdict(r)));
  return out;
}

export function caveats(r: PoolResult): string[] {
  const out: string[] = [];
  if (growthVerdict(r) === CANNOT_SHOW) {
    out.push(`this machine has ${r.machine.cores} core(s), so throughput cannot grow between 1 connection and the core count; run it on a machine with 2 or more cores to see it.`);
  }
  const busy = r.sweep.steps.filter((s) => s.generatorCpu > 0.5);
  if (busy.length) {
    out.push(`the load generator itself used more than half a core at ${busy.map((s) => s.connections).join(', ')} connection(s): it competed with the server for the cores.`);
  }
  return out;
}

export const hints: Record<string, string> = {
  'pool-4-threads  verify-light':
    'the small pooled task should queue behind the 4 heavy ones when the pool has 4 threads; did the server start with UV_THREADPOOL_SIZE=4?',
  'pool-8-threads  verify-light':
    'with 8 threads 4 are free and the small task gets one at once, but it shares the cores with the heavy ones; ' +
    'if the machine was busy (see the caption) that sharing slows it down',
  'pool-4-threads  books': '/books never touches the pool; a slow /books means the event loop itself was blocked',
  'pool-8-threads  books': '/books never touches the pool; a slow /books means the event loop itself was blocked',
  'throughput  up-to-core-count':
    'pooled scrypt should use one core per connection up to the core count; is something else using the cores (load average), or was the load generator the bottleneck?',
  'throughput  past-core-count': 'past the core count the threads share the cores, so throughput should stop growing; are there more cores than the script thinks?',
};

export function render(r: PoolResult, color: boolean): string {
  const c = makeChalk(color);
  const wait = makeTable(['UV_THREADPOOL_SIZE', 'heavy in flight', '/member/verify-light\n(small pooled scrypt)', '/books\n(event loop only)', 'heavy requests took'], ['right', 'right', 'right', 'right', 'right']);
  for (const w of r.waits) {
    const lightV = classifyWait(w.lightMs, r.heavyReferenceMs, 'w', 'a');
    const light = lightV === 'w' ? c.red(`${fmtMs(w.lightMs)}  waited for a thread`) : lightV === 'a' ? c.green(fmtMs(w.lightMs)) : fmtMs(w.lightMs);
    const heavy = w.heavyMs.length ? w.heavyMs.map((m) => fmtMs(m)).join(', ') : c.dim('(stopped once the light ones answered)');
    wait.push([String(w.threads), String(w.heavyInFlight), light, fmtMs(w.booksMs), heavy]);
  }
  const sweep = makeTable(['connections', 'throughput', 'p50', 'p95', 'p99', 'requests', 'errors'], ['right', 'right', 'right', 'right', 'right', 'right', 'right']);
  for (const s of r.sweep.steps) {
    const mark = s.connections === r.machine.cores ? c.bold(' ← core count') : '';
    sweep.push([`${s.connections}${mark}`, fmtRate(s.throughput), fmtMs(s.p50), fmtMs(s.p95), fmtMs(s.p99), String(s.completed), String(s.errors)]);
  }
  return [
    c.bold('Lesson 3 · pool (a): 4 heavy scrypts on the thread pool, then one small pooled task and one /books'),
    c.dim(`heavy cost ${r.heavyCost} · ${machineCaption(r.machine)}`),
    wait.toString(),
    `A request ${c.red('waited for a thread')} when it took at least half of a heavy request's time with the pool full ` +
      `(${fmtMs(r.heavyReferenceMs)}); at once means under a quarter of it.`,
    '',
    c.bold(`Lesson 3 · pool (b): throughput of /member/verify-pooled by connections (${r.sweep.stepS} s each)`),
    c.dim(`cost ${r.sweep.cost}, UV_THREADPOOL_SIZE=${r.sweep.threadPoolSize} so only the cores limit it · ${machineCaption(r.machine)}`),
    sweep.toString(),
  ].join('\n');
}
