/**
 * Lesson 1's cross-check of the load generator: the same closed loop (the I/O-bound route, the
 * same connections, the same time) sent by autocannon and by wrk, an independent generator in C.
 * Their req/s and p50 side by side say whether the numbers are the server's or the generator's;
 * their CPU says which one ran out first. Pure.
 */
import { fmtMs, fmtRate, makeChalk, makeTable } from '../report/format.ts';

/** One generator's figures: req/s, p50 (ms) and its CPU, in cores. */
interface GeneratorRun {
  requestsPerS: number;
  p50Ms: number;
  generatorCpu: number;
}

export interface CrossCheck {
  route: string;
  connections: number;
  durationS: number;
  autocannon: GeneratorRun;
  /** wrk's figures, or why there are none (not installed: how to install it; failed: its last line). */
  wrk: GeneratorRun | { missing: string } | { failed: string };
}

/**
 * A one-thread generator has run out of CPU at this many cores of it (one core, less its waits
 * for the network): the same mark as the sweep's generator CPU column.
 */
export const OUT_OF_CPU = 0.9;

/** Two generators agree when their req/s are within this share of the higher one. */
const AGREE = 0.2;

/** Which generator ran out of CPU first, in words, and whether the two agree. */
function verdict(a: GeneratorRun, w: GeneratorRun): string {
  const aOut = a.generatorCpu >= OUT_OF_CPU;
  const wOut = w.generatorCpu >= OUT_OF_CPU;
  const apart = Math.abs(a.requestsPerS - w.requestsPerS) / Math.max(a.requestsPerS, w.requestsPerS, 1);
  if (apart > AGREE && !aOut && !wOut)
    return `The two disagree by ${Math.round(apart * 100)} % though neither ran out of CPU: run it again on a quieter machine before trusting either.`;
  if (aOut && !wOut)
    return `autocannon ran out of CPU first (${a.generatorCpu.toFixed(2)} cores against wrk's ${w.generatorCpu.toFixed(2)}): past this point its req/s is its own ceiling, not the server's.`;
  if (wOut && !aOut)
    return `wrk ran out of CPU first (${w.generatorCpu.toFixed(2)} cores against autocannon's ${a.generatorCpu.toFixed(2)}).`;
  if (aOut && wOut) return 'Both generators ran out of CPU: the server may have more to give than either measured.';
  return 'Neither generator ran out of CPU: the server set the ceiling for both.';
}

/** The cross-check's table and its verdict, or the line that says why wrk did not run. */
export function renderCrossCheck(x: CrossCheck, color: boolean): string[] {
  const c = makeChalk(color);
  const head = c.bold(`cross-check: GET ${x.route}, ${x.connections} connections, ${x.durationS} s, two generators`);
  if ('missing' in x.wrk || 'failed' in x.wrk)
    return ['', head, `  ${'missing' in x.wrk ? x.wrk.missing : `wrk did not run: ${x.wrk.failed}`}`];
  const table = makeTable(['generator', 'req/s', 'p50', 'generator CPU'], ['left', 'right', 'right', 'right']);
  for (const [name, g] of [
    ['autocannon (Node, one thread)', x.autocannon],
    ['wrk (C, one thread)', x.wrk],
  ] as const) {
    const cpu = g.generatorCpu.toFixed(2);
    table.push([name, fmtRate(g.requestsPerS), fmtMs(g.p50Ms), g.generatorCpu >= OUT_OF_CPU ? c.yellow(cpu) : cpu]);
  }
  return ['', head, table.toString(), `  ${verdict(x.autocannon, x.wrk)}`];
}
