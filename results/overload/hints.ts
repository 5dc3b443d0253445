/** The `overload` experiment's likely causes per line, and what a run whose generator was late says instead. Pure. */
import { generatorLate, LATE_MS, worstLateness, type OverloadResult } from './report.ts';

export function notShown(r: OverloadResult): string[] {
  if (!generatorLate(r)) return [];
  return [
    `the load generator sent its users up to ${worstLateness(r).toFixed(0)} ms late at p99 (over ${LATE_MS} ms): its own process was short of CPU, so the latencies are partly its own and no line is judged. Close other programs and run it again.`,
  ];
}

export const hints: Record<string, string> = {
  'overload  generator  sent':
    'the generator ran late: another program took the cores, or the machine has fewer than 2 free; its numbers are its own delay',
  'overload  queue  below-capacity':
    'below capacity nothing should wait long: a p99 that grows at half the capacity means the capacity step measured too high (a busy machine during it?)',
  'overload  queue  above-capacity':
    'past capacity every second adds requests to the line, so later users wait longer; a flat p99 means the service did not queue (a bound, or a capacity measured too low)',
  'overload  timeouts  above-capacity':
    'users who give up do not take their requests out of the line: the worker still hashes them, for nobody, and the users behind wait for that',
  'overload  shedding  above-capacity':
    'a shedder refuses what would wait too long, so the line stays short and what it accepts is answered in time; check that it refuses before the request joins the line',
  'overload  shedding  refused':
    'a refused request is answered at once with 503 and a Retry-After of whole seconds, so its client knows when to come back',
  'overload  retries  after-spike':
    'each retry is one more request in the line: with every attempt timing out, users at half the capacity offer it one and a half times over',
  'overload  no-retries  after-spike':
    'without retries the line drains at the capacity less the base load: the users are served again within about a second',
  'overload  breaker  after-spike':
    'the breaker opens after attempts keep failing and refuses them without sending, so the line drains; it closes once an attempt is answered',
};
