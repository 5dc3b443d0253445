/**
 * Result, tables and shape of the `rolling-restart` experiment (lesson 6): a cluster's workers are
 * replaced one at a time while load runs; nothing may fail and every worker must be new. Pure.
 */
import type { TimelineSecond } from '../report/timeline.ts';
import { fmtMs, machineCaption, makeChalk, type MachineInfo } from '../report/format.ts';
import { line } from '../report/shape.ts';
import { renderTimeline } from '../report/timeline.ts';

export interface RollingRestartResult {
  machine: MachineInfo;
  workers: number;
  load: { connections: number; route: string };
  /** When the restart was asked for and when it finished, s from the start of the load. */
  restartAtS: number;
  doneAtS: number;
  /** One entry per replaced worker, in order: old pid, new pid, and how long the step took (ms). */
  steps: { old: number; pid: number; ms: number }[];
  /** Worker pids that answered before the restart, and after it (fresh connections). */
  pidsBefore: number[];
  pidsAfter: number[];
  timeline: TimelineSecond[];
  totals: { completed: number; non2xx: number; errors: number; p99: number; max: number };
  /** Requests completed between the restart's start and its end. */
  duringRestart: number;
}

export function shape(r: RollingRestartResult): string[] {
  const oldPids = new Set(r.steps.map((s) => s.old));
  const replacedAll =
    r.pidsBefore.length > 0 && r.pidsBefore.every((p) => oldPids.has(p)) && r.steps.length === r.workers;
  return [
    line('rolling-restart', 'non-2xx', r.totals.non2xx === 0 ? 'none' : 'some'),
    line('rolling-restart', 'errors', r.totals.errors === 0 ? 'none' : 'some'),
    line('rolling-restart', 'requests-during-restart', r.duringRestart > 0 ? 'some' : 'none'),
    line('rolling-restart', 'workers-replaced', replacedAll ? 'all' : 'not-all'),
    line(
      'rolling-restart',
      'old-pids-answering-after',
      r.pidsAfter.length > 0 && r.pidsAfter.every((p) => !oldPids.has(p)) ? 'none' : 'some',
    ),
  ];
}

export const hints: Record<string, string> = {
  'rolling-restart':
    'each new worker must listen before the old one drains, and a draining worker answers with Connection: close instead of dropping its keep-alive connections',
};

export function render(r: RollingRestartResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const marks: Record<number, string> = { [Math.floor(r.restartAtS)]: '← rolling restart begins' };
  marks[Math.floor(r.doneAtS)] =
    (marks[Math.floor(r.doneAtS)] ? marks[Math.floor(r.doneAtS)] + ', ' : '← ') + 'all workers replaced';
  const errors = r.totals.non2xx + r.totals.errors;
  return [
    c.bold(`Lesson 6 · rolling restart of a ${r.workers}-worker cluster under load`),
    c.dim(`${r.load.connections} keep-alive connections on ${r.load.route} · ${caption}`),
    renderTimeline(r.timeline, marks, color),
    ...r.steps.map(
      (s, i) => `  step ${i + 1}: worker ${s.pid} listening, then ${s.old} drained and exited (${fmtMs(s.ms)})`,
    ),
    `${r.totals.completed} requests, ${r.duringRestart} of them during the restart; ${errors ? c.red(`${errors} failed`) : c.green('none failed')}; p99 ${fmtMs(r.totals.p99)}, max ${fmtMs(r.totals.max)}.`,
    `Workers answering before: ${r.pidsBefore.join(', ')}; after: ${r.pidsAfter.join(', ')}.`,
  ].join('\n');
}
