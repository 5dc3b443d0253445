/**
 * Result, table and shape of the `stall` experiment (lesson 1): one server frozen (SIGSTOP) for
 * about a second in the middle of a light load, measured three ways: a closed loop (autocannon),
 * an open loop (the kit's generator, measure/lib/load/open-loop.ts) and a closed loop with a rate
 * (autocannon's overallRate). The shape compares each p99 with the stall, and counts the samples
 * each took while the server was frozen. Pure.
 */
import {
  fmtMs,
  fmtRate,
  machineCaption,
  makeChalk,
  makeTable,
  textThenNumbers,
  type MachineInfo,
} from '../report/format.ts';
import { line } from '../report/shape.ts';

const LOOPS = ['closed-loop', 'open-loop', 'rated-closed-loop'] as const;
export type LoopName = (typeof LOOPS)[number];

/** One generator's pass over the same stall. */
export interface StallPass {
  loop: LoopName;
  /** Intended req/s (the open loop's and the rated loop's); undefined for the plain closed loop. */
  rate?: number;
  connections: number;
  answered: number;
  errors: number;
  /** Answers per second over the pass. */
  achievedRate: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Requests sent before the server woke and answered after it froze: the samples that saw the stall. */
  duringStall: number;
  /** The generator's CPU, in cores. */
  generatorCpu: number;
  /** The open loop only: its own lateness in sending, ms, and whether it, not the server, set the latency. */
  latenessP99Ms?: number;
  latenessMaxMs?: number;
  generatorLimited?: boolean;
}

export interface StallResult {
  machine: MachineInfo;
  /** How long the server was frozen in each pass, ms (measured: from SIGSTOP to SIGCONT). */
  stallMs: number;
  /** Each pass's length, s. */
  durationS: number;
  passes: StallPass[];
}

/** A p99 at least this share of the stall shows it; at most FAR_BELOW of it hides it. */
const LARGE_PART = 0.5;
const FAR_BELOW = 0.1;
/**
 * An open loop at rate R saw the stall in about R × stall samples; "many" is at least half that.
 * A closed loop of C connections has one request in flight on each when the server freezes, and
 * sends nothing more until it wakes: C samples, give or take one per connection.
 */
const MANY_SHARE = 0.5;
/** The open loop's p99 lateness at 5 % of the stall (50 ms) is late: measured here, it sent within 1.7-5 ms at p99. */
const LATE_SHARE = 0.05;

function p99Verdict(p: StallPass, stallMs: number): string {
  if (p.p99Ms >= LARGE_PART * stallMs) return 'large-part-of-stall';
  if (p.p99Ms <= FAR_BELOW * stallMs) return 'far-below-stall';
  return 'between';
}

function samplesVerdict(p: StallPass, stallMs: number): string {
  if (p.rate !== undefined && p.loop === 'open-loop' && p.duringStall >= (MANY_SHARE * p.rate * stallMs) / 1000)
    return 'many';
  if (p.duringStall >= 1 && p.duringStall <= 2 * p.connections) return 'about-one-per-connection';
  return p.duringStall === 0 ? 'none' : 'more-than-one-per-connection';
}

/**
 * The open loop sent late when its own lateness set its latency (generatorLimited), or when its p99
 * lateness reached LATE_SHARE of the stall: against a p99 near the stall itself, generatorLimited
 * alone would wait for half a second of lateness before it said so.
 */
function sentVerdict(p: StallPass, stallMs: number): string {
  return p.generatorLimited || (p.latenessP99Ms ?? 0) >= LATE_SHARE * stallMs ? 'late' : 'on-time';
}

export function shape(r: StallResult): string[] {
  const out: string[] = [];
  for (const loop of LOOPS) {
    const p = r.passes.find((x) => x.loop === loop);
    if (!p) continue;
    out.push(line('stall', loop, 'p99', p99Verdict(p, r.stallMs)));
    out.push(line('stall', loop, 'samples-during-stall', samplesVerdict(p, r.stallMs)));
    if (loop === 'open-loop') out.push(line('stall', loop, 'sent', sentVerdict(p, r.stallMs)));
  }
  return out;
}

export const hints: Record<string, string> = {
  'stall  open-loop  p99':
    'an open loop times each request from when it was due, so every request due during the stall waits for the server to wake',
  'stall  closed-loop  p99':
    "a closed loop sends nothing while its connections wait, so the stall is only its connections' few samples among thousands",
  'stall  rated-closed-loop  p99':
    'a rate does not open a closed loop: its connections still wait, and the requests due meanwhile are never sent',
  'stall  open-loop  samples-during-stall':
    'requests were due all through the stall; fewer samples means the generator waited for the server (or for its own timer)',
  'stall  closed-loop  samples-during-stall': 'one request in flight per connection when the server froze',
  'stall  rated-closed-loop  samples-during-stall': 'one request in flight per connection when the server froze',
  'stall  open-loop  sent':
    "the generator sent late: its own process was busy (another program on the cores?), so its latency is partly the generator's",
};

/** One row per pass: what each generator saw of the same stall. */
export function render(r: StallResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const table = makeTable(
    [
      'generator',
      'rate',
      'connections',
      'answered',
      'achieved',
      'p50',
      'p99',
      'max',
      'samples during stall',
      'generator CPU',
    ],
    textThenNumbers(1, 10),
  );
  const names: Record<LoopName, string> = {
    'closed-loop': 'closed loop (autocannon)',
    'open-loop': 'open loop (the kit)',
    'rated-closed-loop': 'closed loop, rate (autocannon)',
  };
  for (const p of r.passes) {
    const shows = p.p99Ms >= LARGE_PART * r.stallMs;
    table.push([
      names[p.loop],
      p.rate === undefined ? 'as fast as answered' : fmtRate(p.rate),
      String(p.connections),
      String(p.answered),
      fmtRate(p.achievedRate),
      fmtMs(p.p50Ms),
      shows ? c.red(fmtMs(p.p99Ms)) : c.green(fmtMs(p.p99Ms)),
      fmtMs(p.maxMs),
      String(p.duringStall),
      `${Math.round(p.generatorCpu * 100)} %`,
    ]);
  }
  const open = r.passes.find((p) => p.loop === 'open-loop');
  return [
    c.bold(
      `Lesson 1 · stall: the server frozen for ${fmtMs(r.stallMs)} in the middle of ${r.durationS} s, three ways to measure it`,
    ),
    c.dim(`GET /fast on one replica · ${caption}`),
    table.toString(),
    ...(open?.latenessP99Ms !== undefined
      ? [
          `The open loop sent each request ${fmtMs(open.latenessP99Ms)} after its time at p99 (${fmtMs(open.latenessMaxMs ?? 0)} at worst): ` +
            (open.generatorLimited
              ? c.red('late enough that the generator, not the server, set its latency.')
              : 'the server, not the generator, set its latency.'),
        ]
      : []),
  ].join('\n');
}
