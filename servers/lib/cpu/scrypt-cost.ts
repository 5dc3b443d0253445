/**
 * The scrypt work the loan service does for a password check, and its cost parameters.
 *
 * scrypt's memory need is about 128 · N · r bytes (RFC 7914 §2); Node's default `maxmem` is
 * 32 MiB (Node docs, crypto.scrypt), so the heavy cost (N=2^16, r=8 → 64 MiB) only runs with
 * `maxmem` raised. p multiplies the CPU time without raising memory: OpenSSL computes the p lanes
 * one after another, so N=2^16, r=8, p=8 is 0.5–1.5 s of one core on a laptop.
 */
import { randomBytes, scrypt, scryptSync, type ScryptOptions } from 'node:crypto';
import { KitError } from '../../../lib/errors.ts';

export interface ScryptCost {
  /** CPU/memory cost, a power of two. */
  N: number;
  /** Block size. */
  r: number;
  /** Parallelisation: how many times the whole computation runs (sequentially in Node). */
  p: number;
}

/**
 * The lesson's heavy password check: about 1 s of one core on the 2-core reference machine (the
 * source lesson's took 0.635 s; p=8 took 1.5 s here and made lesson 3 last 22 s), a few hundred ms
 * on a fast laptop: still far longer than a light request. --cost sets another.
 */
export const HEAVY_COST: ScryptCost = { N: 2 ** 16, r: 8, p: 4 };
/** A small pooled task: about 2–3 ms of CPU, but it still needs a thread-pool thread. */
export const LIGHT_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 };

/** Largest memory a cost may need: 1 GiB. Larger is a typo, not a lesson. */
const MAX_MEMORY_BYTES = 1024 ** 3;
const KEY_LENGTH = 64;
const SALT = randomBytes(16);

/** Memory scrypt needs for `cost`, in bytes (128 · N · r, RFC 7914), plus room for the p lanes. */
export function memoryFor(cost: ScryptCost): number {
  return 128 * cost.N * cost.r + 128 * cost.r * cost.p;
}

/** `maxmem` to pass to Node for `cost`: twice the need, at least Node's 32 MiB default. */
export function maxmemFor(cost: ScryptCost): number {
  return Math.max(32 * 1024 * 1024, 2 * memoryFor(cost));
}

/** `N=2^16,r=8,p=8` */
export function formatCost(cost: ScryptCost): string {
  return `N=2^${Math.log2(cost.N)},r=${cost.r},p=${cost.p}`;
}

function badCost(text: string, why: string): KitError {
  return new KitError(
    'KIT_ERR_BAD_COST',
    `invalid scrypt cost '${text}': ${why}`,
    `write it as N=2^16,r=8,p=8 (N a power of two from 2^1 to 2^20, r from 1 to 32, p from 1 to 64)`,
  );
}

/**
 * Parses a cost like `N=2^16,r=8,p=8` or `N=65536,r=8,p=8` (any order; a missing key takes the
 * heavy default). Throws KIT_ERR_BAD_COST for anything else, including a cost that would need
 * more than 1 GiB of memory.
 */
export function parseCost(text: string): ScryptCost {
  const cost: ScryptCost = { ...HEAVY_COST };
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (parts.length === 0) throw badCost(text, 'it is empty');
  for (const part of parts) {
    const m = /^([Nrp])=(?:(\d+)|2\^(\d+))$/.exec(part);
    if (!m) throw badCost(text, `'${part}' is not key=value with key N, r or p`);
    const key = m[1] as keyof ScryptCost;
    const value = m[2] !== undefined ? Number(m[2]) : 2 ** Number(m[3]);
    cost[key] = value;
  }
  const { N, r, p } = cost;
  if (!Number.isSafeInteger(N) || N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0) {
    throw badCost(text, `N must be a power of two from 2^1 to 2^20, got ${N}`);
  }
  if (!Number.isInteger(r) || r < 1 || r > 32) throw badCost(text, `r must be from 1 to 32, got ${r}`);
  if (!Number.isInteger(p) || p < 1 || p > 64) throw badCost(text, `p must be from 1 to 64, got ${p}`);
  if (memoryFor(cost) > MAX_MEMORY_BYTES) {
    throw badCost(text, `it needs ${Math.round(memoryFor(cost) / 1024 ** 2)} MiB of memory; the limit is 1024 MiB`);
  }
  return cost;
}

/** The heavy cost a server runs with: `--cost`, else LAB_SCRYPT_COST, else HEAVY_COST. */
export function heavyCostFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): ScryptCost {
  const text = flag ?? env.LAB_SCRYPT_COST;
  return text ? parseCost(text) : HEAVY_COST;
}

/** Hashes `password` on the calling thread (the event loop, in a server). Returns the key. */
export function hashOnEventLoop(password: string, cost: ScryptCost): Buffer {
  return scryptSync(password, SALT, KEY_LENGTH, { ...cost, maxmem: maxmemFor(cost) });
}

/**
 * A password check of the student's own (lesson 3's exercise, servers/exercises/lesson-3/verify.ts): a member's
 * scrypt's arguments in, the key out, at once or later.
 */
export type VerifyPassword = (
  password: string,
  salt: Buffer,
  keyLength: number,
  options: ScryptOptions,
) => Buffer | Promise<Buffer>;

/** Hashes `password` on libuv's thread pool; the event loop stays free meanwhile. */
export function hashOnThreadPool(password: string, cost: ScryptCost): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, SALT, KEY_LENGTH, { ...cost, maxmem: maxmemFor(cost) }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}
