/**
 * The loan service's members and their stored passwords, kept as a service keeps them: each one's
 * salt, scrypt parameters, key length and derived key, never the password itself. A check hashes
 * the password it is given with the member's stored salt and parameters, and compares the key with
 * the stored one in constant time (crypto.timingSafeEqual). The members are a lab's test accounts,
 * so their passwords are written here too: the requests that check a student's fix (lesson 3's
 * exercise) use them. Older members keep older, cheaper parameters, as real password tables do
 * after a change of policy, which also keeps those checks to a few milliseconds each.
 */
import { scrypt, scryptSync, timingSafeEqual } from 'node:crypto';
import { formatCost, LIGHT_COST, maxmemFor, type ScryptCost, type VerifyPassword } from './scrypt-cost.ts';

/** A member's stored password. */
export interface StoredPassword {
  salt: Buffer;
  keyLength: number;
  cost: ScryptCost;
  key: Buffer;
}

interface Member {
  name: string;
  password: string;
  /** The salt, hex. */
  salt: string;
  keyLength: number;
  /** Undefined: the service's heavy cost (--cost), the lesson's password check. */
  cost?: ScryptCost;
}

/** The member a check is for when a request names none: the lesson's heavy check. */
export const DEFAULT_MEMBER = 'ann';

/**
 * The test members. cam and fay share ann's password with salts of their own (a key kept by
 * password alone is wrong for one of them); dee's key is 32 bytes at other parameters; eli's
 * password is not ASCII.
 */
export const MEMBERS: readonly Member[] = [
  { name: 'ann', password: 'correct horse battery staple', salt: '6e736c2d616e6e2d73616c742d303031', keyLength: 64 },
  {
    name: 'cam',
    password: 'correct horse battery staple',
    salt: '4fa1c3e2d9b80716a5e4c3d2b1a09f8e',
    keyLength: 64,
    cost: LIGHT_COST,
  },
  {
    name: 'fay',
    password: 'correct horse battery staple',
    salt: '0b1c2d3e4f5061728394a5b6c7d8e9fa',
    keyLength: 64,
    cost: LIGHT_COST,
  },
  {
    name: 'dee',
    password: 'Tr0ub4dor&3',
    salt: 'd3e4f5a6b7c8d9e0f1a2b3c4d5e6f708',
    keyLength: 32,
    cost: { N: 2 ** 11, r: 8, p: 2 },
  },
  {
    name: 'eli',
    password: 'pässwörd ✓ 密码',
    salt: 'e1e2e3e4e5e6e7e8e9eaebecedeeeff0',
    keyLength: 64,
    cost: { N: 2 ** 10, r: 4, p: 1 },
  },
];

/**
 * ann's stored key at the two heavy costs the kit runs with (servers/lib/cpu/scrypt-cost.ts
 * HEAVY_COST, and measure/lib/harness/costs.ts's --quick one): made once, as a member's key is,
 * where computing it at each start would cost a heavy check's time (1.1 s and 0.5 s here). At
 * any other cost the service computes it as it starts.
 */
const ANN_KEYS: Readonly<Record<string, string>> = {
  'N=2^16,r=8,p=4':
    'bd6e4dafab8eed551f56b4475d68f25aeffdf63ed00d54dc935b0997f8a1f914d7ef5bea7c09424439c7f6c5eda549cc416ff8320948a27eb337f4ebfc4c306b',
  'N=2^15,r=8,p=4':
    '90e4bfa915c50021a25b5c325468c3b48ce5f52fe2deccedeb471ebb526efe6a98a7b2026f5195e19bf999dbeb1ea4d410ed08601c1979343d4e5c95ca87fe60',
};

function derive(password: string, salt: Buffer, keyLength: number, cost: ScryptCost): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keyLength, { ...cost, maxmem: maxmemFor(cost) }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** Every member's stored password, ann's at `heavy`: the ones not shipped are derived on the thread pool. */
export async function storedPasswords(heavy: ScryptCost): Promise<Map<string, StoredPassword>> {
  const entries = await Promise.all(
    MEMBERS.map(async (m): Promise<[string, StoredPassword]> => {
      const cost = m.cost ?? heavy;
      const salt = Buffer.from(m.salt, 'hex');
      const shipped = m.cost === undefined ? ANN_KEYS[formatCost(cost)] : undefined;
      const key = shipped ? Buffer.from(shipped, 'hex') : await derive(m.password, salt, m.keyLength, cost);
      return [m.name, { salt, keyLength: m.keyLength, cost, key }];
    }),
  );
  return new Map(entries);
}

/** The password a check uses when a request gives none: the member's own. */
export function ownPassword(member: string): string | undefined {
  return MEMBERS.find((m) => m.name === member)?.password;
}

/** True when `key` is the stored key: the same length and the same bytes, compared in constant time. */
export function keyMatches(stored: StoredPassword, key: unknown): boolean {
  return Buffer.isBuffer(key) && key.length === stored.key.length && timingSafeEqual(key, stored.key);
}

/** scrypt's options for `stored`: its parameters, and the memory they need. */
function optionsOf(stored: StoredPassword) {
  return { ...stored.cost, maxmem: maxmemFor(stored.cost) };
}

/** Hashes `password` with `stored`'s salt and parameters on the calling thread (the event loop, in a server). */
export function hashOnEventLoopFor(stored: StoredPassword, password: string): Buffer {
  return scryptSync(password, stored.salt, stored.keyLength, optionsOf(stored));
}

/** The same on libuv's thread pool: the event loop stays free meanwhile. */
export function hashOnThreadPoolFor(stored: StoredPassword, password: string): Promise<Buffer> {
  return derive(password, stored.salt, stored.keyLength, stored.cost);
}

/** The same with `verify`, the loan service's --verify file (lesson 3's exercise), instead of the kit's code. */
export function hashWithFor(
  verify: VerifyPassword,
  stored: StoredPassword,
  password: string,
): Buffer | Promise<Buffer> {
  return verify(password, stored.salt, stored.keyLength, optionsOf(stored));
}
