/**
 * wrk, an independent load generator in C (Debian's and Homebrew's `wrk` package), as a cross-check
 * of autocannon: the same closed loop of keep-alive connections, one thread, a bounded duration,
 * loopback only. Its CPU time is read with bash's `times` (the CPU its children used), which works
 * alike on Linux and macOS; wrk itself does not report it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { KitError } from '../../../lib/errors.ts';
import { assertLoopback } from './probe.ts';

/** What a run of wrk measured, or why there was none. */
type WrkRun = { requestsPerS: number; p50Ms: number; generatorCpu: number } | { missing: string } | { failed: string };

/** How to install wrk, for the line that says it is missing. */
export const WRK_MISSING =
  'wrk is not installed, so it was not run beside autocannon (Debian/Ubuntu: sudo apt-get install wrk; macOS: brew install wrk)';

/** wrk's path: on PATH, or in Debian's, Homebrew's or MacPorts' folders; undefined when there is none. */
export function findWrk(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = [
    ...(env.PATH ?? '').split(path.delimiter).filter(Boolean),
    '/usr/bin',
    '/usr/local/bin',
    '/opt/homebrew/bin',
    '/opt/local/bin',
  ];
  return dirs.map((d) => path.join(d, 'wrk')).find((p) => existsSync(p));
}

/** A wrk time with its unit (`812.00us`, `1.23ms`, `2.01s`) in ms. */
function wrkMs(value: string, unit: string): number {
  const n = Number(value);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n;
}

/** The figures of wrk's --latency output and bash's `times` after it; undefined when they are not there. */
export function parseWrk(
  text: string,
  wallS: number,
): { requestsPerS: number; p50Ms: number; generatorCpu: number } | undefined {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  const p50 = /^\s*50%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(text);
  // `times` prints two lines: the shell's own user and system time, then its children's.
  const times = [...text.matchAll(/^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/gm)];
  const children = times[1];
  if (!rps || !p50 || !children) return undefined;
  const cpuS = Number(children[1]) * 60 + Number(children[2]) + Number(children[3]) * 60 + Number(children[4]);
  return { requestsPerS: Number(rps[1]), p50Ms: wrkMs(p50[1]!, p50[2]!), generatorCpu: cpuS / wallS };
}

/**
 * Runs wrk against `url` (one thread, `connections` keep-alive connections, `durationS`), and
 * returns its req/s, p50 and CPU (cores); `missing` where wrk is not installed. wrk and the bash
 * that times it are killed if this process exits first.
 */
export async function runWrk(url: string, connections: number, durationS: number): Promise<WrkRun> {
  assertLoopback(new URL(url));
  if (!(durationS > 0 && durationS <= 120))
    throw new KitError('KIT_ERR_USAGE', `a load run lasts from 0 to 120 s; got ${durationS}`);
  const wrk = findWrk();
  if (wrk === undefined) return { missing: WRK_MISSING };
  // wrk takes whole seconds.
  const args = ['-t1', `-c${connections}`, `-d${Math.max(1, Math.round(durationS))}s`, '--latency', url];
  const started = performance.now();
  // LC_ALL=C: bash prints `times` with the locale's decimal mark (0m0,003s in German). Its own
  // process group, so that a kill reaches wrk under bash too.
  const child = spawn('bash', ['-c', '"$0" "$@"; code=$?; times; exit $code', wrk, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_ALL: 'C' },
    detached: true,
  });
  const kill = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', kill);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  const code = await new Promise<number | null | 'no bash'>((resolve) => {
    child.once('error', () => resolve('no bash'));
    child.once('exit', (c) => resolve(c));
  });
  process.off('exit', kill);
  if (code === 'no bash') return { failed: 'bash, which times wrk, could not be started' };
  const parsed = parseWrk(out, (performance.now() - started) / 1000);
  if (code === 0 && parsed) return parsed;
  // wrk's own complaint, not the `times` lines after it.
  const said = `${err}\n${out}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^\d+m[\d.]+s \d+m[\d.]+s$/.test(l));
  return { failed: `wrk exited ${code}: ${said.at(-1) ?? 'no output'}` };
}
