/**
 * Lesson 11's service: every request waits its turn for one worker (a pool of one, as a service
 * with one core for its work has), and the worker hashes the request's id with PBKDF2 on libuv's
 * thread pool. The queue is the service's own, in JavaScript: the experiment can read how long it
 * is, and empty it between passes, which libuv's own queue would not allow. The event loop stays
 * free while the queue grows, so its delay stays low: a shedder that reads only the loop's delay
 * (toobusy-js, overload-protection) never sees this overload.
 *
 * The worker does not look at whether a request's client is still there before it starts: the
 * naive service works for clients that have gone, and counts that work as wasted.
 */
import { pbkdf2 } from 'node:crypto';
import type http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * PBKDF2-SHA256 iterations per request: 2^15, about 9 ms of one core here (0.27 µs each, measured
 * with pbkdf2Sync on this 2-core machine); a faster laptop does it in less, and the run measures
 * its capacity rather than assuming one.
 */
export const ITERATIONS = 32_768;
/** The salt every hash uses: the answer to /hash?id=N is the same on every machine. */
const SALT = 'node-scaling-lab/lesson-11';
/** Bytes of key, shown as hex. */
const KEY_BYTES = 16;

/** The shedder's bound by default, ms: half the lesson's client timeout of 500 ms (see servers/exercises/lesson-11/fixed/shed.ts). */
export const DEFAULT_BOUND_MS = 250;
/** The range servers/overload.ts --bound takes, ms. */
export const MIN_BOUND_MS = 10;
export const MAX_BOUND_MS = 5000;

/** What a shedder sees of the service when a request arrives, before it joins the queue. */
export interface Load {
  /** Requests waiting for the worker, not counting the one it is on. */
  queued: number;
  /** Requests the worker is on: 0 or 1. */
  running: number;
  /** The worker's mean time per request over its last 20, ms (the first request's guess: 10 ms). */
  serviceMs: number;
  /** How long a request arriving now waits before its turn, estimated: (queued + running) × serviceMs, ms. */
  waitMs: number;
  /** The longest wait the run asks a shedder to let a request in for, ms (servers/overload.ts --bound). */
  boundMs: number;
}

/** How the queue answers a request once its turn comes and the hash is made. */
type Finish = (key: string) => void;

interface Job {
  id: number;
  res: http.ServerResponse;
  finish: Finish;
  arrivedAt: number;
  /** The client went away (its connection closed) before the answer was written. */
  gone: boolean;
}

/** A pass's figures, from the last reset: what the service did with the requests it got. */
export interface QueueStats {
  /** ms since the last reset. */
  sinceResetMs: number;
  /** Requests that joined the queue, and those answered by the worker. */
  accepted: number;
  finished: number;
  /** Of those finished, the ones whose client had gone: the work nobody received. */
  wasted: number;
  /** The worker's time spent on them, ms. */
  wastedMs: number;
  /** The worker's busy time over the time since the reset, 0 to 1. */
  busyShare: number;
  /** Refused by the shedder. */
  shed: number;
  queued: number;
  /** The longest the queue was since the reset. */
  maxQueued: number;
  /** The worker's mean time per request over its last 20 (see Load), ms. */
  serviceMs: number;
  /** Those last 20 times, oldest first, ms. */
  recentMs: number[];
  /** [ms since the reset, requests queued], every SAMPLE_MS. */
  queueSamples: [number, number][];
}

/** How often the queue's length is written down, ms. */
const SAMPLE_MS = 50;
/** Samples kept: 2 minutes of them, longer than any pass. */
const MAX_SAMPLES = 2400;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The jobs over which serviceMs is averaged. */
const SERVICE_WINDOW = 20;

/** The service's queue and its one worker. */
export class WorkQueue {
  private readonly jobs: Job[] = [];
  private head = 0;
  private running = 0;
  private readonly recent: number[] = [];
  private resetAt = performance.now();
  private busyMs = 0;
  private counts = { accepted: 0, finished: 0, wasted: 0, wastedMs: 0, shed: 0, maxQueued: 0 };
  private samples: [number, number][] = [];
  private readonly sampler: NodeJS.Timeout;

