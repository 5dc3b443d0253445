/**
 * What --profile prints after the run: per process, the functions that took the most time
 * themselves (self time), with their TypeScript file and line, per window; and where the files are.
 */
import path from 'node:path';
import { makeChalk, makeTable } from '../../../results/report/format.ts';
import type { ProcessProfile } from './collect.ts';

/** How many functions each process and window lists. */
const TOP = 8;

/** The profiles as tables for people: `dir` is the folder the files went to, `cost` what profiling cost (cost.ts). */
export function renderProfiles(profiles: ProcessProfile[], dir: string, color: boolean, cost?: string): string {
  const c = makeChalk(color);
  const out = [
    c.bold(
      `Profiles (--profile): ${profiles.length} process(es), written to ${path.relative(process.cwd(), dir) || dir}/`,
    ),
  ];
  out.push(c.dim('  each Node process writes its profile when it exits; one killed with SIGKILL writes none'));
  if (cost) out.push(`  ${cost}`);
  for (const p of profiles) {
    for (const w of p.windows) {
      const ms = w.selfTimes.reduce((n, s) => n + s.selfMs, 0);
      const idle = w.selfTimes.find((s) => s.functionName === '(idle)');
      const busy = `${ms.toFixed(0)} ms of samples, ${Math.round((idle?.share ?? 0) * 100)} % of them idle`;
      out.push('', c.bold(`${p.name} (pid ${p.pid}), ${w.label}: ${busy}; the heaviest functions by self time`));
      const table = makeTable(['function', 'where', 'self ms', 'share'], ['left', 'left', 'right', 'right']);
      for (const s of w.selfTimes.filter((x) => x !== idle).slice(0, TOP)) {
        table.push([s.functionName, s.where, s.selfMs.toFixed(0), `${Math.round(s.share * 100)} %`]);
      }
      out.push(w.samples ? table.toString() : '  no samples in this window');
    }
    if (p.files)
      out.push(c.dim(`  flame graph: ${p.files.html}\n  DevTools (Performance, Load profile): ${p.files.cpuprofile}`));
  }
  return out.join('\n') + '\n';
}
