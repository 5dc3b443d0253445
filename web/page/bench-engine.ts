/**
 * The simulator's speed in the browser: sim/workloads.ts run with simulate(), timed with the
 * page's clock. web/bench.ts bundles this file, loads it into headless Chromium and calls
 * `kitBenchEngine(n)`. Simulated requests per second of wall time, as sim/bench.ts prints in Node.
 */
import { simulate } from '../../sim/engine.ts';
import { workloads } from '../../sim/workloads.ts';

export interface EngineSpeed {
  name: string;
  requests: number;
  wallMs: number;
  /** Simulated requests per second of wall time. */
  perS: number;
}

function benchEngine(n: number): EngineSpeed[] {
  return workloads(n).map((w) => {
    const began = performance.now();
    const r = simulate(w.config);
    const wallMs = performance.now() - began;
    return { name: w.name, requests: r.counts.sent, wallMs, perS: (r.counts.sent * 1000) / wallMs };
  });
}

(globalThis as { kitBenchEngine?: typeof benchEngine }).kitBenchEngine = benchEngine;
