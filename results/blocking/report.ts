/**
 * Result, table and shape of the `blocking` experiment (lesson 3): one heavy scrypt request, then
 * four light `/books` requests 50 ms later, each on its own connection; once with the scrypt on
 * the event loop, once on the thread pool. Pure functions only.
 */
import { fmtMs, machineCaption, makeChalk, makeTable, type MachineInfo } from '../report/format.ts';
import { line } from '../report/shape.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { SelfTime } from '../report/cpuprofile.ts';

export interface BlockingBlock {
  mode: 'blocking' | 'pooled';
  route: string;
  /** Client-side duration of the heavy request, ms. */
  heavyMs: number;
  /** Client-side durations of the light requests, ms, in the order they were sent. */
  lightMs: number[];
  /** The server's event-loop delay during the block (max, resolution subtracted), ms. */
  eventLoopDelayMaxMs: number;
  /**
   * The share of the block the server's event loop spent running code rather than waiting for
   * events, 0 to 1 (performance.eventLoopUtilization; absent in results saved before it was kept).
   * Beside the delay: the delay says how long one wait was, utilization how busy the loop was.
   */
  eventLoopUtilization?: number;
}

export interface BlockingResult {
  machine: MachineInfo;
  heavyCost: string;
  /** How long after the heavy request the light ones were sent, ms. */
  offsetMs: number;
  /**
   * The light requests sent together with nothing else running: the slowest of them, median of
   * three tries, ms. The yardstick for "answered at once".
   */
  idleLightMs: number;
  blocks: BlockingBlock[];
  /**
   * With --profile: the loan service's heaviest functions by self time in each half (blocking,
   * pooled), from its CPU profile cut to that half (measure/lib/profile/).
   */
  profile?: { windows: { label: string; samples: number; top: SelfTime[] }[] };
}

/** A light request "waited for the heavy one" when it took at least this share of (heavy − offset). */
const WAITED_SHARE = 0.5;
/**
 * A light request "answered at once" when it took at most this many times as long as the same
 * requests with nothing else running (the idle yardstick, a few ms): within an order of magnitude
 * of its own cost, whatever the heavy request's. (Sharing the cores with a pooled scrypt, they took
 * 1.1-5.2x the yardstick in a full run here: 4.5-22 ms against 4.27 ms.)
 */
const AT_ONCE_FACTOR = 10;
/** The event-loop delay is "far below" the heavy duration at most at this share of it. */
const AT_ONCE_SHARE = 0.1;

/** True when the heavy request outlasted the offset by at least the offset: light ones could overlap it. */
function heavyLongEnough(heavyMs: number, offsetMs: number): boolean {
  return heavyMs - offsetMs >= offsetMs;
}

/** How a light request's duration compares with the heavy request's and with its own idle time. */
export function classifyLight(lightMs: number, heavyMs: number, offsetMs: number, idleLightMs: number): string {
  if (!heavyLongEnough(heavyMs, offsetMs)) return 'heavy-too-short';
  if (lightMs >= WAITED_SHARE * (heavyMs - offsetMs)) return 'waited-for-heavy';
  if (lightMs <= AT_ONCE_FACTOR * idleLightMs) return 'answered-at-once';
  return 'in-between';
}

/** How the server's worst event-loop delay compares with the heavy request's duration. */
export function classifyDelay(delayMs: number, heavyMs: number): string {
  if (delayMs >= WAITED_SHARE * heavyMs) return 'near-heavy-duration';
  if (delayMs <= AT_ONCE_SHARE * heavyMs) return 'far-below-heavy-duration';
  return 'in-between';
}

export function shape(r: BlockingResult): string[] {
  const out: string[] = [];
  for (const b of r.blocks) {
    b.lightMs.forEach((ms, i) =>
      out.push(line(b.mode, `light-${i + 1}`, classifyLight(ms, b.heavyMs, r.offsetMs, r.idleLightMs))),
    );
    out.push(line(b.mode, 'event-loop-delay-max', classifyDelay(b.eventLoopDelayMaxMs, b.heavyMs)));
  }
  const [a, b] = r.blocks;
  if (a && b) {
    // Moving scrypt to the pool frees the event loop; it does not make scrypt itself faster.
    const ratio = a.heavyMs / b.heavyMs;
    out.push(
      line('heavy', 'blocking-vs-pooled', ratio >= 0.5 && ratio <= 2 ? 'similar-duration' : 'different-duration'),
    );
  }
  // Last: expected-output/profile/blocking.txt adds them after the lines of every run.
  if (r.profile) out.push(...profileLines(r.profile));
  return out;
}

/**
 * scrypt "holds" a half of the loan service's profile when frames named for it (scryptSync, or
 * the kit's hashOnEventLoop around it) take at least this share of that half's samples. On the
 * event loop it takes most of the half; on the thread pool the main thread only starts the job.
 */
const SCRYPT_SHARE = 0.1;
const isScrypt = (s: SelfTime) => /scrypt|hashOnEventLoop/i.test(s.functionName);

/** With --profile: what the loan service's main thread spent the most time in, in each half. */
function profileLines(p: NonNullable<BlockingResult['profile']>): string[] {
  const half = (label: string) => p.windows.find((w) => w.label === label);
  const blocking = half('blocking');
  const pooled = half('pooled');
  const scryptShare = (w: typeof blocking) => (w?.top ?? []).filter(isScrypt).reduce((n, s) => n + s.share, 0);
  const heaviest = blocking?.top.find((s) => s.functionName !== '(idle)');
  return [
    line(
      'profile',
      'blocking',
      'heaviest-self-frame',
      !blocking?.samples ? 'unmeasured' : heaviest && isScrypt(heaviest) ? 'scrypt' : 'other',
    ),
    line(
      'profile',
      'pooled',
      'scrypt-on-main-thread',
      !pooled?.samples ? 'unmeasured' : scryptShare(pooled) >= SCRYPT_SHARE ? 'some' : 'none',
    ),
  ];
}

