/**
 * The balancer's choice of a replica for one try, around the policy's picker: which replicas are
 * open (not down by hand, not resting after failures, not already tried by this request), the
 * "quick recovery" when every replica rests, and whether the try is a health probe. The kit's
 * balancer (servers/balancer.ts) and the simulator (sim/) both call these, so the simulated
 * balancer decides exactly as the real one. Pure: no Node.js APIs, the clock is passed in.
 */
import { admission, resetHealth, startProbe, type HealthRules, type HealthState } from './failover.ts';
import type { Picker, ReplicaLoad, Rng } from './policies.ts';

/** One upstream as the choice sees it; `available` is written by markAvailable. */
export interface Candidate extends ReplicaLoad {
  /** Taken out of rotation by hand (POST /__lb/down). */
  down: boolean;
  health: HealthState;
}

/**
 * Sets `available` on every upstream for one try at time `now` (ms): not down, not resting (a lone
 * upstream never rests), not in `tried`. When every upstream that is not down rests, their health
 * is reset and they are all open again (nginx: "all peers failed, mark them as live for quick
 * recovery", ngx_http_upstream_round_robin.c). Returns how many are open.
 */
function markAvailable(
  upstreams: readonly Candidate[],
  tried: Iterable<number>,
  rules: HealthRules,
  now: number,
): number {
  const lone = upstreams.length === 1;
  let open = 0;
  let up = 0;
  for (const u of upstreams) {
    u.available = !u.down && (lone || admission(u.health, rules, now) !== 'no');
    if (u.available) open++;
    if (!u.down) up++;
  }
  if (open === 0 && up > 0) {
    for (const u of upstreams) {
      if (u.down) continue;
      resetHealth(u.health);
      u.available = true;
      open++;
    }
  }
  for (const i of tried) {
    if (upstreams[i]!.available) open--;
    upstreams[i]!.available = false;
  }
  return open;
}

/**
 * After the policy picked `u`: true when this try is the probe that ends its rest (then the other
 * tries keep skipping it until the probe answers).
 */
function claimProbe(u: Candidate, lone: boolean, rules: HealthRules, now: number): boolean {
  const probe = !lone && admission(u.health, rules, now) === 'probe';
  if (probe) startProbe(u.health);
  return probe;
}

/**
 * The replica for one try, and the cursor to keep; undefined: none open. `prefer`, for the sticky
 * policies, names the replica the request should go to once availability is known (its client's
 * hash, its cookie), or undefined to let the picker choose.
 */
export function chooseReplica(
  upstreams: readonly Candidate[],
  tried: Iterable<number>,
  rules: HealthRules,
  now: number,
  pick: Picker,
  cursor: number,
  rng: Rng,
  prefer?: (upstreams: readonly Candidate[]) => number | undefined,
): { index: number; probe: boolean; cursor: number } | undefined {
  markAvailable(upstreams, tried, rules, now);
  let index = prefer?.(upstreams);
  let next = cursor;
  if (index === undefined) {
    const choice = pick(upstreams, cursor, rng);
    index = choice.index;
    next = choice.cursor;
  }
  if (index === undefined) return undefined;
  return { index, probe: claimProbe(upstreams[index]!, upstreams.length === 1, rules, now), cursor: next };
}
