/**
 * The kit's balancer's state: its replicas (with their connection pools, counts and passive
 * health), the policy in force, and the choice of a replica for one try. servers/balancer.ts
 * serves the routes; servers/lib/balancer/forward.ts runs one request's tries.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type http from 'node:http';
import { admission, newHealth, type HealthState } from '../../../core/failover.ts';
import { chooseReplica } from '../../../core/choose.ts';
import {
  ipHashKey,
  PICKERS,
  pickByKey,
  powerOfTwoChoicesWithReplacement,
  roundRobin,
  type BalancerPolicy,
  type Picker,
  type ReplicaLoad,
} from '../../../core/policies.ts';
import { parseUpstreamList, UPSTREAM_IDLE_MS, type BalancerOptions, type TwoChoicesSampling } from './upstreams.ts';
import { KitError } from '../../../lib/errors.ts';
import { AccessLogWriter } from './access-log.ts';
import { timedConnector } from './upstream-timers.ts';
import type { BalancerStats } from '../../contracts.ts';

/** One replica as the balancer sees it. */
export interface Upstream extends ReplicaLoad {
  name: string;
  addr: string;
  pool: Pool;
  requests: number;
  /** Tries that failed (connect, reset, timeout). */
  failures: number;
  /** Taken out by hand (POST /__lb/down). */
  down: boolean;
  health: HealthState;
}

/**
 * Sticky policies start from round robin (sticky-cookie: a client with no cookie yet); power of two
 * choices samples with replacement when asked to (lesson 4, exercise 1).
 */
function pickerFor(policy: BalancerPolicy, twoChoices: TwoChoicesSampling = 'distinct'): Picker {
  if (policy === 'power-of-two-choices' && twoChoices === 'with-replacement') return powerOfTwoChoicesWithReplacement;
  return policy === 'ip-hash' || policy === 'sticky-cookie' ? roundRobin : PICKERS[policy];
}

function openUpstream(name: string, addr: string, options: BalancerOptions): Upstream {
  return {
    name,
    addr,
    inFlight: 0,
    available: true,
    requests: 0,
    failures: 0,
    down: false,
    health: newHealth(),
    pool: new Pool(`http://${addr}`, {
      keepAliveTimeout: UPSTREAM_IDLE_MS,
      keepAliveMaxTimeout: UPSTREAM_IDLE_MS,
      connect: timedConnector(options.connectTimeoutMs),
      // The response timeout is enforced in forward.ts with a native timer: undici's own timers
      // have about half a second of slack at one second and above (undici lib/util/timers.js).
      headersTimeout: 0,
      bodyTimeout: options.responseTimeoutMs,
      ...(options.keepAlive ? {} : { pipelining: 0 }),
    }),
  };
}

/** The replicas, the policy and the counters of one balancer process. */
export class Balancer {
  readonly upstreams: Upstream[];
  readonly rules: { maxFails: number; failTimeoutMs: number };
  /** Requests that needed more than one try. */
  retried = 0;
  /** With --access-log: where forward() writes each request's line. */
  readonly accessLog: AccessLogWriter | undefined;
  #policy: BalancerPolicy;
  #pick: Picker;
  #cursor = 0;

  constructor(readonly options: BalancerOptions) {
    this.upstreams = options.upstreams.map(({ name, addr }) => openUpstream(name, addr, options));
    this.rules = { maxFails: options.maxFails, failTimeoutMs: options.failTimeoutMs };
    this.#policy = options.policy;
    this.#pick = pickerFor(options.policy, options.twoChoices);
    this.accessLog = options.accessLog ? new AccessLogWriter(options.accessLog) : undefined;
  }

  get policy(): BalancerPolicy {
    return this.#policy;
  }

  /** Switches the policy; the round-robin cursor, requests in flight and health carry over. */
  setPolicy(policy: BalancerPolicy): void {
    this.#policy = policy;
    this.#pick = pickerFor(policy, this.options.twoChoices);
  }

  /**
   * Puts one more replica into rotation (a scale-out by hand). Throws KIT_ERR_USAGE for a name
   * already in use or an address that parseUpstreamList refuses (not loopback).
   */
  add(item: string): Upstream {
    const [{ name, addr }] = parseUpstreamList(item) as [{ name: string; addr: string }];
    if (this.upstreams.some((u) => u.name === name))
      throw new KitError('KIT_ERR_USAGE', `an upstream named '${name}' is already in rotation`);
    const up = openUpstream(name, addr, this.options);
    this.upstreams.push(up);
    return up;
  }

  /** The replica a sticky policy wants for this request, before availability (undefined: none yet). */
  stickyKey(req: http.IncomingMessage): string | undefined {
    if (this.#policy === 'ip-hash') return ipHashKey(req.socket.remoteAddress ?? '');
    if (this.#policy === 'sticky-cookie') return /(?:^|;\s*)lb=([\w.-]+)/.exec(req.headers.cookie ?? '')?.[1];
    return undefined;
  }

  /**
   * Picks a replica not in `tried`, honouring manual downs and passive health, with the choice
   * step the simulator runs too (lib/choose.ts); a sticky policy names its replica first.
   */
  choose(tried: ReadonlySet<number>, key: string | undefined): { index: number; probe: boolean } | undefined {
    const prefer = (ups: readonly ReplicaLoad[]): number | undefined => {
      if (key === undefined) return undefined;
      if (this.#policy === 'ip-hash') return pickByKey(ups, key);
      if (this.#policy === 'sticky-cookie') {
        const named = this.upstreams.findIndex((u) => u.name === key);
        return named >= 0 && ups[named]!.available ? named : undefined;
      }
      return undefined;
    };
    const chosen = chooseReplica(
      this.upstreams,
      tried,
      this.rules,
      performance.now(),
      this.#pick,
      this.#cursor,
      Math.random,
      prefer,
    );
    if (chosen) this.#cursor = chosen.cursor;
    return chosen;
  }

  /** The body of GET /__lb/stats. A lone replica is never taken out, so it never rests. */
  stats(): BalancerStats {
    const now = performance.now();
    const { keepAlive, retries, connectTimeoutMs, responseTimeoutMs } = this.options;
    const lone = this.upstreams.length === 1;
    return {
      policy: this.#policy,
      twoChoices: this.options.twoChoices ?? 'distinct',
      keepAlive,
      failover: { retries, ...this.rules, connectTimeoutMs, responseTimeoutMs },
      retried: this.retried,
      upstreams: this.upstreams.map(({ name, addr, requests, inFlight, failures, down, health }) => ({
        name,
        addr,
        down,
        resting: !lone && admission(health, this.rules, now) === 'no',
        requests,
        inFlight,
        failures,
      })),
    };
  }

  close(): void {
    this.accessLog?.close();
    for (const u of this.upstreams) void u.pool.close();
  }
}
