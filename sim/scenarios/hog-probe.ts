/**
 * One connection's requests to a replica whose event loop a hog keeps blocked (three connections
 * of 30 ms requests, as in `degraded`), under both loop models: first come, first served, and
 * Node's turns. The lesson compares them with the lab, where such a request waited 115 ms on
 * average, p95 181 ms (measured on the 2-core machine: /fast straight to the hogged replica over
 * one connection for 4 s).
 */
import { fmtMs, makeChalk, makeTable, textThenNumbers } from '../../results/report/format.ts';
import { exp, fixed } from '../dist.ts';
import { simulate, type SimResult } from '../engine.ts';
import { FAST, loopWords, totalsOf, type Scenario } from './common.ts';

const LOOPS = ['fifo', 'turns'] as const;

export const hogProbe: Scenario = {
  name: 'hog-probe',
  summary: "one connection's requests to a blocked replica: first come, first served against Node's turns",
  run({ seed }) {
    const sims: SimResult[] = LOOPS.map((loop) =>
      simulate({
        seed,
        loop,
        replicas: 1,
        policy: 'round-robin',
        clients: { kind: 'closed', count: 1 },
        // The client's own round trip, a few tenths of a millisecond on loopback.
        pathDelay: exp(0.3),
        service: FAST,
        hogs: [{ replica: 0, ms: fixed(30), connections: 3 }],
        durationMs: 60_000,
        warmupMs: 1000,
      }),
    );
    const rows = LOOPS.map((loop, i) => ({ loop, ...sims[i]!.latency }));
    const result = { hogMs: 30, hogConnections: 3, rows };
    const render = (color: boolean) => {
      const c = makeChalk(color);
      const table = makeTable(['event loop', 'requests', 'mean', 'p50', 'p95', 'max'], textThenNumbers(1, 6));
      for (const r of rows)
        table.push([
          loopWords(r.loop).replace('event loops served ', ''),
          String(r.count),
          fmtMs(r.mean),
          fmtMs(r.p50),
          fmtMs(r.p95),
          fmtMs(r.max),
        ]);
      return [
        c.bold('A blocked replica probed over one connection: first come, first served against turns'),
        c.dim(
          `hog: 3 connections of 30 ms requests; probe: /fast (0.1 ms), one connection, 60 s · simulated (seed ${seed})`,
        ),
        table.toString(),
        'Measured in the lab on a 2-core machine: mean 115 ms, p95 181 ms (lessons/04-where-requests-go.md, experiment 3).',
      ].join('\n');
    };
    return { result, render, totals: totalsOf(sims) };
  },
};
