/**
 * The Traffic Lab's settings: what the page's form sends, checked field by field (a bad one is
 * named with its allowed range), and the simulator config they stand for. Pure: the page and the
 * page's server share it. No DOM, no Node.js APIs.
 */
import { DEGRADED_SPEC } from '../../results/degraded/spec.ts';
import { SIM_POLICIES, type SimConfig, type SimPolicy } from '../../sim/engine.ts';

const TOPOLOGIES = ['single', 'balanced', 'large'] as const;
type Topology = (typeof TOPOLOGIES)[number];
/** The "large" preset's replicas. */
export const LARGE_REPLICAS = 100;

export interface Settings {
  /** One app server (no choice to make), a balancer in front of 1 to 10 replicas, or 100. */
  topology: Topology;
  replicas: number;
  policy: SimPolicy;
  /** ip-hash: how many /24 networks the clients come from (1: all on one address, as on loopback). */
  networks: number;
  /** Open loop: new requests at `rate` req/s whatever happens; closed: `connections` clients, each waiting `thinkMs` after an answer. */
  clients: 'open' | 'closed';
  rate: number;
  connections: number;
  thinkMs: number;
  /** Mean time of a request on a replica's event loop, ms (exponential). */
  serviceMs: number;
  /** Block the last replica's event loop as lesson 4's degraded experiment does (3 connections of 30 ms requests). */
  degrade: boolean;
  /** Simulated time at the pace of the clock, or as fast as the page can go. */
  speed: 'realtime' | 'fast';
  /** Length of the run, s of simulated time. */
  durationS: number;
  seed: number;
}

export const DEFAULTS: Settings = {
  topology: 'balanced',
  replicas: 3,
  policy: 'round-robin',
  networks: 1,
  clients: 'closed',
  rate: 2000,
  connections: 6,
  thinkMs: 0,
  serviceMs: 1,
  degrade: false,
  speed: 'realtime',
  durationS: 60,
  seed: 1,
};

type Numeric = 'replicas' | 'networks' | 'rate' | 'connections' | 'thinkMs' | 'serviceMs' | 'durationS' | 'seed';
/** Each number's allowed range, and whether it must be whole. */
export const RANGES: Record<Numeric, Range> = {
  replicas: { min: 1, max: 10, whole: true, unit: '' },
  networks: { min: 1, max: 1000, whole: true, unit: '' },
  rate: { min: 1, max: 50_000, whole: false, unit: 'req/s' },
  connections: { min: 1, max: 1000, whole: true, unit: '' },
  thinkMs: { min: 0, max: 10_000, whole: false, unit: 'ms' },
  serviceMs: { min: 0.01, max: 1000, whole: false, unit: 'ms' },
  durationS: { min: 1, max: 3600, whole: true, unit: 's' },
  seed: { min: 0, max: 2 ** 31 - 1, whole: true, unit: '' },
};

type Parsed = { ok: true; settings: Settings } | FieldError;

/** A field's range: from min to max, whole numbers only or not, and its unit for messages. */
export interface Range {
  min: number;
  max: number;
  whole: boolean;
  unit: string;
}

/** The failure of one field: its name and a sentence a student can act on. */
export type FieldError = { ok: false; field: string; message: string };

/** `value` when it is one of `allowed`, else the field's error. */
export const oneOf = <T extends string>(field: string, value: unknown, allowed: readonly T[]): T | FieldError => {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  return {
    ok: false,
    field,
    message: `${field} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value ?? null)}`,
  };
};

/** `value` (a number, or a form's string) when it is inside `r`, else the field's error. */
export const numberIn = (field: string, value: unknown, r: Range): number | FieldError => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  const range = `${r.min} to ${r.max}${r.unit ? ' ' + r.unit : ''}${r.whole ? ', a whole number' : ''}`;
  if (!Number.isFinite(n) || n < r.min || n > r.max || (r.whole && !Number.isInteger(n))) {
    return { ok: false, field, message: `${field} must be ${range}; got ${JSON.stringify(value ?? null)}` };
  }
  return n;
};

export const failed = (x: unknown): x is FieldError => typeof x === 'object' && x !== null && 'ok' in x;

/** Checks every field of `raw` (strings from a form, or numbers); the first bad or missing one is named. */
export function parseSettings(raw: Record<string, unknown>): Parsed {
  const topology = oneOf('topology', raw.topology, TOPOLOGIES);
  if (failed(topology)) return topology;
  const policy = oneOf('policy', raw.policy, SIM_POLICIES);
  if (failed(policy)) return policy;
  const clients = oneOf('clients', raw.clients, ['open', 'closed'] as const);
  if (failed(clients)) return clients;
  const speed = oneOf('speed', raw.speed, ['realtime', 'fast'] as const);
  if (failed(speed)) return speed;
  const numbers = {} as Record<Numeric, number>;
  for (const field of Object.keys(RANGES) as Numeric[]) {
    const n = numberIn(field, raw[field], RANGES[field]);
    if (failed(n)) return n;
    numbers[field] = n;
  }
  const degrade = raw.degrade === true || raw.degrade === 'on' || raw.degrade === 'true';
  const replicas = topology === 'single' ? 1 : topology === 'large' ? LARGE_REPLICAS : numbers.replicas;
  if (degrade && replicas < 2)
    return {
      ok: false,
      field: 'degrade',
      message: 'degrade needs at least 2 replicas: the blocked one and one to go to',
    };
  return { ok: true, settings: { topology, policy, clients, speed, degrade, ...numbers, replicas } };
}

/** The simulator config for `s`: a per-second timeline, event loops in turns as Node serves them. */
/** "Degrade": lesson 4's hog on replica `replica` (DEGRADED_SPEC: 3 connections of 30 ms requests), for the simulator. */
export function degradeHog(replica: number): NonNullable<SimConfig['hogs']>[number] {
  return { replica, ms: { kind: 'fixed', ms: DEGRADED_SPEC.hogMs }, connections: DEGRADED_SPEC.hogConnections };
}

export function simConfig(s: Settings): SimConfig {
  return {
    seed: s.seed,
    loop: 'turns',
    replicas: s.replicas,
    policy: s.policy,
    clientNetworks: s.networks,
    clients:
      s.clients === 'open'
        ? { kind: 'open', ratePerS: s.rate }
        : {
            kind: 'closed',
            count: s.connections,
            ...(s.thinkMs > 0 ? { think: { kind: 'exponential', meanMs: s.thinkMs } } : {}),
          },
    service: { kind: 'exponential', meanMs: s.serviceMs },
    ...(s.degrade ? { hogs: [degradeHog(s.replicas - 1)] } : {}),
    durationMs: s.durationS * 1000,
    timeline: true,
    bucketMs: 1000,
  };
}
