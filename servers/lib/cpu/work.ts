/** CPU-bound work measured in CPU time, shared by the replica's /work and the cluster's /work. */

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
