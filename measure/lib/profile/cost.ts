/**
 * What the CPU profiler costs a server on this machine, measured after a --profile run so that the
 * profile can be read with its price: two replicas, one under `--cpu-prof` and one not, each loaded
 * with /fast for LOAD_S at a time, in PAIRS pairs whose order alternates (the first load of a pair
 * runs on a slightly warmer machine, so each replica goes first in half the pairs). The pairs run
 * one after another, never side by side: they share the machine's cores.
 */
import type { Lab } from '../process/lab.ts';
import type { Progress } from '../harness/progress.ts';
import { runLoad } from '../load/load.ts';
import { startReplicas } from '../process/topology.ts';

/** Pairs of loads, one with the profiler and one without; an even number, so each goes first as often. */
const PAIRS = 4;
/** Each load's length, s, after a warm-up of the same length for each replica. */
const LOAD_S = 1.5;
/** Connections of each load: two, one per core of the reference machine. */
const CONNECTIONS = 2;

/** Throughput with the profiler over throughput without: the median of the pairs, and their range. */
interface ProfilingCost {
  ratio: number;
  low: number;
  high: number;
  pairs: number;
}

/** Measures ProfilingCost with two replicas started in `lab` (stopped before it returns). */
export async function profilingCost(lab: Lab, progress: Progress): Promise<ProfilingCost> {
  progress.step('what profiling costs: starting a replica with the profiler and one without');
  const [plain] = await startReplicas(lab, 1);
  const profiled = await lab.start({
    server: 'replica',
    args: ['--name', 'app2', '--port', '0'],
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${lab.tempDir('profiling-cost')}`],
  });
  const load = async (url: string, durationS = LOAD_S) =>
    (await runLoad({ url: `${url}/fast`, connections: CONNECTIONS, durationS })).throughput;
  await load(plain!.url);
  await load(profiled.url);
  const ratios: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    progress.step(`what profiling costs: pair ${i + 1} of ${PAIRS}, /fast with and without the profiler`);
    const withFirst = i % 2 === 0;
    const a = await load(withFirst ? profiled.url : plain!.url);
    const b = await load(withFirst ? plain!.url : profiled.url);
    ratios.push(withFirst ? a / b : b / a);
  }
  await lab.stop(profiled);
  await lab.stop(plain!.proc);
  ratios.sort((x, y) => x - y);
  return {
    ratio: (ratios[PAIRS / 2 - 1]! + ratios[PAIRS / 2]!) / 2,
    low: ratios[0]!,
    high: ratios.at(-1)!,
    pairs: PAIRS,
  };
}

/** The cost for people: `/fast` throughput with the profiler as a share of without. */
export function costSentence(c: ProfilingCost): string {
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  return (
    `what profiling cost here: a replica under the profiler served ${pct(c.ratio)} of the /fast requests it served ` +
    `without (median of ${c.pairs} pairs, ${pct(c.low)} to ${pct(c.high)})`
  );
}
