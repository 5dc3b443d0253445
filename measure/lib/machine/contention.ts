/**
 * How much CPU other programs used while an experiment ran: every process outside this one's own
 * tree (its servers, their workers, nginx) and outside the kernel's threads, plus the time a
 * hypervisor gave to other virtual machines (steal). A finding that does not hold while a second
 * experiment, a build or a browser tab kept a core busy is the machine's doing, not the kit's;
 * one that does not hold on an idle machine is never blamed on it.
 *
 * On Linux each process's CPU comes from /proc. Elsewhere (macOS) it is the machine's busy time
 * from os.cpus() less what the kit's own processes used (from ps): the machine's figure is as
 * fine as /proc's, ps's only where it prints hundredths of a second (macOS; procps on Linux
 * prints whole seconds). There is no steal there. The busiest other programs are named either way.
 */
import { performance } from 'node:perf_hooks';
import {
  allStats,
  cpuSource,
  descendants,
  machineTicks,
  TICKS_PER_S,
  type CpuSource,
  type MachineTicks,
  type ProcStat,
} from '../../../lib/proc.ts';

export interface CpuSnapshot {
  atMs: number;
  stats: Map<number, ProcStat>;
  /** This process and everything below it. */
  kit: Set<number>;
  /** This process's parent, its parent's parent, ... up to init. */
  ancestors: Set<number>;
  machine: MachineTicks;
  source: CpuSource;
}

/** What other programs used between two snapshots, in cores' worth of CPU (1 = one core busy). */
interface OtherCpu {
  /** Processes outside the kit's tree (their own time and that of children they reaped). */
  otherCores: number;
  /** Time other virtual machines took from this one (0 on bare metal). */
  stealCores: number;
}

/** The kernel's own threads descend from kthreadd (pid 2); their work here is mostly the kit's loopback traffic. */
const KTHREADD = 2;

/**
 * A snapshot of every process's CPU time and the machine's, from `source` (this machine's by
 * default); undefined where neither can be read (no /proc and no ps).
 */
export function takeSnapshot(root = process.pid, source: CpuSource = cpuSource()): CpuSnapshot | undefined {
  const machine = machineTicks(source);
  if (!machine) return undefined;
  const stats = allStats(source);
  if (stats.size === 0) return undefined;
  return {
    atMs: performance.now(),
    stats,
    kit: descendants(stats, root),
    ancestors: ancestorsOf(stats, root),
    machine,
    source,
  };
}

function ancestorsOf(stats: Map<number, ProcStat>, pid: number): Set<number> {
  const out = new Set<number>();
  for (let p = stats.get(pid)?.ppid; p !== undefined && p > 0 && !out.has(p); p = stats.get(p)?.ppid) out.add(p);
  return out;
}

const total = (s: ProcStat) => s.ownTicks + s.reapedChildrenTicks;

/**
 * Other programs' CPU between `a` and `b`. A process alive at both counts its growth; one that
 * started in between counts all of its time; one that ended in between is counted by the parent
 * that reaped it, except where that parent is one of this process's ancestors (init, a
 * subreaper, the shell): a cluster worker outliving its stopped primary is reparented to one of
 * them, and its whole life would be counted as someone else's. `reaped: false` leaves reaped
 * children out altogether (for short intervals). Pure.
 */
export function otherCpu(a: CpuSnapshot, b: CpuSnapshot, o: { reaped?: boolean } = {}): OtherCpu {
  const seconds = Math.max((b.atMs - a.atMs) / 1000, 0.001);
  if (b.source === 'ps') return machineLessKit(a, b, seconds);
  const kernel = descendants(b.stats, KTHREADD);
  let ticks = 0;
  for (const [pid, st] of b.stats) {
    if (b.kit.has(pid) || a.kit.has(pid) || kernel.has(pid) || pid === KTHREADD) continue;
    const before = a.stats.get(pid);
    // Without `reaped`, only what live processes used themselves: a child reaped in between lands
    // all of its CPU at once, and a second's interval would read as ten cores.
    const counted = b.ancestors.has(pid) || o.reaped === false ? (x: ProcStat) => x.ownTicks : total;
    // A pid reused by a new process has a smaller total than the old one had: count it whole.
    const grew = before && counted(st) >= counted(before) ? counted(st) - counted(before) : counted(st);
    ticks += grew;
  }
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    otherCores: round(ticks / TICKS_PER_S / seconds),
    stealCores: round((b.machine.steal - a.machine.steal) / TICKS_PER_S / seconds),
  };
}

/**
 * Other programs' CPU without /proc: the machine's busy time (os.cpus()) less the growth of the
 * kit's own processes (ps), in cores' worth; 0 steal. Pure.
 */
