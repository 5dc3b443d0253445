/**
 * A rolling restart of the cluster's workers (`{ cmd: 'rolling-restart' }` over IPC, or SIGHUP):
 * every worker is replaced, one at a time. A new worker is forked and listening before the old one
 * gets SIGTERM; the old one then drains (it stops taking connections, finishes its requests,
 * answers with `Connection: close` so keep-alive clients reconnect to another worker; serve() in
 * ../serve/main.ts) and exits without being replaced again. The launcher gets `rolling-restart-step`
 * per worker, then `rolling-restart-done` or `rolling-restart-failed`.
 */
import type { Worker } from 'node:cluster';
import type { Supervisor } from './supervisor.ts';

/** How long a new worker may take to listen, and an old one to drain, ms. */
const STEP_TIMEOUT_MS = 15_000;

/** Resolves when `event` fires for worker `w`, rejects after `ms` or if it exits first. */
function waitFor(w: Worker, event: 'listening' | 'exit', ms: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`worker ${w.process.pid} did not reach '${event}' within ${ms} ms`)),
      ms,
    );
    const onEvent = () => done();
    const onExit = () =>
      done(event === 'exit' ? undefined : new Error(`worker ${w.process.pid} exited before listening`));
    const done = (err?: Error) => {
      clearTimeout(timer);
      w.off(event, onEvent);
      w.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    w.once(event, onEvent);
    if (event !== 'exit') w.once('exit', onExit);
  });
}

/** Replaces every worker of `s`, one at a time: the new one listens before the old one drains. */
export async function rollingRestart(s: Supervisor): Promise<void> {
  if (s.rolling || s.shuttingDown) {
    s.tell({
      event: 'rolling-restart-failed',
      reason: s.rolling ? 'a rolling restart is already running' : 'shutting down',
    });
    return;
  }
  s.rolling = true;
  const replaced: { old: number; pid: number }[] = [];
  try {
    const old = s.living().filter((w) => s.listening.has(w.id) && !s.retiring.has(w.id));
    s.say(`rolling restart: replacing ${old.length} worker(s) one at a time`);
    for (const w of old) {
      if (s.shuttingDown) throw new Error('shutting down');
      const next = s.fork();
      await waitFor(next, 'listening', STEP_TIMEOUT_MS);
      const gone = waitFor(w, 'exit', STEP_TIMEOUT_MS);
      s.retire(w); // the worker drains, then exits
      await gone;
      const step = { old: w.process.pid!, pid: next.process.pid! };
      replaced.push(step);
      s.say(`rolling restart: worker ${step.pid} took over from ${step.old}`);
      s.tell({ event: 'rolling-restart-step', ...step });
    }
    s.say(`rolling restart: done, ${replaced.length} worker(s) replaced`);
    s.tell({ event: 'rolling-restart-done', replaced });
  } catch (err) {
    s.say(`rolling restart: failed: ${(err as Error).message}`);
    s.tell({ event: 'rolling-restart-failed', reason: (err as Error).message, replaced });
  } finally {
    s.rolling = false;
  }
}
