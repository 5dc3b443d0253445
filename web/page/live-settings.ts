/**
 * Live mode's settings and actions: what the page sends to start the real lab and act on it,
 * checked field by field (a bad one is named with its allowed range; nothing starts). Pure: the
 * page checks before it sends, and the page's server checks again, since any request may be
 * hostile. No DOM, no Node.js APIs.
 *
 * The bounds keep a live run something a 2-core laptop can carry and a student cannot turn into
 * an unbounded load: at most 6 replicas (8 at once with adds), 64 connections, 5,000 req/s, 600 s.
 */
import type { SimConfig } from '../../sim/types.ts';
import { degradeHog, failed, numberIn, oneOf, type FieldError, type Range } from './settings.ts';

/** The kit balancer's policies that make sense for one client machine (sticky-cookie needs cookies the load does not keep). */
const LIVE_POLICIES = ['round-robin', 'least-connections', 'random', 'power-of-two-choices', 'ip-hash'] as const;
type LivePolicy = (typeof LIVE_POLICIES)[number];

export interface LiveSettings {
  replicas: number;
  policy: LivePolicy;
  /** Connections: autocannon's closed loop, or the open loop's connections to the balancer. */
  connections: number;
  /** The open loop's rate, req/s (the kit's generator, timed from each request's intended send); 0: a closed loop, as fast as the answers come. */
  rate: number;
  /** CPU time each request spends on a replica's event loop (the replica's /work?ms=), ms. */
  serviceMs: number;
  durationS: number;
}

/** The most replicas a live run may have at once, adds included. */
export const LIVE_MAX_REPLICAS = 8;
/** The most a live run starts in all (app1 to app99; dead ones keep their names). */
export const LIVE_MAX_STARTED = 99;

const LIVE_RANGES: Record<Exclude<keyof LiveSettings, 'policy'>, Range> = {
  replicas: { min: 1, max: 6, whole: true, unit: '' },
  connections: { min: 1, max: 64, whole: true, unit: '' },
  // Whole req/s, as the page's simulator and its open loop count them.
  rate: { min: 0, max: 5000, whole: true, unit: 'req/s (0: a closed loop)' },
  serviceMs: { min: 0.1, max: 50, whole: false, unit: 'ms' },
  durationS: { min: 5, max: 600, whole: true, unit: 's' },
};

type LiveParsed = { ok: true; settings: LiveSettings } | FieldError;

/** Checks a start request's body; the first bad or missing field is named. */
export function parseLiveSettings(raw: unknown): LiveParsed {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, field: 'body', message: 'the body must be a JSON object of settings' };
  const r = raw as Record<string, unknown>;
  const policy = oneOf('policy', r.policy, LIVE_POLICIES);
  if (failed(policy)) return policy;
  const numbers = {} as Record<keyof typeof LIVE_RANGES, number>;
  for (const field of Object.keys(LIVE_RANGES) as (keyof typeof LIVE_RANGES)[]) {
    const n = numberIn(field, r[field], LIVE_RANGES[field]);
    if (failed(n)) return n;
    numbers[field] = n;
  }
  return { ok: true, settings: { policy, ...numbers } };
}

/**
 * What a button asks of the live lab: a signal to one replica (kill: SIGKILL, freeze: SIGSTOP,
 * thaw: SIGCONT, stop: SIGTERM and its drain), a hog on one replica's event loop, a replica more
 * or fewer, or another policy for the requests that follow.
 */
const LIVE_ACTIONS = ['kill', 'freeze', 'thaw', 'stop', 'hog', 'add', 'remove', 'policy'] as const;
export type LiveAction =
  | { action: 'kill' | 'freeze' | 'thaw' | 'stop' | 'hog'; replica: string }
  | { action: 'add' }
  | { action: 'remove' }
  | { action: 'policy'; policy: LivePolicy };

