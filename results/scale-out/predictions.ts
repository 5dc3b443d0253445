/** The scale-out experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import { CPU_GROWS_FACTOR, type ScaleOutResult } from './report.ts';
import { FLAT_FACTOR, scalingRatios } from '../report/scaling.ts';

/** CPU-bound requests through the balancer: throughput at the core count's replicas over 1 replica, and past it over at it. */
export function measures(r: ScaleOutResult): Measure[] {
  const cpu = r.workloads.find((w) => w.name === 'cpu-bound');
  if (!cpu) return [];
  const { growth, plateau } = scalingRatios(
    cpu.steps.map((s) => ({ n: s.replicas, throughput: s.throughput })),
    r.machine.cores,
  );
  return [
    ...measure(
      'cpu-bound-up-to-core-count',
      'CPU-bound throughput with as many replicas as cores, over 1 replica',
      '×',
      growth,
      { line: 'cpu-bound  up-to-core-count', threshold: CPU_GROWS_FACTOR },
    ),
    ...measure(
      'cpu-bound-past-core-count',
      'CPU-bound throughput with more replicas than cores (the most), over as many as cores',
      '×',
      plateau,
      { line: 'cpu-bound  past-core-count', threshold: FLAT_FACTOR },
    ),
  ];
}

const WHERE = 'lessons/05-capacity.md, Experiment 1';

export const predictions: Question[] = [
  {
    id: 'up-to-cores',
    ask: 'Requests that each burn 5 ms of CPU, through the balancer. From 1 replica to as many replicas as this machine has cores, how does throughput change?',
    measure: 'cpu-bound-up-to-core-count',
    choices: [
      { label: 'about the same (under 1.3×)', to: CPU_GROWS_FACTOR },
      { label: 'it grows (1.3× or more)', from: CPU_GROWS_FACTOR },
    ],
    explain:
      "One replica is one event loop, at most one core; each replica more gets a core of its own, less what the balancer and the load generator take from the same cores, so the growth stays below one replica's worth per core.",
    lesson: WHERE,
  },
  {
    id: 'past-cores',
    ask: 'And from as many replicas as cores to more replicas than cores (up to 5)?',
    measure: 'cpu-bound-past-core-count',
    choices: [
      { label: 'about none (under 1.25×)', to: FLAT_FACTOR },
      { label: 'more (1.25× or more)', from: FLAT_FACTOR },
    ],
    explain:
      'Past one busy replica per core, more replicas only share the same cores: the requests queue for CPU instead of for an event loop.',
    lesson: WHERE,
  },
];
