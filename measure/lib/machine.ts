/**
 * This machine, measured: its cores and Node version, and how busy its cores are (os.cpus() times,
 * on every platform). What other programs use while a run goes on is measure/lib/contention.ts.
 */
import os from 'node:os';
import type { MachineInfo } from '../../results/format.ts';

/**
 * Cores' worth of CPU in use on the whole machine over the next `ms`, from os.cpus() times
 * (0.0 = idle, 2.0 = two cores busy). Measured before a run starts, it tells whether other
 * programs compete with the experiment, which the load average (a minute-long decaying mean that
 * still holds the previous run) cannot.
 */
export async function measureBusyCores(ms = 250): Promise<number> {
  const a = cpuTimes();
  await new Promise((r) => setTimeout(r, ms));
  return busyCoresBetween(a, cpuTimes());
}

/** The machine's CPU times so far (os.cpus(), every platform), for busyCoresBetween. */
export function cpuTimes(): { total: number; idle: number; cores: number } {
  const cpus = os.cpus();
  return cpus.reduce(
    (acc, c) => {
      const t = c.times;
      acc.total += t.user + t.nice + t.sys + t.idle + t.irq;
      acc.idle += t.idle;
      return acc;
    },
    { total: 0, idle: 0, cores: cpus.length },
  );
}

/** Cores' worth of CPU the whole machine used between two cpuTimes() readings (every process, the kit's too). */
export function busyCoresBetween(a: ReturnType<typeof cpuTimes>, b: ReturnType<typeof cpuTimes>): number {
  const total = b.total - a.total;
  if (total <= 0) return 0;
  const busyShare = 1 - (b.idle - a.idle) / total;
  return Math.round(busyShare * b.cores * 100) / 100;
}

/** Reads the machine's cores (os.availableParallelism), how busy they are, and Node's version. */
export async function machineInfo(): Promise<MachineInfo> {
  return {
    cores: os.availableParallelism(),
    loadavg1: Math.round(os.loadavg()[0]! * 100) / 100,
    busyCoresAtStart: await measureBusyCores(),
    node: process.versions.node,
    platform: `${process.platform}-${process.arch}`,
  };
}

