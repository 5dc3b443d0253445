/**
 * One live run of the Traffic Lab: the real lab, started through the harness (measure/lib): N
 * replicas and the kit's balancer on free loopback ports, and a bounded load on the balancer's
 * CPU route (/work?ms=): autocannon's closed loop, or with a rate the kit's open loop
 * (measure/lib/load/open-loop.ts). Once a second it reads the balancer's /__lb/stats and each
 * replica's /__replica/stats, and hands the second (LiveSecond: throughput, p50/p95/p99 from an
 * HDR histogram of that second's answers, failed, retried, and per replica requests, in flight,
 * CPU and event loop delay) to its listener. Actions signal the real processes.
 *
 * The run ends by itself when the load's time is up; stop() ends it early. Either way every
 * process it started is stopped (the Lab's guarantee, also on Ctrl-C or a crash of this process).
 */
import { performance } from 'node:perf_hooks';
import { Lab } from '../measure/lib/process/lab.ts';
import { sustainLoad } from '../measure/lib/load/load.ts';
import { startLiveLoad } from './live-load.ts';
import { probeOk } from '../measure/lib/load/probe.ts';
import { readStats, replicaSecond, type LiveReplicaState, type SustainedLoad } from './live-stats.ts';
import { startBalancer, startReplicas } from '../measure/lib/process/topology.ts';
import { HOGS, HOG_CONNECTIONS } from '../measure/lib/load/degraded-run.ts';
import { createLatencyHistogram, recordMs, summarize } from '../results/report/latency.ts';
import {
  LIVE_MAX_REPLICAS,
  LIVE_MAX_STARTED,
  type LiveAction,
  type LiveSecond,
  type LiveSettings,
} from './page/live-settings.ts';

/** The per-request timeout in a live run, s: a frozen replica's requests fail (and count) instead of hanging a connection for 10 s. */
const REQUEST_TIMEOUT_S = 5;

/** Raised for an action the run cannot do now (409 to the page): no such replica, or it is already dead. */
export class LiveConflict extends Error {}

export class LiveRun {
  readonly lab = new Lab();
  readonly startedAt = performance.now();
  private replicas: LiveReplicaState[] = [];
  private lbUrl = '';
  private dbFile: string | undefined;
  private load: SustainedLoad | undefined;
  private second = 0;
  private histogram = createLatencyHistogram();
  private readonly runHistogram = createLatencyHistogram();
  private readonly totals = { answers: 0, failed: 0 };
  private counts = { answers: 0, failed: 0 };
  private retriedBefore = 0;
  private timer: NodeJS.Timeout | undefined;
  private ending: Promise<void> | undefined;
  private ticking = false;
  /** Actions, one at a time: an add decides its name and the cap before its process starts. */
  private actions: Promise<unknown> = Promise.resolve();
  private policy: string;
  /** Resolves when the run has ended and all its processes are gone. */
  readonly ended: Promise<void>;
  private resolveEnded!: () => void;

  private constructor(
    readonly settings: LiveSettings,
    private readonly onSecond: (s: LiveSecond) => void,
  ) {
    this.policy = settings.policy;
    this.ended = new Promise((r) => (this.resolveEnded = r));
  }

  /** Starts the lab and its load; rejects (with every process stopped) when a server does not start. */
  static async start(
    settings: LiveSettings,
    onSecond: (s: LiveSecond) => void,
    log: (line: string) => void = () => {},
  ): Promise<LiveRun> {
    const run = new LiveRun(settings, onSecond);
    run.lab.log = log; // a line per process started and stopped, with its pid
    try {
      await run.begin();
    } catch (err) {
      await run.stop();
      throw err;
    }
    return run;
  }

  private async begin(): Promise<void> {
    const replicas = await startReplicas(this.lab, this.settings.replicas);
    this.dbFile = replicas.dbFile;
    this.replicas = replicas.map((replica) => ({ replica, state: 'up' }));
    for (const r of this.replicas) this.watchExit(r);
    const lb = await startBalancer(this.lab, 'builtin', this.settings.policy, replicas);
    this.lbUrl = lb.url;
    const { connections, durationS, rate, serviceMs } = this.settings;
    const onAnswer = (ms: number, status: number | undefined) => {
      const failed = status === undefined || status < 200 || status > 299;
      if (failed) {
        this.counts.failed++;
        this.totals.failed++;
      }
      if (status === undefined) return;
      recordMs(this.histogram, ms);
      recordMs(this.runHistogram, ms);
      this.counts.answers++;
      this.totals.answers++;
    };
    const url = `${lb.url}/work?ms=${serviceMs}`;
    this.load = startLiveLoad({ url, rate, durationS, connections, timeoutS: REQUEST_TIMEOUT_S, onAnswer });
    void this.load.done.then(() => this.stop());
    this.timer = setInterval(() => {
      // A tick still waiting for its stats (a starved machine) is not overlapped: seconds stay in order.
      if (!this.ticking) void this.tick();
    }, 1000);
  }

  private watchExit(r: LiveReplicaState): void {
    void r.replica.proc.exited.then(() => {
      r.state = 'dead';
      void r.hog?.stop();
    });
  }

  /** Reads one second and hands it on. Stats that do not come in time leave that replica's figures null. */
  private async tick(final = false): Promise<void> {
    this.ticking = true;
    try {
      await this.readSecond(final);
    } finally {
      this.ticking = false;
    }
  }

