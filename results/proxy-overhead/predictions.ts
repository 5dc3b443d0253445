/** The proxy-overhead experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import { ADDED_P50_FACTOR, CLEARLY_WORSE, CPU_FACTOR, find, type ProxyOverheadResult } from './report.ts';

/** Through the kit's balancer: p50 added with keep-alive; the replica's CPU per request and the throughput, keep-alive off over on. */
export function measures(r: ProxyOverheadResult): Measure[] {
  const direct = find(r, 'direct');
  const on = find(r, 'builtin', true);
  const off = find(r, 'builtin', false);
  return [
    ...measure(
      'builtin-added-p50',
      "the kit's balancer with keep-alive: p50 at one connection minus the direct p50",
      'ms',
      on && direct ? on.p50 - direct.p50 : undefined,
    ),
    ...measure(
      'builtin-added-p50-vs-direct',
      "the kit's balancer with keep-alive: the p50 it adds over the direct p50",
      '×',
      ratio(on && direct ? on.p50 - direct.p50 : undefined, direct?.p50),
      {
        line: 'proxy-overhead  builtin  keepalive-on  added-p50',
        threshold: ADDED_P50_FACTOR,
      },
    ),
    ...measure(
      'builtin-keepalive-off-replica-cpu',
      "the kit's balancer, keep-alive off over on: the replica's CPU per request",
      '×',
      ratio(off?.replicaCpuUsPerRequest, on?.replicaCpuUsPerRequest),
      {
        line: 'proxy-overhead  builtin  keepalive-off-vs-on  replica-cpu-per-request',
        threshold: CPU_FACTOR,
      },
    ),
    ...measure(
      'builtin-keepalive-off-throughput',
      "the kit's balancer, keep-alive off over on: throughput",
      '×',
      ratio(off?.throughput, on?.throughput),
      { line: 'proxy-overhead  builtin  keepalive-off-vs-on  throughput', threshold: CLEARLY_WORSE },
    ),
  ];
}

const WHERE = 'lessons/02-proxy.md, "The experiment: proxy-overhead"';

export const predictions: Question[] = [
  {
    id: 'added-p50',
    ask: "The kit's balancer goes in front of one replica, on this machine, reusing its connections to the replica (keep-alive). With one connection, how much does it add to the p50 latency?",
    measure: 'builtin-added-p50',
    choices: [
      { label: 'under 1 ms', to: 1 },
      { label: '1 to 10 ms', from: 1, to: 10 },
      { label: '10 ms or more', from: 10 },
    ],
    explain:
      "One more hop on loopback is a read, a parse and a write in one more process, with no network in between: what that process's CPU takes, a fraction of a millisecond on a fast machine, about one on a slow virtual machine.",
    lesson: WHERE,
  },
  {
    id: 'keepalive-off-cpu',
    ask: 'Now the balancer opens a new connection to the replica for every request (keep-alive off). How much CPU does the replica spend per request, against keep-alive on?',
    measure: 'builtin-keepalive-off-replica-cpu',
    choices: [
      { label: 'about the same (under 1.5×)', to: 1.5 },
      { label: '1.5× to 5×', from: 1.5, to: 5 },
      { label: '5× or more', from: 5 },
    ],
    explain:
      'Each request now also costs the replica an accept, a new socket with its buffers, and a close, which weigh more than answering a tiny request.',
    lesson: WHERE,
  },
  {
    id: 'keepalive-off-throughput',
    ask: 'And the throughput through the balancer with keep-alive off, against keep-alive on?',
    measure: 'builtin-keepalive-off-throughput',
    choices: [
      { label: 'lower (under 0.85×)', to: CLEARLY_WORSE },
      { label: 'about the same or higher (0.85× or more)', from: CLEARLY_WORSE },
    ],
    explain:
      'The balancer and the replica share the cores with the load generator; the connection set-up each request now needs is CPU taken from answering.',
    lesson: WHERE,
  },
];
