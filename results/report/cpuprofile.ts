/**
 * V8 CPU profiles (the `.cpuprofile` that `node --cpu-prof` writes and Chrome DevTools opens), cut
 * to the seconds that matter and summed by function. Pure: no file is read here.
 *
 * A profile is a call tree (`nodes`, each a function at one place in the tree) and a list of
 * samples: every sampling interval (1 ms by default), the node the thread was in. `timeDeltas[i]`
 * is the time from sample i − 1 to sample i, µs, and `startTime` the profiler's start, µs on the
 * machine's monotonic clock: the clock of `process.hrtime()` in any other process of the same
 * machine (CLOCK_MONOTONIC on Linux, mach_absolute_time on macOS), so the harness can name the
 * seconds of a load in the same units (measure/lib/profile/session.ts profileClockUs).
 */

/** Where a function is: V8's call frame (0-based line and column). */
export interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
  positionTicks?: { line: number; ticks: number }[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  /** µs, on the machine's monotonic clock. */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A span of time on the profile's clock, µs: [fromUs, toUs). */
export interface Window {
  fromUs: number;
  toUs: number;
}

/** Each sample's time on the profile's clock, µs. */
function sampleTimes(p: CpuProfile): number[] {
  const times: number[] = [];
  let t = p.startTime;
  for (const d of p.timeDeltas) times.push((t += d));
  return times;
}

/**
 * The profile with only the samples taken inside `windows` (the call tree is kept whole, the hit
 * counts are recounted): what DevTools and the flame graph then show is the load, not the start-up
 * or the wait between loads. The gaps between windows are closed up, so the timeline shows the
 * windows one after another. Undefined when no sample falls in any window.
 */
export function cutToWindows(p: CpuProfile, windows: readonly Window[]): CpuProfile | undefined {
  const times = sampleTimes(p);
  const inside = (t: number) => windows.some((w) => t >= w.fromUs && t < w.toUs);
  const kept = times.map((t, i) => ({ t, node: p.samples[i]! })).filter((s) => inside(s.t));
  if (kept.length === 0) return undefined;
  const interval = medianInterval(p.timeDeltas);
  const hits = new Map<number, number>();
  for (const s of kept) hits.set(s.node, (hits.get(s.node) ?? 0) + 1);
  const startTime = kept[0]!.t - interval;
  return {
    nodes: p.nodes.map((n) => ({ ...n, hitCount: hits.get(n.id) ?? 0, positionTicks: undefined })),
    startTime,
    endTime: startTime + interval * kept.length,
    samples: kept.map((s) => s.node),
    timeDeltas: kept.map(() => interval),
  };
}

/** The usual gap between two samples, µs (the sampling interval); 1000 with no samples. */
function medianInterval(deltas: readonly number[]): number {
  const positive = deltas.filter((d) => d > 0).sort((a, b) => a - b);
  return positive.length ? positive[Math.floor(positive.length / 2)]! : 1000;
}

/** One function's share of the samples in a profile. */
export interface SelfTime {
  /** As V8 names it; `(anonymous)` for a function without a name. */
  functionName: string;
  /** `file:line` (1-based), or V8's own name for what is not JavaScript: (program), (garbage collector), (idle). */
  where: string;
  /** Time the thread was in this function itself, not in a function it called, ms. */
  selfMs: number;
  /** selfMs as a share of the profile's time, 0 to 1. */
  share: number;
}

/**
 * Self time by function, heaviest first: every sample counts one sampling interval for the
 * function it was taken in, and a function that sits at several places in the call tree is
 * summed over them. `locate` turns a frame into the `where` shown (by default the frame's own url
 * and 1-based line). `(root)` is left out: it is the tree's top, never a sample's own.
 */
export function selfTimes(p: CpuProfile, locate: (f: CallFrame) => string = frameWhere): SelfTime[] {
  const byNode = new Map(p.nodes.map((n) => [n.id, n] as const));
  const interval = medianInterval(p.timeDeltas);
  const totals = new Map<string, { functionName: string; where: string; samples: number }>();
  for (const id of p.samples) {
    const f = byNode.get(id)?.callFrame;
    if (!f || f.functionName === '(root)') continue;
    const functionName = f.functionName || '(anonymous)';
    const where = f.url ? locate(f) : functionName;
    const key = `${functionName}\0${where}`;
    const t = totals.get(key) ?? { functionName, where, samples: 0 };
    t.samples++;
    totals.set(key, t);
  }
  const all = p.samples.length;
  return [...totals.values()]
    .map((t) => ({
      functionName: t.functionName,
      where: t.where,
      selfMs: (t.samples * interval) / 1000,
      share: all ? t.samples / all : 0,
    }))
    .sort((a, b) => b.selfMs - a.selfMs || a.where.localeCompare(b.where));
}

/** A frame's place as `url:line`, the line 1-based (V8's is 0-based); node's own modules keep `node:`. */
export function frameWhere(f: CallFrame): string {
  const file = f.url.startsWith('file://') ? decodeURIComponent(new URL(f.url).pathname) : f.url;
  return `${file}:${f.lineNumber + 1}`;
}
