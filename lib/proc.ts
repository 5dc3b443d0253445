/**
 * Where the kit reads CPU times, in one place. On Linux, /proc: a process's state, parent, group,
 * name and CPU times (/proc/<pid>/stat, proc(5)), and the machine's CPU times (/proc/stat). Where
 * there is no /proc (macOS), the same from what every Unix has: each process from `ps`, the
 * machine from os.cpus() (no steal there). CPU times are in clock ticks of 10 ms (USER_HZ, 100 a
 * second on Linux), whatever the source. readStat and listPids read /proc only (undefined or an
 * empty list without it): they serve tests and the lab's stop, which need the state at once.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where CPU times come from: Linux's /proc, or os.cpus() and ps (see the header). */
export type CpuSource = 'proc' | 'ps';

/**
 * The source on this machine: /proc where /proc/stat exists, else ps. NSL_CPU_SOURCE=ps forces
 * the fallback, so that a test on Linux can play macOS and compare the two.
 */
export function cpuSource(env: NodeJS.ProcessEnv = process.env): CpuSource {
  if (env.NSL_CPU_SOURCE === 'ps') return 'ps';
  return existsSync('/proc/stat') ? 'proc' : 'ps';
}

/** Clock ticks a second in /proc (USER_HZ; 100 on every Linux the kit runs on). */
export const TICKS_PER_S = 100;

export interface ProcStat {
  pid: number;
  /** R running, S sleeping, T stopped, Z zombie, ... */
  state: string;
  ppid: number;
  pgid: number;
  /** CPU this process used (user + system), ticks. */
  ownTicks: number;
  /** CPU its children used that it has waited for (cutime + cstime), ticks; 0 from ps, which has no such column. */
  reapedChildrenTicks: number;
  /** The program's name (/proc's comm, ps's command without its folder; see programName), for "which programs were busy". */
  name: string;
}

/** A main thread's name as Node sets it (24: "MainThread", 26: "node-MainThread"), not a program's. */
const MAIN_THREAD_NAME = /^(node-)?MainThread$/;

/**
 * What a process's name means to a reader: its comm, except where comm is the name a program gave
 * its main thread rather than the program's own. Node names its main thread "MainThread" from
 * version 24 and "node-MainThread" from 26, and on Linux comm is the main thread's name, so /proc
 * and procps's ps both give that for every Node process; then the executable's name is read from
 * argv[0] in /proc/<pid>/cmdline. macOS's ps prints the executable's path as comm, so it never
 * needs this.
 */
export function programName(comm: string, pid: number): string {
  if (!MAIN_THREAD_NAME.test(comm)) return comm;
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    return argv0 ? path.basename(argv0) : comm;
  } catch {
    return comm;
  }
}

/** /proc/<pid>/stat, or undefined when there is no such process (or no /proc). */
export function readStat(pid: number | 'self'): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after its last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(f[i]);
  return {
    pid: pid === 'self' ? Number(text.slice(0, text.indexOf(' '))) : pid,
    name: programName(text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), pid === 'self' ? process.pid : pid),
    state: f[0]!,
    ppid: n(1),
    pgid: n(2),
    ownTicks: n(11) + n(12),
    reapedChildrenTicks: n(13) + n(14),
  };
}

/** Every pid in /proc now (empty without /proc). */
export function listPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((e) => /^\d+$/.test(e))
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * A CPU time as ps prints it, in seconds: procps's `[DD-]HH:MM:SS` (whole seconds) or macOS's
 * `M:SS.cc` (hundredths). NaN when it is neither.
 */
export function parsePsTime(text: string): number {
  const m = /^(?:(\d+)-)?((?:\d+:)*\d+(?:\.\d+)?)$/.exec(text.trim());
  if (!m) return NaN;
  const seconds = m[2]!.split(':').reduce((acc, part) => acc * 60 + Number(part), 0);
  return Number(m[1] ?? 0) * 86_400 + seconds;
}

/** The lines of `ps -A -o pid=,ppid=,pgid=,stat=,time=,comm=`, by pid (macOS's comm may hold spaces: it is the rest of the line). Pure. */
export function parsePs(text: string): Map<number, ProcStat> {
  const out = new Map<number, ProcStat>();
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const seconds = parsePsTime(m[5]!);
    if (!Number.isFinite(seconds)) continue;
    const pid = Number(m[1]);
    out.set(pid, {
      pid,
      ppid: Number(m[2]),
      pgid: Number(m[3]),
      state: m[4]![0]!,
      ownTicks: Math.round(seconds * TICKS_PER_S),
      reapedChildrenTicks: 0,
      name: path.basename(m[6]!.trim()),
    });
  }
  return out;
}

/** Every process from ps (about 20 ms with 300 processes), or an empty map where ps cannot run. */
function psStats(): Map<number, ProcStat> {
  try {
    const stats = parsePs(
      execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,time=,comm='], {
        encoding: 'utf8',
        timeout: 5000,
        stdio: ['ignore', 'pipe', 'ignore'],
        maxBuffer: 16 * 1024 * 1024,
      }),
    );
    for (const st of stats.values()) st.name = programName(st.name, st.pid);
    return stats;
  } catch {
    return new Map();
  }
}

/** Every process's stat now, by pid, from `source` (this machine's by default). */
export function allStats(source: CpuSource = cpuSource()): Map<number, ProcStat> {
  if (source === 'ps') return psStats();
  const out = new Map<number, ProcStat>();
  for (const pid of listPids()) {
    const st = readStat(pid);
    if (st) out.set(pid, st);
  }
  return out;
}

/** `root` and every live process below it, from a table of stats. */
export function descendants(stats: Map<number, ProcStat>, root: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const st of stats.values()) {
    const list = children.get(st.ppid) ?? [];
    list.push(st.pid);
    children.set(st.ppid, list);
  }
  const out = new Set<number>();
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop()!;
    if (out.has(pid)) continue;
    out.add(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** The machine's CPU time, ticks: /proc/stat's first line, or os.cpus(). */
export interface MachineTicks {
  /** user + nice + system + irq + softirq (guest time is already inside user). */
  busy: number;
  /** Time the hypervisor gave to other virtual machines while this one wanted to run. */
  steal: number;
  idle: number;
}

/** The machine's CPU time from `source` (this machine's by default): /proc/stat, or os.cpus() with no steal. */
export function machineTicks(source: CpuSource = cpuSource()): MachineTicks | undefined {
  if (source === 'ps') return cpusTicks();
  let text: string;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  const f = text.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  return { busy: user + nice + system + irq + softirq, steal, idle: idle + iowait };
}

/** The machine's CPU time from os.cpus() (every platform; ms, turned into ticks), with no steal: no such count there. */
function cpusTicks(): MachineTicks {
  let busy = 0;
  let idle = 0;
  for (const { times: t } of os.cpus()) {
    busy += t.user + t.nice + t.sys + t.irq;
    idle += t.idle;
  }
  const perTick = 1000 / TICKS_PER_S;
  return { busy: busy / perTick, steal: 0, idle: idle / perTick };
}
