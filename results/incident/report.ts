/**
 * Lesson 10 · incident: the shape lines of a diagnosis run and its tables. Each line watches one
 * mechanism, so a planted incident turns exactly one of them (expected-output/incident/<name>.txt)
 * and its fix turns it back (expected-output/incident.txt, a healthy service).
 */
import { makeChalk, makeTable } from '../report/format.ts';
import { line } from '../report/shape.ts';
import type { IncidentResult, PacedPhase } from './result.ts';

/**
 * A loop busier than this over a paced phase is busy: the healthy service reads 2 to 6 % at the
 * battery's rates here, a planted fault 40 % and more (measured on this 2-core machine).
 */
const BUSY_UTILIZATION = 0.2;
/** Cover reads during the exports wait when their median is this many times the idle one, and at least WAIT_FLOOR_MS. */
const WAIT_RATIO = 10;
const WAIT_FLOOR_MS = 5;
/** The kept heap grows when it gained this much over the pages, MB: the healthy service keeps none of them. */
const HEAP_GROWTH_MB = 15;

const busy = (p: PacedPhase) => (p.utilization >= BUSY_UTILIZATION ? 'busy' : 'calm');

/** The shape lines, one per mechanism. */
export function shape(r: IncidentResult): string[] {
  const c = r.covers;
  const waited = c.duringExportP50Ms >= Math.max(WAIT_RATIO * c.idleP50Ms, WAIT_FLOOR_MS);
  const closed = r.idleClose.closedAfterMs;
  return [
    line('incident', 'loop-under-books', busy(r.books)),
    line('incident', 'loop-under-search', busy(r.search)),
    line('incident', 'cover-reads-during-export', waited ? 'wait' : 'at-once'),
    line(
      'incident',
      'idle-close',
      closed !== undefined && closed < r.idleClose.balancerIdleMs ? 'before-balancer' : 'after-balancer',
    ),
    line(
      'incident',
      'heap-under-new-pages',
      r.pages.heapAfterMb - r.pages.heapBeforeMb >= HEAP_GROWTH_MB ? 'grows' : 'flat',
    ),
    line('incident', 'shutdown-under-keep-alive', r.shutdown.exitedAfterMs === undefined ? 'hangs' : 'completes'),
  ];
}

/** The likely cause when a line does not hold on a healthy service (it reads as a symptom). */
export const hints: Record<string, string> = {
  'loop-under-books': 'a handler of /books holds the event loop: the profile names the function',
  'loop-under-search': 'a handler of /search holds the event loop: the profile names the function',
  'cover-reads-during-export': "the exports fill libuv's thread pool (4 threads), and file reads wait behind them",
  'idle-close': "the server's keepAliveTimeout is shorter than the balancer's idle timeout",
  'heap-under-new-pages': 'something keeps every page: a cache with no bound, or a list that is never emptied',
  'shutdown-under-keep-alive': 'on SIGTERM the server waits for connections its clients keep busy',
};

const ms = (x: number | undefined) => (x === undefined ? '–' : `${x < 10 ? x.toFixed(2) : x.toFixed(0)} ms`);
const pct = (x: number) => `${Math.round(x * 100)} %`;

/** The measures, phase by phase, for a student to read before naming the incident. */
export function render(r: IncidentResult, color: boolean): string {
  const c = makeChalk(color);
  const who =
    'handlers' in r.subject
      ? `the handlers in ${r.subject.handlers}`
      : r.subject.seed !== undefined
        ? `incident #${r.subject.seed} (which one is for you to say)`
        : `the planted incident ${r.subject.planted}`;
  const paced = makeTable(
    ['phase', 'rate', 'answered', 'errors', 'p50', 'p99', 'event loop utilization', 'event loop delay max'],
    ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  for (const p of [r.books, r.search])
    paced.push([
      p.route,
      `${p.rate}/s`,
      String(p.completed),
      String(p.errors),
      ms(p.p50Ms),
      ms(p.p99Ms),
      pct(p.utilization),
      ms(p.delayMaxMs),
    ]);
  const other = makeTable(['phase', 'measured'], ['left', 'left']);
  other.push(
    [
      'cover reads (fs, thread pool)',
      `median ${ms(r.covers.idleP50Ms)} alone, ${ms(r.covers.duringExportP50Ms)} during ${r.covers.exports} /export (loop ${pct(r.covers.exportUtilization)} busy)`,
    ],
    [
      'a kept-alive connection left idle',
      r.idleClose.closedAfterMs === undefined
        ? `still open after ${(r.idleClose.waitedMs / 1000).toFixed(1)} s`
        : `closed by the server after ${ms(r.idleClose.closedAfterMs)}`,
    ],
    ['', `the balancer reuses idle connections for ${(r.idleClose.balancerIdleMs / 1000).toFixed(0)} s`],
    [
      'pages with a new session id each',
      `${r.pages.completed} answered; heap kept ${r.pages.heapBeforeMb.toFixed(0)} MB before, ${r.pages.heapAfterMb.toFixed(0)} MB after; GC ${r.pages.gcMs} ms`,
    ],
    [
      'SIGTERM under 16 kept-alive clients',
      r.shutdown.exitedAfterMs === undefined
        ? `still running after ${(r.shutdown.graceMs / 1000).toFixed(0)} s: killed; ${r.shutdown.answeredAfterSignal} loans answered after the signal`
        : `exited after ${ms(r.shutdown.exitedAfterMs)}; ${r.shutdown.answeredAfterSignal} loans answered after the signal`,
    ],
  );
  const profiled = c.dim(
    `Under the CPU profiler (the second pass) the same phases read /books ${pct(r.underProfiler.books)} and /search ${pct(r.underProfiler.search)} busy: utilization is not read under a profiler.`,
  );
  const out = [
    c.bold(`Lesson 10 · incident: ${who}, measured phase by phase`),
    paced.toString(),
    profiled,
    other.toString(),
  ];
  // A seeded run hides the incident: a handler file's name (lesson-10/redos.ts, fixed/…) would name it.
  const hidden = 'planted' in r.subject && r.subject.seed !== undefined;
  const where = (w: string) =>
    hidden
      ? w.replace(
          /^.*servers\/(?:incidents|exercises\/lesson-10)\/[\w/-]+\.ts:(\d+)$/,
          "the service's handlers, line $1",
        )
      : w;
  for (const p of r.profiles) {
    const top = p.top
      .map((f) => `${f.functionName}${f.where === f.functionName ? '' : ` (${where(f.where)})`} ${pct(f.share)}`)
      .join('; ');
    out.push(`${c.bold(`Heaviest functions by self time, ${p.phase}:`)} ${top || 'the loop was idle'}`);
  }
  return out.join('\n');
}
