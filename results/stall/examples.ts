/**
 * A stall run as this machine measured it (--quick, 2 cores) and, per shape line, a change that
 * fails it: test/unit/report-examples.test.ts checks each fails its own line and no other.
 */
import type { ReportExamples } from '../report/shape.ts';
import type { LoopName, StallPass, StallResult } from './report.ts';

const pass = (r: StallResult, loop: LoopName): StallPass => r.passes.find((p) => p.loop === loop)!;

export const examples: ReportExamples<StallResult> = {
  healthy: () => ({
    machine: { cores: 2, loadavg1: 0.7, busyCoresAtStart: 0, node: '20.20.2', platform: 'linux-x64' },
    stallMs: 1002,
    durationS: 3,
    passes: [
      {
        loop: 'closed-loop',
        connections: 4,
        answered: 54488,
        errors: 0,
        achievedRate: 18163,
        p50Ms: 0.1,
        p99Ms: 0.75,
        maxMs: 1004,
        duringStall: 4,
        generatorCpu: 0.56,
      },
      {
        loop: 'open-loop',
        rate: 400,
        connections: 4,
        answered: 1200,
        errors: 0,
        achievedRate: 400,
        p50Ms: 1.24,
        p99Ms: 979,
        maxMs: 1005,
        duringStall: 402,
        generatorCpu: 0.22,
        latenessP99Ms: 3.2,
        latenessMaxMs: 7.8,
        generatorLimited: false,
      },
      {
        loop: 'rated-closed-loop',
        rate: 400,
        connections: 4,
        answered: 1014,
        errors: 0,
        achievedRate: 338,
        p50Ms: 0.28,
        p99Ms: 4.29,
        maxMs: 992,
        duringStall: 4,
        generatorCpu: 0.04,
      },
    ],
  }),
  broken: {
    // More connections than 1 % of the samples: the closed loop's stuck requests reach its p99.
    'stall  closed-loop  p99': (r) => void (pass(r, 'closed-loop').p99Ms = 990),
    // A second request per connection counted (an answer already on its way at the freeze).
    'stall  closed-loop  samples-during-stall': (r) => void (pass(r, 'closed-loop').duringStall = 9),
    // Timed from when each request was written: the requests waiting for a connection left out.
    'stall  open-loop  p99': (r) => void (pass(r, 'open-loop').p99Ms = 4.1),
    // The same mistake seen in the count: only the 4 written before the freeze saw it.
    'stall  open-loop  samples-during-stall': (r) => void (pass(r, 'open-loop').duringStall = 4),
    // A busy generator: its timer ran late, and the latency it measured was its own.
    'stall  open-loop  sent': (r) => void (pass(r, 'open-loop').generatorLimited = true),
    // A rated loop whose stuck requests are 1 % of its samples or more.
    'stall  rated-closed-loop  p99': (r) => void (pass(r, 'rated-closed-loop').p99Ms = 700),
    'stall  rated-closed-loop  samples-during-stall': (r) => void (pass(r, 'rated-closed-loop').duringStall = 0),
  },
};