/** Checks an action request's body. */
export function parseLiveAction(raw: unknown): { ok: true; action: LiveAction } | FieldError {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, field: 'body', message: 'the body must be a JSON object with an action' };
  const r = raw as Record<string, unknown>;
  const action = oneOf('action', r.action, LIVE_ACTIONS);
  if (failed(action)) return action;
  if (action === 'add') return { ok: true, action: { action } };
  if (action === 'remove') return { ok: true, action: { action } };
  if (action === 'policy') {
    const policy = oneOf('policy', r.policy, LIVE_POLICIES);
    return failed(policy) ? policy : { ok: true, action: { action, policy } };
  }
  if (typeof r.replica !== 'string' || !/^app[1-9]\d?$/.test(r.replica))
    return {
      ok: false,
      field: 'replica',
      message: `replica must name one, app1 to app${LIVE_MAX_STARTED}; got ${JSON.stringify(r.replica ?? null)}`,
    };
  return { ok: true, action: { action, replica: r.replica } };
}

/** One replica in a live second. */
export interface LiveReplica {
  name: string;
  /** What the lab did to it: up, frozen (SIGSTOP), draining (SIGTERM, not yet exited), dead (exited). */
  state: 'up' | 'frozen' | 'draining' | 'dead';
  /** Out of the balancer's rotation: taken out by hand, or resting after failures (passive health). */
  down: boolean;
  /** Requests the balancer has sent it so far, and has in flight on it now. */
  requests: number;
  inFlight: number;
  /** CPU it used in the last second, as a fraction of one core; null when it did not answer. */
  utilization: number | null;
  /** Its event loop's delay (monitorEventLoopDelay) over its last whole second, p99 and max, ms; null when it did not answer. */
  loopDelayMs: { p99: number; max: number } | null;
  hogged: boolean;
}

/** One second of a live run, as the page's server streams it. */
export interface LiveSecond {
  second: number;
  policy: string;
  /** Answers in this second (2xx or not), req/s. */
  throughput: number;
  /** Client-side latency of this second's answers, ms (HDR histogram); null with no answers. */
  latency: { p50: number; p95: number; p99: number } | null;
  /** Answers that were not 2xx plus requests that got no answer, in this second. */
  failed: number;
  /** Requests the balancer tried on more than one replica, in this second. */
  retried: number;
  replicas: LiveReplica[];
  /** The run so far: answers, failed, retried, and the latency of every answer (one HDR histogram), ms. */
  totals: { answers: number; failed: number; retried: number; p50: number; p95: number; p99: number };
}

/**
 * The simulator's config for a live run's settings, to run alongside it: the same replicas,
 * policy and load (a capped rate as an open loop at that rate), each request `serviceMs` on its
 * replica's event loop, and nothing else: no balancer, no load generator, no cores shared with
 * them (what measure/sim-vs-lab.ts measures and adds). Its clients are on one network, as the
 * lab's all are on 127.0.0.1, so ip-hash sends them to one replica in both. `hogged`: the index
 * of a replica degraded from the start (the page's "degrade the last replica"), given the same
 * hog as the live one (lesson 4's degraded experiment: DEGRADED_SPEC).
 */
export function modelConfig(s: LiveSettings, seed = 1, hogged?: number): SimConfig {
  return {
    seed,
    loop: 'turns',
    replicas: s.replicas,
    policy: s.policy,
    clientNetworks: 1,
    clients: s.rate > 0 ? { kind: 'open', ratePerS: s.rate } : { kind: 'closed', count: s.connections },
    service: { kind: 'fixed', ms: s.serviceMs },
    ...(hogged !== undefined ? { hogs: [degradeHog(hogged)] } : {}),
    durationMs: s.durationS * 1000,
    timeline: true,
    bucketMs: 1000,
  };
}

/** The form in live mode's terms: an open loop's rate, or 0 for a closed loop of the form's connections. */
export function liveSettingsFrom(v: Record<string, unknown>): LiveParsed {
  const replicas = v.topology === 'single' ? 1 : v.topology === 'large' ? 100 : v.replicas;
  return parseLiveSettings({
    replicas,
    policy: v.policy,
    connections: v.connections,
    rate: v.clients === 'open' ? v.rate : '0',
    serviceMs: v.serviceMs,
    durationS: v.durationS,
  });
}
