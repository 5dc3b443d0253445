/**
 * Load-balancing policies: which replica gets the next request. Each is a small pure function of
 * the replicas' state (requests in flight, availability), a round-robin cursor and a random source,
 * so the kit's balancer and the simulator share them and tests can check them exactly.
 * No Node.js APIs here.
 *
 * Power of two choices: sample two distinct replicas at random and take the less loaded one
 * (Mitzenmacher, "The Power of Two Choices in Randomized Load Balancing", 2001). Sampling with
 * replacement would pick the same replica twice 1/n of the time and then send it the request
 * whatever its load; `powerOfTwoChoicesWithReplacement` does that, for the kit's balancer's
 * `--two-choices with-replacement` (lesson 4, exercise 1).
 */

export const POLICIES = ['round-robin', 'least-connections', 'random', 'power-of-two-choices'] as const;
export type Policy = (typeof POLICIES)[number];

/** What a policy may look at for one replica. */
export interface ReplicaLoad {
  /** Requests sent to it that have not finished yet. */
  inFlight: number;
  /** False when it must not get requests (e.g. marked down). */
  available: boolean;
}

/** A random number in [0, 1), like Math.random; seedable in tests and the simulator. */
export type Rng = () => number;

/** The chosen replica's index (undefined: none available) and the round-robin cursor to keep. */
interface Choice {
  index: number | undefined;
  cursor: number;
}

export type Picker = (replicas: readonly ReplicaLoad[], cursor: number, rng: Rng) => Choice;

/** How many replicas are available. */
function countAvailable(replicas: readonly ReplicaLoad[]): number {
  let n = 0;
  for (const r of replicas) if (r.available) n++;
  return n;
}

/** The index of the k-th (0-based) available replica, in index order, given that `n` are available. */
function kthAvailable(replicas: readonly ReplicaLoad[], k: number, n: number): number {
  if (n === replicas.length) return k; // all available: no need to scan
  for (let i = 0; i < replicas.length; i++) if (replicas[i]!.available && k-- === 0) return i;
  throw new RangeError(`no available replica number ${k}`);
}

/** A uniformly random index in [0, n), n ≥ 1. */
function anyOf(n: number, rng: Rng): number {
  return Math.min(n - 1, Math.floor(rng() * n));
}

// The pickers below scan the replicas without building lists: the simulator calls them millions
// of times a second, over up to 100 replicas.

/** Each available replica in turn, starting at the cursor; the cursor moves past the choice. */
export const roundRobin: Picker = (replicas, cursor) => {
  const n = replicas.length;
  for (let step = 0; step < n; step++) {
    const i = (cursor + step) % n;
    if (replicas[i]!.available) return { index: i, cursor: (i + 1) % n };
  }
  return { index: undefined, cursor };
};

/** The available replica with the fewest requests in flight; a tie is broken at random. */
export const leastConnections: Picker = (replicas, cursor, rng) => {
  let least = Infinity;
  let ties = 0;
  for (const r of replicas) {
    if (!r.available) continue;
    if (r.inFlight < least) {
      least = r.inFlight;
      ties = 1;
    } else if (r.inFlight === least) ties++;
  }
  if (ties === 0) return { index: undefined, cursor };
  let k = anyOf(ties, rng);
  for (let i = 0; i < replicas.length; i++)
    if (replicas[i]!.available && replicas[i]!.inFlight === least && k-- === 0) return { index: i, cursor };
  throw new RangeError('unreachable: a tie was counted but not found');
};

/** Any available replica, uniformly at random, whatever its load. */
export const random: Picker = (replicas, cursor, rng) => {
  const n = countAvailable(replicas);
  return { index: n ? kthAvailable(replicas, anyOf(n, rng), n) : undefined, cursor };
};

function twoChoices(replicas: readonly ReplicaLoad[], cursor: number, rng: Rng, distinct: boolean): Choice {
  const n = countAvailable(replicas);
  if (n === 0) return { index: undefined, cursor };
  if (n === 1) return { index: kthAvailable(replicas, 0, n), cursor };
  const a = Math.floor(rng() * n);
  let b: number;
  if (distinct) {
    b = Math.floor(rng() * (n - 1));
    if (b >= a) b++; // skip a: b is uniform over the others
  } else {
    b = Math.floor(rng() * n);
  }
  const ia = kthAvailable(replicas, a, n);
  const ib = kthAvailable(replicas, b, n);
  const la = replicas[ia]!.inFlight;
  const lb = replicas[ib]!.inFlight;
  if (la !== lb) return { index: la < lb ? ia : ib, cursor };
  return { index: rng() < 0.5 ? ia : ib, cursor };
}

/** Two distinct available replicas at random; the one with fewer in flight (a tie: either). */
export const powerOfTwoChoices: Picker = (replicas, cursor, rng) => twoChoices(replicas, cursor, rng, true);

/** The flawed variant: the two samples may be the same replica (for the lesson's exercise). */
export const powerOfTwoChoicesWithReplacement: Picker = (replicas, cursor, rng) =>
  twoChoices(replicas, cursor, rng, false);

export const PICKERS: Record<Policy, Picker> = {
  'round-robin': roundRobin,
  'least-connections': leastConnections,
  random,
  'power-of-two-choices': powerOfTwoChoices,
};

/** True when `name` is one of POLICIES. */
export function isPolicy(name: string): name is Policy {
  return (POLICIES as readonly string[]).includes(name);
}

/**
 * Sticky policies (lesson 7): the same client goes to the same replica, so state kept in a
 * replica's memory is found again.
 *   ip-hash        by the client's address, like nginx's ip_hash (the first three octets of an IPv4
 *                  address: so every client on 127.0.0.1 lands on one replica)
 *   sticky-cookie  the balancer names the replica in a cookie (`lb=app2`) and follows it afterwards
 */
const STICKY_POLICIES = ['ip-hash', 'sticky-cookie'] as const;
type StickyPolicy = (typeof STICKY_POLICIES)[number];
/** Every policy a balancer accepts. */
export const BALANCER_POLICIES = [...POLICIES, ...STICKY_POLICIES] as const;
export type BalancerPolicy = Policy | StickyPolicy;

export function isBalancerPolicy(name: string): name is BalancerPolicy {
  return (BALANCER_POLICIES as readonly string[]).includes(name);
}

/** 32-bit FNV-1a hash of a string (a fast, well-spread, non-cryptographic hash). */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The replica for `key`: hash mod n; if that one is not available, the next available one after
 * it. Keys whose replica is up never move when another goes down (only the down one's keys do).
 */
export function pickByKey(replicas: readonly ReplicaLoad[], key: string): number | undefined {
  const n = replicas.length;
  const start = hashKey(key) % n;
  for (let step = 0; step < n; step++) {
    const i = (start + step) % n;
    if (replicas[i]!.available) return i;
  }
  return undefined;
}

/** nginx ip_hash's key for an address: an IPv4 address's first three octets; an IPv6 address whole. */
export function ipHashKey(address: string): string {
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.\d+$/.exec(address);
  return v4 ? `${v4[1]}.${v4[2]}.${v4[3]}` : address;
}
