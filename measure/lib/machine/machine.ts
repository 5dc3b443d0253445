/**
 * This machine, measured: its cores and Node version, and how busy its cores are (os.cpus() times,
 * on every platform). What other programs use while a run goes on is measure/lib/machine/contention.ts.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import type { MachineInfo } from '../../../results/report/format.ts';
import { findNginx } from '../../../servers/lib/balancer/nginx-config.ts';
import { findRedis } from '../../../servers/lib/state/redis-binary.ts';

/**
 * Cores' worth of CPU in use on the whole machine over the next `ms`, from os.cpus() times
 * (0.0 = idle, 2.0 = two cores busy). Measured before a run starts, it tells whether other
 * programs compete with the experiment, which the load average (a minute-long decaying mean that
 * still holds the previous run) cannot.
 */
async function measureBusyCores(ms = 250): Promise<number> {
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

/**
 * The version a program prints (`nginx -v`, `redis-server --version`), or null when it is not
 * installed or does not answer within 2 s. Lessons 4 and 5 need them; the class roll-up shows them.
 */
async function versionOf(find: () => string, args: string[], pattern: RegExp): Promise<string | null> {
  let bin: string;
  try {
    bin = find();
  } catch {
    return null;
  }
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 2000, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      const m = pattern.exec(`${stdout}${stderr}`);
      resolve(err || !m ? null : m[1]!);
    });
  });
}

/** nginx's and redis-server's versions on this machine (null where one is missing). */
export async function toolVersions(): Promise<{ nginx: string | null; redis: string | null }> {
  const [nginx, redis] = await Promise.all([
    versionOf(findNginx, ['-v'], /nginx\/(\S+)/),
    versionOf(findRedis, ['--version'], /v=(\S+)/),
  ]);
  return { nginx, redis };
}

/** Reads the machine's cores (os.availableParallelism), how busy they are, Node's version, and nginx's and Redis's. */
export async function machineInfo(): Promise<MachineInfo> {
  // One after the other: starting nginx -v and redis-server would count as busy cores.
  const tools = await toolVersions();
  const busyCoresAtStart = await measureBusyCores();
  return {
    cores: os.availableParallelism(),
    loadavg1: Math.round(os.loadavg()[0]! * 100) / 100,
    busyCoresAtStart,
    node: process.versions.node,
    platform: `${process.platform}-${process.arch}`,
    ...tools,
  };
}
