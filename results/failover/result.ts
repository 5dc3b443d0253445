/**
 * The `failover` experiment's result (lesson 6): which faults it plans, and what each run recorded.
 * Pure.
 */
import type { TimelineSecond } from '../report/timeline.ts';
import { FAILOVER_DEFAULTS } from '../../core/failover.ts';
import type { MachineInfo } from '../report/format.ts';
import type { RunLog } from './log.ts';

/** sigterm drains, sigkill crashes, sigstop freezes; vanish (SIGUSR2) makes the address swallow connection attempts (servers/lib/serve/vanish.ts). */
export type Fault = 'sigterm' | 'sigkill' | 'sigstop' | 'vanish';

/** What the POST run checks in the users database afterwards. */
export interface PostCheck {
  /** 201 answers the clients got. */
  created: number;
  /** Of those, ids found in the database exactly once. */
  createdAndStoredOnce: number;
  /** Rows written by this run. */
  stored: number;
  /** Names stored more than once (a POST sent twice). */
  storedTwice: number;
  /** POSTs the balancer sent to a second replica (allowed only when the first could not connect). */
  retried: number;
}

export interface FaultRun {
  /** Shape key: the fault, or `sigkill-without-retries`, `post-during-kill`. */
  name: string;
  fault: Fault;
  method: 'GET' | 'POST';
  retries: number;
  /** When the fault was applied, s from the start of the load. */
  faultAtS: number;
  timeline: TimelineSecond[];
  totals: { completed: number; ok2xx: number; non2xx: number; errors: number };
  /** Requests the balancer tried on more than one replica. */
  retried: number;
  /** Responses that took at least `slowThresholdMs`, and the median of their latencies. */
  slow: { count: number; medianMs: number; maxMs: number };
  p99: number;
  max: number;
  post?: PostCheck;
  /** The balancer's access log over the load (lab runs; the simulator keeps none). */
  log?: RunLog;
  /** Answers whose x-upstream-addr named more than one replica: the retries clients could see. */
  clientRetried?: number;
}

/** One run of the experiment: a fault, the method the clients send, and the balancer's retries. */
export interface FaultPlan {
  name: string;
  fault: Fault;
  method: 'GET' | 'POST';
  retries: number;
}

/**
 * The experiment's parameters, one spec for the lab run (measure/failover.ts), its Result and the
 * simulated scenario (sim/scenarios/failover.ts), so the two cannot drift apart.
 */
export const FAILOVER_SPEC = {
  replicas: 3,
  connections: 8,
  route: '/fast',
  /** The balancer's settings: a response timeout of 1.5 s (what a frozen replica costs a request), and the kit's defaults otherwise, among them a connect timeout of 2 s (what a vanished address costs). */
  settings: {
    responseTimeoutMs: 1500,
    connectTimeoutMs: FAILOVER_DEFAULTS.connectTimeoutMs,
    maxFails: FAILOVER_DEFAULTS.maxFails,
    failTimeoutS: FAILOVER_DEFAULTS.failTimeoutMs / 1000,
    retries: FAILOVER_DEFAULTS.retries,
  },
  /** "Slow": a request that took at least this long (the summary's ≥ 1 s column), ms. */
  slowMs: 1000,
  durationS: { quick: 5, full: 11 },
  faultAtS: { quick: 2, full: 5 },
  /**
   * Seconds of the load before its measured part, on the same connections (faultedLoad's
   * leadInS). Fresh replicas and a fresh balancer answer slowly while their JIT compilers warm up:
   * after a 1 s warm-up the first measured seconds ran at a third to a half of the later ones
   * (2,000 against 8,000 req/s on the 2-core reference machine), so a fault at second 2 looked
   * like a speed-up. One continuous load climbs for about 4 s (1,200, 2,000, 3,700, 6,100, then
   * 7,400 req/s) and then only swings, by up to a third from one second to the next.
   */
  warmupS: 5,
  plans: [
    { name: 'sigterm', fault: 'sigterm', method: 'GET', retries: FAILOVER_DEFAULTS.retries },
    { name: 'sigkill', fault: 'sigkill', method: 'GET', retries: FAILOVER_DEFAULTS.retries },
    { name: 'sigstop', fault: 'sigstop', method: 'GET', retries: FAILOVER_DEFAULTS.retries },
    { name: 'vanish', fault: 'vanish', method: 'GET', retries: FAILOVER_DEFAULTS.retries },
    { name: 'sigkill-without-retries', fault: 'sigkill', method: 'GET', retries: 0 },
    { name: 'post-during-kill', fault: 'sigkill', method: 'POST', retries: FAILOVER_DEFAULTS.retries },
  ] as readonly FaultPlan[],
} as const;

export interface FailoverResult {
  machine: MachineInfo;
  balancer: string;
  policy: string;
  victim: string;
  /** `warmupS`: seconds of the same load before the measured one (results saved before it was recorded have none). */
  load: { connections: number; durationS: number; route: string; warmupS?: number };
  /** The balancer's failover settings in these runs. */
  settings: {
    responseTimeoutMs: number;
    connectTimeoutMs: number;
    maxFails: number;
    failTimeoutS: number;
    retries: number;
  };
  slowThresholdMs: number;
  runs: FaultRun[];
}