  constructor(
    private readonly boundMs: number,
    private readonly iterations = ITERATIONS,
  ) {
    this.sampler = setInterval(() => {
      if (this.samples.length < MAX_SAMPLES)
        this.samples.push([Math.round(performance.now() - this.resetAt), this.queued()]);
    }, SAMPLE_MS);
    this.sampler.unref();
  }

  /** Requests waiting, not counting the one the worker is on. */
  queued(): number {
    return this.jobs.length - this.head;
  }

  /** What a shedder reads (see Load). */
  load(): Load {
    const serviceMs = this.recent.length ? mean(this.recent) : 10;
    const queued = this.queued();
    return {
      queued,
      running: this.running,
      serviceMs,
      waitMs: (queued + this.running) * serviceMs,
      boundMs: this.boundMs,
    };
  }

  /** A request the shedder refused. */
  countShed(): void {
    this.counts.shed++;
  }

  /** Puts the request for `id` in line; `finish` writes its answer once its hash is made. */
  add(id: number, res: http.ServerResponse, finish: Finish): void {
    const job: Job = { id, res, finish, arrivedAt: performance.now(), gone: false };
    res.on('close', () => {
      if (!res.writableFinished) job.gone = true;
    });
    this.jobs.push(job);
    this.counts.accepted++;
    this.counts.maxQueued = Math.max(this.counts.maxQueued, this.queued());
    this.next();
  }

  private next(): void {
    if (this.running > 0 || this.head >= this.jobs.length) return;
    const job = this.jobs[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.jobs.length) {
      this.jobs.splice(0, this.head); // keep the array from growing with every request ever queued
      this.head = 0;
    }
    this.running = 1;
    const started = performance.now();
    const epoch = this.resetAt;
    const done = (err: Error | null, key: Buffer) => {
      const ms = performance.now() - started;
      this.running = 0;
      if (epoch === this.resetAt) {
        this.busyMs += ms;
        this.counts.finished++;
        if (job.gone) {
          this.counts.wasted++;
          this.counts.wastedMs += ms;
        }
      }
      this.recent.push(ms);
      if (this.recent.length > SERVICE_WINDOW) this.recent.shift();
      if (!job.gone) {
        if (err) job.res.destroy(err);
        else job.finish(key.toString('hex'));
      }
      this.next();
    };
    pbkdf2(String(job.id), SALT, this.iterations, KEY_BYTES, 'sha256', done);
  }

  /** This pass's figures so far. */
  stats(): QueueStats {
    const sinceResetMs = performance.now() - this.resetAt;
    return {
      sinceResetMs: Math.round(sinceResetMs),
      ...this.counts,
      wastedMs: Math.round(this.counts.wastedMs),
      busyShare: sinceResetMs > 0 ? Math.min(1, this.busyMs / sinceResetMs) : 0,
      queued: this.queued(),
      serviceMs: this.load().serviceMs,
      recentMs: [...this.recent],
      queueSamples: this.samples,
    };
  }

  /**
   * Ends a pass: returns its figures, drops every request still waiting (their connections are
   * closed: the experiment's clients have given up on them already) and starts the counts again.
   * The hash the worker is on finishes, uncounted.
   */
  reset(): QueueStats {
    const s = this.stats();
    for (let i = this.head; i < this.jobs.length; i++) this.jobs[i]!.res.destroy();
    this.jobs.length = 0;
    this.head = 0;
    this.resetAt = performance.now();
    this.busyMs = 0;
    this.counts = { accepted: 0, finished: 0, wasted: 0, wastedMs: 0, shed: 0, maxQueued: 0 };
    this.samples = [];
    return s;
  }

  close(): void {
    clearInterval(this.sampler);
  }
}
