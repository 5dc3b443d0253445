/**
 * Runs a SimSession in the page: every animation frame it moves simulated time on (at the clock's
 * pace, or for as long as a frame's budget allows), stops at each whole second to read that
 * second, and hands the second and the replicas to the page. No Node.js APIs.
 */
import { SimSession, type ReplicaNow, type SecondStats } from '../../sim/engine.ts';
import type { SimConfig } from '../../sim/types.ts';

/** One whole simulated second, as the charts plot it. */
export interface SecondPoint extends SecondStats {
  /** Requests tried on more than one replica, and failed answers, in this second. */
  retried: number;
  /** Answers per second (= completed). */
  throughput: number;
}

interface RunnerView {
  second(point: SecondPoint): void;
  frame(replicas: ReplicaNow[], now: number): void;
  finished(session: SimSession): void;
}

/** Simulated ms of work per frame in "fast" mode before the page is given back, wall ms. */
const FRAME_BUDGET_MS = 12;
/** Events handled between two looks at the clock in "fast" mode. */
const CHUNK = 2000;

export class Runner {
  readonly session: SimSession;
  private nextSecond = 1;
  private retriedBefore = 0;
  private lastWall: number | undefined;
  private handle: number | undefined;
  private stopped = false;

  constructor(
    config: SimConfig,
    private readonly fast: boolean,
    private readonly view: RunnerView,
  ) {
    this.session = new SimSession(config);
  }

  start(): void {
    this.handle = requestAnimationFrame((t) => this.tick(t));
  }

  stop(): void {
    this.stopped = true;
    if (this.handle !== undefined) cancelAnimationFrame(this.handle);
  }

  get running(): boolean {
    return !this.stopped;
  }

  private tick(wall: number): void {
    if (this.stopped) return;
    const s = this.session;
    if (this.fast) {
      const until = performance.now() + FRAME_BUDGET_MS;
      while (!s.done && performance.now() < until) this.step(Infinity, CHUNK);
    } else {
      const elapsed = this.lastWall === undefined ? 0 : Math.min(wall - this.lastWall, 250); // a tab in the background does not jump ahead
      this.step(s.now + elapsed, Infinity);
    }
    this.lastWall = wall;
    this.view.frame(s.replicas(), s.now);
    if (s.done) {
      this.stopped = true;
      this.view.finished(s);
      return;
    }
    this.handle = requestAnimationFrame((t) => this.tick(t));
  }

  /** Advances to `toMs` or by `maxEvents`, stopping at each whole second to report it. */
  private step(toMs: number, maxEvents: number): void {
    const s = this.session;
    let budget = maxEvents;
    while (budget > 0) {
      const boundary = this.nextSecond * 1000;
      const target = Math.min(toMs, boundary);
      budget -= s.advance(target, budget);
      if (s.now < boundary && !s.done) return; // the target or the budget came first
      this.report(this.nextSecond - 1);
      this.nextSecond++;
      if (s.done || boundary >= toMs) return;
    }
  }

  private report(second: number): void {
    const stats = this.session.takeSecond(second);
    const retried = this.session.world.metrics.retried;
    this.view.second({ ...stats, retried: retried - this.retriedBefore, throughput: stats.completed });
    this.retriedBefore = retried;
  }
}
