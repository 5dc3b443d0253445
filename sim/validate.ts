/** The checks a SimConfig must pass before it is run. No Node.js APIs. */
import { validateHpaConfig } from '../core/hpa.ts';
import { SIM_POLICIES, type SimConfig, type UsersConfig } from './types.ts';

/** Throws a RangeError naming the first setting that makes no sense. */
export function validate(c: SimConfig): void {
  const bad = (what: string): never => {
    throw new RangeError(what);
  };
  if (!Number.isInteger(c.replicas) || c.replicas < 1) bad(`replicas must be a whole number ≥ 1; got ${c.replicas}`);
  if (c.seed !== undefined && (!Number.isInteger(c.seed) || c.seed < -(2 ** 31) || c.seed >= 2 ** 31))
    bad(`seed must be a 32-bit whole number; got ${c.seed}`);
  if (c.autoscale) validateHpaConfig(c.autoscale.hpa);
  if (!(SIM_POLICIES as readonly string[]).includes(c.policy)) bad(`unknown policy '${c.policy}'`);
  if (
    c.clientNetworks !== undefined &&
    (!Number.isInteger(c.clientNetworks) || c.clientNetworks < 1 || c.clientNetworks > 65_536)
  ) {
    bad(`clientNetworks must be a whole number in 1..65536; got ${c.clientNetworks}`);
  }
  if (!(c.durationMs > 0) || !Number.isFinite(c.durationMs)) bad(`durationMs must be > 0; got ${c.durationMs}`);
  if ((c.warmupMs ?? 0) < 0 || (c.warmupMs ?? 0) >= c.durationMs)
    bad(`warmupMs must be in [0, durationMs); got ${c.warmupMs}`);
  if (c.clients.kind === 'open' && !(c.clients.ratePerS > 0))
    bad(`an open loop needs ratePerS > 0; got ${c.clients.ratePerS}`);
  if (c.clients.kind === 'open') {
    let last = -Infinity;
    for (const p of c.clients.phases ?? []) {
      if (!(p.atMs >= 0) || p.atMs <= last) bad(`an open loop's phases need atMs ≥ 0, in rising order; got ${p.atMs}`);
      if (!(p.ratePerS > 0)) bad(`a phase needs ratePerS > 0; got ${p.ratePerS}`);
      last = p.atMs;
    }
  }
  if (c.users) validateUsers(c.users, c.clients.kind, bad);
  if (c.clients.kind === 'closed' && (!Number.isInteger(c.clients.count) || c.clients.count < 1))
    bad(`a closed loop needs count ≥ 1; got ${c.clients.count}`);
  if ((c.staleMs ?? 0) < 0) bad(`staleMs must be ≥ 0; got ${c.staleMs}`);
  if ((c.bucketMs ?? 1000) <= 0) bad(`bucketMs must be > 0; got ${c.bucketMs}`);
  if (c.pool && (!Number.isInteger(c.pool.threads) || c.pool.threads < 1))
    bad(`a pool needs threads ≥ 1; got ${c.pool.threads}`);
  if (c.pool && c.loop === 'turns') bad("loop 'turns' has no thread pool model: use the default fifo loop with a pool");
  for (const h of c.hogs ?? []) {
    if (!Number.isInteger(h.replica) || h.replica < 0 || h.replica >= c.replicas)
      bad(`a hog's replica must be 0..${c.replicas - 1}; got ${h.replica}`);
    if (!h.connections && !h.ratePerS) bad('a hog needs connections or ratePerS');
  }
  for (const e of c.events ?? []) {
    if (!(e.atMs >= 0)) bad(`an event's atMs must be ≥ 0; got ${e.atMs}`);
    if (
      e.action !== 'add' &&
      e.action !== 'remove' &&
      (e.replica === undefined || !Number.isInteger(e.replica) || e.replica < 0 || e.replica >= c.replicas)
    ) {
      bad(`a ${e.action} event needs a replica in 0..${c.replicas - 1}; got ${e.replica}`);
    }
  }
  if (c.autoscale && c.autoscale.syncMs % (c.bucketMs ?? 1000) !== 0)
    bad('autoscale.syncMs must be a multiple of bucketMs (utilization is read from the buckets)');
}

/** The checks on SimConfig.users (users are the open loop's). */
function validateUsers(u: UsersConfig, clients: 'open' | 'closed', bad: (what: string) => never): void {
  if (clients !== 'open') bad('users need an open loop (clients.kind open)');
  if (!(u.timeoutMs > 0)) bad(`users.timeoutMs must be > 0; got ${u.timeoutMs}`);
  if (!Number.isInteger(u.retries) || u.retries < 0 || u.retries > 10)
    bad(`users.retries must be a whole number in 0..10; got ${u.retries}`);
  if (!(u.bucketMs > 0)) bad(`users.bucketMs must be > 0; got ${u.bucketMs}`);
  if (u.breaker && (!Number.isInteger(u.breaker.consecutive) || u.breaker.consecutive < 1))
    bad(`users.breaker.consecutive must be a whole number ≥ 1; got ${u.breaker.consecutive}`);
  if (u.breaker && !(u.breaker.halfOpenAfterMs > 0))
    bad(`users.breaker.halfOpenAfterMs must be > 0; got ${u.breaker.halfOpenAfterMs}`);
}
