/** The ceiling experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { CHECKED_UP_TO, FLAT_TOLERANCE, IO_GROWTH_1_TO_8, littlesMs, type CeilingResult } from './report.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';

/**
 * The CPU-bound route's most throughput over its 1-connection throughput, and its mean latency at
 * CHECKED_UP_TO connections over N times the 1-connection mean; the I/O-bound route's 8-connection
 * throughput over 1; the worst step's measured mean over Little's law's (%, off by).
 */
export function measures(r: CeilingResult): Measure[] {
  const cpu = r.routes.find((x) => x.name === 'cpu-bound')?.steps ?? [];
  const io = r.routes.find((x) => x.name === 'io-bound')?.steps ?? [];
  const one = cpu[0];
  const last = cpu.filter((s) => s.connections <= CHECKED_UP_TO).at(-1);
  const ioAt = (n: number) => io.find((s) => s.connections === n)?.throughput;
  const checked = r.routes.flatMap((x) => x.steps).filter((s) => s.connections <= CHECKED_UP_TO && s.throughput > 0);
  const worstLittle = checked.length ? Math.max(...checked.map((s) => Math.abs(s.mean / littlesMs(s) - 1))) : undefined;
  return [
    ...measure(
      'cpu-bound-most-vs-1-connection',
      "CPU-bound route: the most throughput of any step over 1 connection's",
      '×',
      ratio(cpu.length ? Math.max(...cpu.map((s) => s.throughput)) : undefined, one?.throughput),
      { line: 'ceiling  cpu-bound  throughput', threshold: 1 + FLAT_TOLERANCE },
    ),
    ...measure(
      'cpu-bound-latency-growth',
      `CPU-bound route: mean latency at ${last?.connections ?? CHECKED_UP_TO} connections over that at 1`,
      '×',
      ratio(last?.mean, one?.mean),
      { line: `ceiling  cpu-bound  latency-vs-connections-up-to-${CHECKED_UP_TO}` },
    ),
    ...measure(
      'io-bound-8-vs-1-connection',
      'I/O-bound route: throughput at 8 connections over 1',
      '×',
      ratio(ioAt(8), ioAt(1)),
      { line: 'ceiling  io-bound  throughput-1-to-8-connections', threshold: IO_GROWTH_1_TO_8 },
    ),
    ...measure(
      'littles-law-worst-error',
      `the mean latency's worst distance from connections / throughput (Little's law), up to ${CHECKED_UP_TO} connections`,
      '%',
      worstLittle === undefined ? undefined : 100 * worstLittle,
      { line: `ceiling  littles-law-up-to-${CHECKED_UP_TO}-connections`, threshold: 15 },
    ),
  ];
}

const WHERE = 'lessons/01-ceiling.md';

export const predictions: Question[] = [
  {
    id: 'cpu-bound-throughput',
    ask: 'A route that computes for 5 ms. From 1 connection to 16, how much does throughput grow?',
    measure: 'cpu-bound-most-vs-1-connection',
    choices: [
      { label: 'hardly (under 1.25×)', to: 1.25 },
      { label: 'up to about the core count (1.25× to 3×)', from: 1.25, to: 3 },
      { label: 'a lot (3× or more)', from: 3 },
    ],
    explain:
      'One process runs its JavaScript on one thread: one connection already keeps that thread busy, and more connections only queue.',
    lesson: `${WHERE}, "Two kinds of 5 ms" and "The knee"`,
  },
  {
    id: 'io-bound-throughput',
    ask: 'A route that waits 5 ms on a timer (no CPU). From 1 connection to 8, how much does throughput grow?',
    measure: 'io-bound-8-vs-1-connection',
    choices: [
      { label: 'hardly (under 2×)', to: 2 },
      { label: 'some (2× to 5×)', from: 2, to: 5 },
      { label: 'nearly 8× (5× or more)', from: 5 },
    ],
    explain: 'While a request waits, the thread is free to start the next one: waits overlap, computations do not.',
    lesson: `${WHERE}, "Two kinds of 5 ms"`,
  },
  {
    id: 'cpu-bound-latency',
    ask: `On the 5 ms CPU-bound route, the mean latency at ${CHECKED_UP_TO} connections is how many times that at 1?`,
    measure: 'cpu-bound-latency-growth',
    choices: [
      { label: 'about the same (under 2×)', to: 2 },
      { label: 'a few times (2× to 8×)', from: 2, to: 8 },
      { label: `about ${CHECKED_UP_TO}× (8× or more)`, from: 8 },
    ],
    explain:
      "Little's law: with throughput flat, the mean time inside grows with the number of requests inside, N / throughput.",
    lesson: `${WHERE}, "Little's law"`,
  },
];
