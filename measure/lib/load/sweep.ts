/** Connection counts for a throughput sweep. */

/**
 * 1, 2, the core count and twice it (at most 64), sorted: the knee at the core count is always
 * inside the sweep, with a step past it (on 2 cores: 1, 2, 4; a step at 8 added 2 s and no finding).
 */
export function sweepConnections(cores: number): number[] {
  return [...new Set([1, 2, cores, 2 * cores])].filter((c) => c <= 64).sort((a, b) => a - b);
}
