/**
 * Linux's /proc, read in one place: a process's state, parent, group and CPU times
 * (/proc/<pid>/stat, proc(5)), and the machine's CPU times (/proc/stat). Everything returns
 * undefined (or an empty list) where there is no /proc, as on macOS. CPU times are in clock ticks
 * (USER_HZ, 100 a second on Linux: 10 ms each).
 */
import { readdirSync, readFileSync } from 'node:fs';

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
  /** CPU its children used that it has waited for (cutime + cstime), ticks. */
  reapedChildrenTicks: number;
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
    return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number);
  } catch {
    return [];
  }
}

/** Every process's stat now, by pid. */
export function allStats(): Map<number, ProcStat> {
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

/** The machine's CPU time from the first line of /proc/stat, ticks. */
export interface MachineTicks {
  /** user + nice + system + irq + softirq (guest time is already inside user). */
  busy: number;
  /** Time the hypervisor gave to other virtual machines while this one wanted to run. */
  steal: number;
  idle: number;
}

export function machineTicks(): MachineTicks | undefined {
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
