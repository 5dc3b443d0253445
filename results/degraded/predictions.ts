/** The degraded experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { AWARE, blockedShare, P95_FACTOR, SMALL_SHARE, TAIL_FACTOR, type DegradedResult } from './report.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';

/**
 * Per policy: p95 over its own p50 and the blocked replica's share of its requests (%); per
 * policy that reads no load, its p95 over the worse of the load-aware policies'.
 */
export function measures(r: DegradedResult): Measure[] {
  const aware = r.policies.filter((p) => AWARE.includes(p.policy));
  const worstAware = aware.length ? Math.max(...aware.map((p) => p.p95)) : undefined;
  const out: Measure[] = [];
  for (const p of r.policies) {
    if (!AWARE.includes(p.policy)) {
      out.push(
        ...measure(
          `${p.policy}-p95-vs-load-aware`,
          `${p.policy}: p95 over the load-aware policies' (the worse of them)`,
          '×',
          ratio(p.p95, worstAware),
          { line: `${p.policy}  p95-vs-load-aware-policies`, threshold: P95_FACTOR },
        ),
      );
    }
    out.push(
      ...measure(
        `${p.policy}-p95-vs-own-p50`,
        `${p.policy}: p95 over its own p50`,
        '×',
        ratio(p.p95, Math.max(p.p50, 0.001)),
        { line: `${p.policy}  p95-vs-own-p50`, threshold: TAIL_FACTOR },
      ),
    );
    out.push(
      ...measure(
        `${p.policy}-blocked-share`,
        `${p.policy}: the blocked replica's share of the requests`,
        '%',
        100 * blockedShare(p, r.degraded),
        { line: `${p.policy}  blocked-replica-share`, threshold: 100 * SMALL_SHARE },
      ),
    );
  }
  return out;
}

const WHERE = 'lessons/04-where-requests-go.md, Experiment 2';
const BLOCKED_SHARE = [
  { label: 'almost none (under 5 %)', to: 5 },
  { label: 'less than its turn (5 % to 20 %)', from: 5, to: 20 },
  { label: 'about its third (20 % or more)', from: 20 },
];

export const predictions: Question[] = [
  {
    id: 'round-robin-p95',
    ask: "One of three replicas has its event loop kept busy. Round robin's p95 over least connections' (or power of two choices', the worse of them):",
    measure: 'round-robin-p95-vs-load-aware',
    choices: [
      { label: 'about the same (under 2×)', to: 2 },
      { label: '2× to 10×', from: 2, to: 10 },
      // One choice from 10×: over 20 --quick runs the ratio spread 48-158×, and a boundary at 100×
      // made the right answer a coin toss.
      { label: 'an order of magnitude or more (10× or more)', from: 10 },
    ],
    explain:
      'Round robin sends the blocked replica its third of the requests anyway, and each waits for the busy loop; least connections sees the requests pile up there and sends the next ones elsewhere.',
    lesson: WHERE,
  },
  {
    id: 'round-robin-blocked-share',
    ask: "What share of round robin's requests does the blocked replica serve?",
    measure: 'round-robin-blocked-share',
    choices: BLOCKED_SHARE,
    explain: 'Round robin reads no load: every replica gets its turn, slow or not.',
    lesson: WHERE,
  },
  {
    id: 'least-connections-blocked-share',
    ask: "And of least connections' requests?",
    measure: 'least-connections-blocked-share',
    choices: BLOCKED_SHARE,
    explain:
      "Least connections counts requests in flight: the blocked replica's count stays high, so it is almost never the least.",
    lesson: WHERE,
  },
];
