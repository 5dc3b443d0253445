/**
 * Ways a request holds its thread: CPU-bound work measured in CPU time (the replica's and the
 * cluster's /work), a busy wait in wall time (/slow-sync), and a block that uses no CPU (/stall).
 */
import { performance } from 'node:perf_hooks';

/**
 * Uses `ms` of this process's CPU time (not wall time), so the cost of a request stays the same
 * when replicas outnumber the cores and take turns on them. A wall-clock busy loop would not: a
 * preempted loop still ends after `ms`, and measured here five replicas on two cores then did 30 %
 * more "CPU-bound" requests than two.
 */
export function burnCpu(ms: number): number {
  const start = process.cpuUsage();
  const budgetUs = ms * 1000;
  let x = 0;
  for (;;) {
    for (let i = 0; i < 2000; i++) x = (x * 1103515245 + 12345) % 2147483648;
    const used = process.cpuUsage(start);
    if (used.user + used.system >= budgetUs) break;
  }
  return x; // the loop's result, returned so the arithmetic is not dead code
}

/** Keeps this thread busy for `ms`: the event loop runs nothing else meanwhile. */
export function busyWait(ms: number): number {
  const until = performance.now() + ms;
  let spins = 0;
  while (performance.now() < until) spins++;
  return spins;
}

/**
 * Blocks this thread for `ms` without using CPU (Atomics.wait on a buffer nobody notifies): the
 * event loop runs nothing meanwhile, as in a synchronous call that waits on a slow disk.
 */
export function sleepBlocking(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