  private async readSecond(final: boolean): Promise<void> {
    const second = this.second++;
    const h = this.histogram;
    const counts = this.counts;
    this.histogram = createLatencyHistogram();
    this.counts = { answers: 0, failed: 0 };
    const { lb, replicas: stats } = await readStats(
      this.lbUrl,
      this.replicas.map((r) => (r.state === 'up' || r.state === 'draining' ? r.replica.url : undefined)),
    );
    if (this.ending && !final) return;
    const lbOk = lb?.status === 200 ? lb.body : undefined;
    const ups = lbOk?.upstreams ?? [];
    const retried = lbOk?.retried ?? this.retriedBefore;
    const l = summarize(h);
    const all = summarize(this.runHistogram);
    this.onSecond({
      second,
      policy: this.policy,
      throughput: counts.answers,
      latency: l.count ? { p50: l.p50, p95: l.p95, p99: l.p99 } : null,
      failed: counts.failed,
      retried: retried - this.retriedBefore,
      replicas: this.replicas.map((r, i) =>
        replicaSecond(
          r,
          ups.find((x) => x.name === r.replica.name),
          stats[i]?.status === 200 ? stats[i]!.body : undefined,
        ),
      ),
      totals: { ...this.totals, retried, p50: all.p50, p95: all.p95, p99: all.p99 },
    });
    this.retriedBefore = retried;
  }

  /** Carries out one action on the real processes. Throws LiveConflict when it cannot be done now. */
  act(a: LiveAction): Promise<object> {
    const next = this.actions.then(() => this.actNow(a));
    this.actions = next.catch(() => undefined);
    return next;
  }

  private async actNow(a: LiveAction): Promise<object> {
    if (this.ending) throw new LiveConflict('the live run is ending');
    if (a.action === 'policy') {
      await probeOk(`${this.lbUrl}/__lb/policy?name=${a.policy}`, { method: 'POST' });
      this.policy = a.policy;
      return { policy: a.policy };
    }
    if (a.action === 'add') return this.add();
    if (a.action === 'remove') {
      const last = [...this.replicas].reverse().find((r) => r.state === 'up');
      if (!last) throw new LiveConflict('no replica is up to remove');
      // Out of rotation first, so no new request goes to it while it drains.
      await probeOk(`${this.lbUrl}/__lb/down?upstream=${last.replica.name}`, { method: 'POST' });
      return this.actNow({ action: 'stop', replica: last.replica.name });
    }
    const r = this.replicas.find((x) => x.replica.name === a.replica);
    if (!r)
      throw new LiveConflict(
        `there is no ${a.replica}; this run has ${this.replicas.map((x) => x.replica.name).join(', ')}`,
      );
    if (r.state === 'dead') throw new LiveConflict(`${a.replica} is dead already`);
    const proc = r.replica.proc;
    switch (a.action) {
      case 'kill':
        proc.signal('SIGKILL');
        break;
      case 'freeze':
        if (r.state === 'up') proc.signal('SIGSTOP');
        r.state = r.state === 'draining' ? r.state : 'frozen';
        break;
      case 'thaw':
        proc.signal('SIGCONT');
        if (r.state === 'frozen') r.state = 'up';
        break;
      case 'stop':
        if (r.state === 'frozen') proc.signal('SIGCONT'); // a stopped process cannot run its SIGTERM handler
        proc.signal('SIGTERM', 'leader');
        r.state = 'draining';
        break;
      case 'hog':
        if (!r.hog) this.hog(r);
        break;
    }
    return { replica: r.replica.name, state: r.state };
  }

  /** Lesson 4's hog: HOG_CONNECTIONS connections of requests that block the replica's event loop, until the run ends. */
  private hog(r: LiveReplicaState): void {
    const leftS = Math.max(1, Math.ceil(this.settings.durationS - (performance.now() - this.startedAt) / 1000));
    r.hog = sustainLoad(
      {
        url: `${r.replica.url}${HOGS.stall}`,
        connections: HOG_CONNECTIONS,
        durationS: 120,
        timeoutS: REQUEST_TIMEOUT_S,
      },
      leftS,
    );
  }

  private async add(): Promise<object> {
    if (this.replicas.filter((r) => r.state !== 'dead').length >= LIVE_MAX_REPLICAS)
      throw new LiveConflict(`a live run has at most ${LIVE_MAX_REPLICAS} replicas at once`);
    if (this.replicas.length >= LIVE_MAX_STARTED)
      throw new LiveConflict(`a live run starts at most ${LIVE_MAX_STARTED} replicas in all; start a new run`);
    const name = `app${this.replicas.length + 1}`;
    const db = this.dbFile;
    const proc = await this.lab.start({
      server: 'replica',
      args: ['--name', name, '--port', '0', ...(db ? ['--db', db] : [])],
    });
    const r: LiveReplicaState = { replica: { name, proc, url: proc.url, addr: `127.0.0.1:${proc.port}` }, state: 'up' };
    this.replicas.push(r);
    this.watchExit(r);
    await probeOk(`${this.lbUrl}/__lb/add?upstream=${encodeURIComponent(`${name}=${r.replica.addr}`)}`, {
      method: 'POST',
    });
    return { replica: name, state: 'up' };
  }

  /** Ends the load and stops every process (frozen ones are thawed first, so they can exit). Idempotent. */
  stop(): Promise<void> {
    this.ending ??= (async () => {
      clearInterval(this.timer);
      try {
        for (const r of this.replicas) if (r.state === 'frozen') r.replica.proc.signal('SIGCONT');
        await Promise.all([this.load?.stop(), ...this.replicas.map((r) => r.hog?.stop())]);
        // The part-second since the last tick (its stats take 400 ms at most), so the totals hold every answer.
        while (this.ticking) await new Promise((r) => setTimeout(r, 20));
        if (this.lbUrl) await this.tick(true);
      } catch {
        /* the processes are stopped below whatever happened */
      } finally {
        await this.lab.close();
        this.resolveEnded();
      }
    })();
    return this.ending;
  }
}
