/** The degraded experiment's parameters, apart from its renderer: data only, so the Traffic Lab page can import them too. */
/**
 * The experiment's parameters, one spec for the lab run (measure/lib/load/degraded-run.ts), sim-vs-lab
 * and the simulated scenario (sim/scenarios/degraded.ts).
 */
export const DEGRADED_SPEC = {
  replicas: 3,
  /** /fast through the balancer. */
  connections: 6,
  /** The hog: this many connections of requests of `hogMs` straight to the last replica. */
  hogConnections: 3,
  hogMs: 30,
  /** Interleaved rounds; each gives every policy one slice: `settleS` unmeasured, then `sliceS` measured. */
  rounds: { quick: 4, full: 6 },
  settleS: 0.3,
  /**
   * A blind policy's connection alternates a few fast requests with one on the blocked replica, and
   * through nginx that one lasted about 500 ms. With 0.5 s slices each connection then finished
   * about one such cycle per slice, and random's number of fast requests between two slow ones
   * varies (geometric, mean 2): in 1 of 12 quick runs through nginx more than half of random's
   * answers were slow and its p50 was 94 ms. 1 s slices double the cycles per run.
   */
  sliceS: { quick: 1, full: 1 },
  /** Load through a balancer to the healthy replicas before the first round, s. */
  warmupS: 3,
} as const;