function machineLessKit(a: CpuSnapshot, b: CpuSnapshot, seconds: number): OtherCpu {
  let kit = 0;
  for (const pid of b.kit) {
    const st = b.stats.get(pid);
    const before = a.stats.get(pid);
    if (st) kit += before && st.ownTicks >= before.ownTicks ? st.ownTicks - before.ownTicks : st.ownTicks;
  }
  const other = Math.max(0, b.machine.busy - a.machine.busy - kit);
  return { otherCores: Math.round((other / TICKS_PER_S / seconds) * 100) / 100, stealCores: 0 };
}

/** A program that took CPU while a step or a run went on: its name and cores' worth. */
export interface BusyProgram {
  name: string;
  cores: number;
}

/**
 * The `n` programs outside the kit that took the most CPU between `a` and `b`, by name (a
 * browser's processes add up under one name), from the same source as otherCpu; those under 0.01
 * cores are left out. Pure.
 */
export function busiestPrograms(a: CpuSnapshot, b: CpuSnapshot, n = 3): BusyProgram[] {
  const seconds = Math.max((b.atMs - a.atMs) / 1000, 0.001);
  // Linux's kernel threads hang below kthreadd; elsewhere pid 2 is an ordinary program.
  const kernel = process.platform === 'linux' ? descendants(b.stats, KTHREADD) : new Set<number>();
  const byName = new Map<string, number>();
  for (const [pid, st] of b.stats) {
    if (b.kit.has(pid) || a.kit.has(pid) || kernel.has(pid) || pid === KTHREADD) continue;
    const before = a.stats.get(pid);
    // A process started in between (or a reused pid) counts whole, as in otherCpu.
    const grew = before && st.ownTicks >= before.ownTicks ? st.ownTicks - before.ownTicks : st.ownTicks;
    if (grew > 0) byName.set(st.name, (byName.get(st.name) ?? 0) + grew);
  }
  return [...byName]
    .map(([name, ticks]) => ({ name, cores: Math.round((ticks / TICKS_PER_S / seconds) * 100) / 100 }))
    .filter((p) => p.cores >= 0.01)
    .sort((x, y) => y.cores - x.cores)
    .slice(0, n);
}

/** `chrome 0.40, code 0.12`: programs for a sentence. */
export function formatPrograms(programs: BusyProgram[]): string {
  return programs.map((p) => `${p.name} ${p.cores.toFixed(2)}`).join(', ');
}

/** Other programs' CPU over a run: the average, and the busiest sampling interval's. */
interface RunContention {
  /** Cores' worth, on average over the run (steal included). */
  averageCores: number;
  /** Cores' worth in the busiest interval (a second by default): a burst that an average hides. */
  peakCores: number;
  /** Of the average, what other virtual machines on the same host took (steal). */
  stealCores: number;
  /** The three programs that took the most over the run. */
  programs: BusyProgram[];
  /** Where the CPU times came from. */
  source: CpuSource;
}

/**
 * Samples other programs' CPU while a run goes on (a snapshot a second, about 2 ms of this
 * process's CPU each with 70 processes on the machine): an average over a run of a minute hides a
 * build that kept a core busy for the five seconds one step was measured in.
 */
/**
 * The shortest interval whose CPU counts, ms. /proc/stat counts in ticks of 10 ms, and each CPU's
 * counters move a whole tick at a time: over a few tens of ms one or two ticks read as cores'
 * worth (a 30 ms run once read as 3.5 cores of steal on a 2-core machine). Over 500 ms a tick is
 * 0.02 cores, well under the busy thresholds (results/report/format.ts).
 */
export const MIN_INTERVAL_MS = 500;

export class ContentionMonitor {
  private first: CpuSnapshot | undefined;
  private last: CpuSnapshot | undefined;
  private peak = 0;
  private timer: NodeJS.Timeout | undefined;

  /** Starts sampling every `everyMs`; does nothing where no CPU times can be read. */
  start(everyMs = 1000): void {
    this.first = this.last = takeSnapshot();
    if (!this.first) return;
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  private sample(): CpuSnapshot | undefined {
    const now = takeSnapshot();
    if (!now || !this.last) return undefined;
    if (now.atMs - this.last.atMs < MIN_INTERVAL_MS) return now; // too short to tell (the run's last, say)
    const o = otherCpu(this.last, now, { reaped: false });
    this.peak = Math.max(this.peak, o.otherCores + o.stealCores);
    this.last = now;
    return now;
  }

  /** Stops and returns what was seen, or undefined where nothing could be measured (no CPU times, or a run under MIN_INTERVAL_MS). */
  stop(): RunContention | undefined {
    clearInterval(this.timer);
    const end = this.sample();
    if (!this.first || !end || end.atMs - this.first.atMs < MIN_INTERVAL_MS) return undefined;
    const all = otherCpu(this.first, end);
    const round = (x: number) => Math.round(x * 100) / 100;
    return {
      averageCores: round(all.otherCores + all.stealCores),
      peakCores: round(this.peak),
      stealCores: round(all.stealCores),
      programs: busiestPrograms(this.first, end),
      source: end.source,
    };
  }
}
