/** Every simulated scenario, by name (`sim/run.ts --scenario <name>`). */
import { autoscale } from './autoscale.ts';
import type { Scenario } from './common.ts';
import { degraded } from './degraded.ts';
import { failover } from './failover.ts';
import { graceful } from './graceful.ts';
import { hogProbe } from './hog-probe.ts';
import { overload } from './overload.ts';
import { scaleOut } from './scale-out.ts';
import { stale } from './stale.ts';

export const SCENARIOS: readonly Scenario[] = [
  degraded,
  failover,
  graceful,
  scaleOut,
  autoscale,
  stale,
  hogProbe,
  overload,
];

export function scenarioNamed(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
