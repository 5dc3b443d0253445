/**
 * The in-process throttle (lesson 8): holds a worker to its CPU quota where no cgroup can (macOS,
 * Windows, a Linux user without permission). The worker reads its own CPU time
 * (`process.cpuUsage()`, every thread, libuv's thread pool included) every CHECK_MS and asks the
 * primary to pause it when it is in debt; the primary stops the whole process (SIGSTOP) and
 * continues it (SIGCONT) after the asked-for time, since a stopped process cannot wake itself.
 *
 * Two bookkeepings:
 *   bucket  (the default) credit refills continuously at `quota` ms per ms, up to
 *           THROTTLE_BUCKET_MS of quota; a pause lasts only as long as the debt needs, so there is
 *           no "wait for the next period" tail.
 *   period  (with a period, `--quota-period-ms`) like CFS bandwidth control: the quota × period
 *           of CPU is granted at each period boundary, and a worker that spent it waits for the
 *           next boundary (kernel docs, Documentation/scheduler/sched-bwc.rst). A debt (CPU used
 *           between two checks beyond the grant) is carried into the next periods.
 */
import { performance } from 'node:perf_hooks';

/**
 * The bucket holds this many ms of quota (25 ms of CPU at 0.25 core). A smaller bucket made the
 * throttle deliver less than its quota (measured: 0.38 of a 0.5 core quota with a 20 ms bucket),
 * since every late resume then wastes credit the bucket cannot hold.
 */
const THROTTLE_BUCKET_MS = 100;
/** How often a throttled worker checks its CPU time, ms; IDLE_CHECK_MS while it uses under IDLE_SHARE of its quota. */
const CHECK_MS = 10;
const IDLE_CHECK_MS = 100;
const IDLE_SHARE = 0.1;
/** Longest pause the throttle asks for at once, ms; a larger debt is paid over several pauses. */
export const MAX_PAUSE_MS = 2000;

/**
 * The bucket's bookkeeping, pure: given CPU used and wall time passed since the last check,
 * returns the new credit and how long to pause (0 for none). Credit is in ms of CPU and holds at
 * most quota × period (unused quota does not pile up).
 */
export function throttleStep(
  creditMs: number,
  usedMs: number,
  elapsedMs: number,
  quota: number,
  periodMs = THROTTLE_BUCKET_MS,
): { creditMs: number; pauseMs: number } {
  const credit = Math.min(quota * periodMs, creditMs + quota * elapsedMs) - usedMs;
  if (credit >= 0) return { creditMs: credit, pauseMs: 0 };
  // During the pause the credit refills by quota × pauseMs, back to zero.
  return { creditMs: credit, pauseMs: -credit / quota };
}

/** The period bookkeeping's state: credit in ms of CPU, and the period it was last granted in. */
interface PeriodState {
  creditMs: number;
  period: number;
}

/**
 * The period bookkeeping, pure: `nowMs` since the throttle began (periods start at 0, P, 2P...),
 * `usedMs` of CPU since the last check. Each boundary crossed grants quota × P, up to quota × P in
 * hand; in debt, the pause lasts until the boundary whose grant clears the debt. `chargeFirst`
 * books the CPU before the grants of the boundaries crossed since the last check, as when it was
 * used at the start of that stretch (a request's work before its synchronous wait); by default it
 * is booked after them, the stricter choice when the stretch may have been idle first.
 */
export function periodStep(
  s: PeriodState,
  usedMs: number,
  nowMs: number,
  quota: number,
  periodMs: number,
  chargeFirst = false,
): { state: PeriodState; pauseMs: number } {
  const grant = quota * periodMs;
  const period = Math.floor(nowMs / periodMs);
  const grants = Math.max(0, period - s.period) * grant;
  const credit = chargeFirst
    ? Math.min(grant, s.creditMs - usedMs + grants)
    : Math.min(grant, s.creditMs + grants) - usedMs;
  const state = { creditMs: credit, period };
  if (credit >= 0) return { state, pauseMs: 0 };
  const grantsNeeded = Math.ceil(-credit / grant);
  return { state, pauseMs: (period + grantsNeeded) * periodMs - nowMs };
}

/**
 * Starts the throttle: every CHECK_MS (IDLE_CHECK_MS when idle) it reads process.cpuUsage() and,
 * in debt, calls `pause(ms)`, which must stop the process for that long (the primary sends
 * SIGSTOP, then SIGCONT; a lone replica blocks its own main thread). `periodMs` picks the period
 * bookkeeping (with `chargeFirst`, see periodStep); without it, the bucket. Returns `stop`, and `check`, which checks at once: a
 * server whose event loop is blocked for long stretches (a synchronous database call) calls it as
 * each request arrives, since a late timer would see the CPU of many periods as one period's debt.
 */
export function startThrottle(
  quota: number,
  pause: (ms: number) => void,
  periodMs?: number,
  chargeFirst = false,
): { stop: () => void; check: () => void } {
  const began = performance.now();
  let bucket = quota * THROTTLE_BUCKET_MS;
  let periods: PeriodState = { creditMs: quota * (periodMs ?? 0), period: 0 };
  let lastCpu = process.cpuUsage();
  let lastAt = began;
  let pausedUntil = 0;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    clearTimeout(timer);
    const now = performance.now();
    const cpu = process.cpuUsage();
    const usedMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
    const elapsedMs = now - lastAt;
    let pauseMs: number;
    if (periodMs) {
      const step = periodStep(periods, usedMs, now - began, quota, periodMs, chargeFirst);
      periods = step.state;
      pauseMs = step.pauseMs;
    } else {
      const step = throttleStep(bucket, usedMs, elapsedMs, quota);
      bucket = step.creditMs;
      pauseMs = step.pauseMs;
    }
    lastCpu = cpu;
    lastAt = now;
    // A pause already asked for may not have begun yet (the primary's signal is on its way).
    if (pauseMs >= 1 && now >= pausedUntil) {
      const ms = Math.min(MAX_PAUSE_MS, pauseMs);
      pausedUntil = now + ms;
      pause(Math.round(ms));
    }
    // An idle worker checks ten times less often: the checks themselves cost CPU, which an idle
    // worker's utilization would show (measured: 5-9 % of a 0.25 quota at every 10 ms, enough for
    // eight idle workers to keep the autoscaler at 2). A burst after an idle spell runs unchecked
    // for at most IDLE_CHECK_MS; the debt it leaves is paid in the next pause.
    const busy = usedMs >= IDLE_SHARE * quota * elapsedMs;
    timer = setTimeout(check, busy ? CHECK_MS : IDLE_CHECK_MS);
    timer.unref();
  };
  timer = setTimeout(check, CHECK_MS);
  timer.unref();
  return { stop: () => clearTimeout(timer), check };
}
