/**
 * The degraded experiment's interleaved rounds (degraded-run.ts): slots (a policy, or the path),
 * each measured once per round in an order that rotates, and kept only from rounds during which the
 * machine was steady. Each slice settles for SETTLE_S, then measures /fast with CONNECTIONS
 * connections; a slot adds up its kept slices.
 */
import { createLatencyHistogram } from '../../../results/report/latency.ts';
import { addSlice, newLoadTally, sliceOf, type LoadTally } from '../machine/tally.ts';
import { runLoad } from './load.ts';
import type { Progress } from '../harness/progress.ts';
import { measureSteadily } from '../machine/steady.ts';
import { servedByReplica, type Replica } from '../process/topology.ts';
import { DEGRADED_SPEC } from '../../../results/degraded/report.ts';

const { connections: CONNECTIONS, settleS: SETTLE_S } = DEGRADED_SPEC;

/** What one slice measured, and (summed over the kept rounds) a slot's tally; with the requests each replica served. */
interface SlicePart extends LoadTally {
  perReplica: Record<string, number>;
}

/** One thing measured in every round: a policy, or the path. */
export interface Slot extends SlicePart {
  name: string;
  /** The balancer the slice's load goes to. */
  url: () => string;
  /** Before each slice (switch the policy, take app3 out). */
  enter: () => Promise<void>;
  /** After each slice. */
  leave: () => Promise<void>;
}

/** A slot named `name` with an empty tally for `replicas`; `enter` and `leave` run before and after each of its slices. */
export function newSlot(
  name: string,
  replicas: Replica[],
  url: () => string,
  enter = async () => {},
  leave = async () => {},
): Slot {
  return {
    name,
    url,
    enter,
    leave,
    ...newLoadTally(),
    perReplica: Object.fromEntries(replicas.map((r) => [r.name, 0])),
  };
}

/** The slots in round `k`'s order: the list rotated by k, so no policy always follows the same one. */
function roundOrder<T>(slots: readonly T[], k: number): T[] {
  const n = slots.length;
  return Array.from({ length: n }, (_, i) => slots[(i + k) % n]!);
}

/** One slice; added to its slot (addPart) once the round it belongs to is kept. */
async function measureSlice(slot: Slot, replicas: Replica[], durationS: number): Promise<SlicePart> {
  await slot.enter();
  const histogram = createLatencyHistogram();
  // Asked while the slice settles: the blocked replica answers its stats only between hog requests.
  const counted = servedByReplica(replicas, '/fast');
  const r = await runLoad({
    url: `${slot.url()}/fast`,
    connections: CONNECTIONS,
    durationS: SETTLE_S + durationS,
    settleS: SETTLE_S,
    settledInto: histogram,
  });
  const [before, after] = [await counted, await servedByReplica(replicas, '/fast')];
  await slot.leave();
  return {
    ...sliceOf(r, histogram),
    perReplica: Object.fromEntries(replicas.map((rep) => [rep.name, after[rep.name]! - before[rep.name]!])),
  };
}

function addPart(slot: Slot, part: SlicePart): void {
  addSlice(slot, part);
  for (const name of Object.keys(slot.perReplica)) slot.perReplica[name]! += part.perReplica[name] ?? 0;
}

/**
 * Every slot once per round, in the round's rotated order. A round during which other programs
 * or other virtual machines took CPU is taken again (measureSteadily): a steal of 0.55 cores over
 * a run lifted least connections' p95 to 24 ms here, within 10x of round robin's.
 */
export async function measureRounds(
  all: Slot[],
  replicas: Replica[],
  rounds: number,
  durationS: number,
  progress: Progress,
): Promise<void> {
  for (let k = 0; k < rounds; k++) {
    const { value } = await measureSteadily(
      `round ${k + 1} of ${rounds}`,
      async () => {
        const parts = new Map<Slot, SlicePart>();
        for (const slot of roundOrder(all, k)) {
          progress.step(
            `round ${k + 1} of ${rounds}: ${slot.name === 'path' ? 'the path to the healthy replicas' : slot.name}, /fast with ${CONNECTIONS} connections for ${durationS} s`,
          );
          parts.set(slot, await measureSlice(slot, replicas, durationS));
        }
        return parts;
      },
      { progress },
    );
    for (const [slot, part] of value) addPart(slot, part);
  }
}