/** Sentences on what this run could not show. */
export function caveats(r: BlockingResult): string[] {
  return r.blocks
    .filter((b) => !heavyLongEnough(b.heavyMs, r.offsetMs))
    .map(
      (b) =>
        `the heavy ${b.route} request took ${Math.round(b.heavyMs)} ms, too short to overlap light requests sent ${r.offsetMs} ms after it; use a larger --cost.`,
    );
}

export const hints: Record<string, string> = {
  blocking:
    'with scryptSync the light requests should queue behind the heavy one; if they did not, the heavy request ' +
    'may have been too short to overlap them (a very small --cost), or it did not reach the server first',
  pooled:
    'with crypto.scrypt the event loop stays free; slow light requests here mean something else blocked the ' +
    'event loop (is /member/verify-pooled still calling crypto.scrypt, not scryptSync?)',
  heavy:
    'the same scrypt should take about as long on the event loop as on a pool thread (one core either way); did the two routes get different costs?',
  'profile  blocking  heaviest-self-frame':
    "scryptSync on the event loop should be the loan service's heaviest function in the blocking half (the top table lists what was); a small --cost leaves it too short to show",
  'profile  pooled  scrypt-on-main-thread':
    "crypto.scrypt hashes on libuv's thread pool, which the main thread's profile does not sample; scrypt frames here mean the pooled route ran scrypt on the event loop",
};

export function render(r: BlockingResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const [blk, pool] = r.blocks;
  const table = makeTable(
    ['', 'verify-blocking\n(scrypt on the event loop)', 'verify-pooled\n(scrypt on the thread pool)'],
    ['left', 'right', 'right'],
  );
  const cell = (b: BlockingBlock | undefined, ms: number | undefined, kind: 'heavy' | 'light' | 'delay') => {
    if (!b || ms === undefined) return '';
    const verdict =
      kind === 'light'
        ? classifyLight(ms, b.heavyMs, r.offsetMs, r.idleLightMs)
        : kind === 'delay'
          ? classifyDelay(ms, b.heavyMs)
          : '';
    const text = fmtMs(ms);
    if (verdict === 'waited-for-heavy' || verdict === 'near-heavy-duration') return c.red(`${text}  waited`);
    if (verdict === 'answered-at-once' || verdict === 'far-below-heavy-duration') return c.green(text);
    return text;
  };
  table.push(['heavy request', cell(blk, blk?.heavyMs, 'heavy'), cell(pool, pool?.heavyMs, 'heavy')]);
  const n = Math.max(blk?.lightMs.length ?? 0, pool?.lightMs.length ?? 0);
  for (let i = 0; i < n; i++) {
    table.push([`light-${i + 1} (/books)`, cell(blk, blk?.lightMs[i], 'light'), cell(pool, pool?.lightMs[i], 'light')]);
  }
  table.push([
    'event-loop delay max',
    cell(blk, blk?.eventLoopDelayMaxMs, 'delay'),
    cell(pool, pool?.eventLoopDelayMaxMs, 'delay'),
  ]);
  const busy = (b: BlockingBlock | undefined) =>
    b?.eventLoopUtilization === undefined ? '' : `${Math.round(b.eventLoopUtilization * 100)} %`;
  if (r.blocks.some((b) => b.eventLoopUtilization !== undefined)) {
    table.push(['event-loop utilization', busy(blk), busy(pool)]);
  }
  return [
    c.bold(`Lesson 3 · blocking: one heavy scrypt, then ${n} light requests ${r.offsetMs} ms later`),
    c.dim(`heavy cost ${r.heavyCost} · ${caption}`),
    table.toString(),
    `A light request ${c.red('waited')} when it took at least half of (heavy − ${r.offsetMs} ms): it sat behind the heavy one. ` +
      `It answered at once when it took at most ${AT_ONCE_FACTOR}× what the same requests took with nothing else running (${fmtMs(r.idleLightMs)}).`,
  ].join('\n');
}

/**
 * The numbers behind the shape: per mode, the slowest light request and the event-loop delay as a
 * share of the heavy request's time (near 1 when it waited, near 0 when answered at once), and the
 * heavy request's blocking-to-pooled duration ratio.
 */
export function measures(r: BlockingResult): Measure[] {
  const out: Measure[] = [];
  for (const b of r.blocks) {
    out.push(
      ...measure(`${b.mode}-slowest-light`, `${b.mode}: the slowest light request`, 'ms', Math.max(...b.lightMs)),
    );
    out.push(
      ...measure(
        `${b.mode}-light-share-of-heavy`,
        `${b.mode}: the slowest light request, as a share of the heavy one's time after it was sent`,
        '×',
        ratio(Math.max(...b.lightMs), b.heavyMs - r.offsetMs),
        {
          line: `${b.mode}  light-1`,
          threshold: WAITED_SHARE,
        },
      ),
    );
    out.push(
      ...measure(
        `${b.mode}-event-loop-delay-max`,
        `${b.mode}: the server's longest event-loop delay`,
        'ms',
        b.eventLoopDelayMaxMs,
        { line: `${b.mode}  event-loop-delay-max` },
      ),
    );
  }
  const [a, b] = r.blocks;
  out.push(
    ...measure(
      'heavy-blocking-vs-pooled',
      'the heavy request on the event loop over on the thread pool',
      '×',
      ratio(a?.heavyMs, b?.heavyMs),
      { line: 'heavy  blocking-vs-pooled' },
    ),
  );
  return out;
}
