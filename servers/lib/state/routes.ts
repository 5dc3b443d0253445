/**
 * Lesson 7's routes, shared by the replica and the cluster worker, on top of a StateStore:
 *
 *   POST /login  {"member": "m1", "password": "pw-m1"}   200 + cookie `session`, or 401
 *   GET  /me                                             200 {member}, or 401 when the session is unknown
 *   POST /loan   [{"member": "m1"}]                      200 {loans: total}; 429 past the member's limit
 *   GET  /loans                                          200 {loans: total} as this process sees it
 *
 * Every simulated member's password is `pw-<member>`; it is checked with a light scrypt on the
 * thread pool (N=2^10), the way a real password check works, only cheaper. Sessions live in the
 * store, or with --sessions token in an HMAC-signed cookie (session-token.ts). The loan limit is
 * per member, a fixed window in the store (default 10 per 60 s).
 */
import { scrypt, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { promisify } from 'node:util';
import { KitError } from '../../../lib/errors.ts';
import { intFlag, type FlagSpecs } from '../../../lib/cli.ts';
import { HttpError, readJsonBody, sendJson, type Handler, type Routes } from '../serve/http.ts';
import { createToken, verifyToken } from './session-token.ts';
import { withStudentLimiter } from './student-limiter.ts';
import { isStoreKind, openStore, STORES, type StateStore, type StoreKind } from './stores.ts';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: string,
  keylen: number,
  options: { N: number },
) => Promise<Buffer>;

/** Light scrypt for /login: N=2^10, r=8 (about 1 ms here), so logins test state, not hashing. */
const LOGIN_COST = { N: 1024 };
const SESSION_COOKIE = 'session';

const SESSION_MODES = ['store', 'token'] as const;
type SessionMode = (typeof SESSION_MODES)[number];

export interface StateOptions {
  store: StoreKind;
  stateFile?: string;
  redisUrl?: string;
  prefix: string;
  sessions: SessionMode;
  secret?: string;
  sessionTtlMs: number;
  loanLimit: number;
  loanWindowMs: number;
  /** Lesson 7's exercise: the student's limiter file (student-limiter.ts). */
  limiterFile?: string;
}

/** The flags for StateOptions, shared by servers/replica.ts and servers/managed-cluster.ts. */
export function stateFlags() {
  return {
    state: {
      type: 'string',
      valueName: STORES.join('|'),
      description: 'where sessions, loan counts and rate limits live',
      default: 'memory',
    },
    'state-file': {
      type: 'string',
      valueName: 'file',
      description: 'the SQLite file for --state sqlite (every process opens the same one)',
    },
    'redis-url': { type: 'string', valueName: 'url', description: 'redis://127.0.0.1:<port> for --state redis' },
    'state-prefix': {
      type: 'string',
      valueName: 'text',
      description: 'prefix of every Redis key (runs sharing one Redis keep apart)',
      default: 'nsl:',
    },
    sessions: {
      type: 'string',
      valueName: 'store|token',
      description: 'sessions in the state store, or in a signed cookie (token)',
      default: 'store',
    },
    'session-secret': {
      type: 'string',
      valueName: 'text',
      description: 'HMAC secret for --sessions token: the same on every replica (env LAB_SESSION_SECRET)',
    },
    'loan-limit': {
      type: 'string',
      valueName: 'n',
      description: 'loans per member per window (POST /loan with a member)',
      default: '10',
    },
    'loan-window': { type: 'string', valueName: 'ms', description: "the loan limit's window", default: '60000' },
    limiter: {
      type: 'string',
      valueName: 'file.ts',
      description:
        "lesson 7's exercise: the loan limit counted by this file's hit() with --state redis (TypeScript: compiled with esbuild as the server starts)",
    },
  } as const satisfies FlagSpecs;
}

/** Checks the state flags; throws KIT_ERR_USAGE naming the bad one. */
export function stateOptions(
  flags: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): StateOptions {
  const store = String(flags.state ?? 'memory');
  if (!isStoreKind(store))
    throw new KitError('KIT_ERR_USAGE', `--state is one of ${STORES.join(', ')}; got '${store}'`);
  const sessions = String(flags.sessions ?? 'store');
  if (sessions !== 'store' && sessions !== 'token')
    throw new KitError('KIT_ERR_USAGE', `--sessions is store or token; got '${sessions}'`);
  const secret = (flags['session-secret'] as string | undefined) ?? env.LAB_SESSION_SECRET;
  if (sessions === 'token' && !secret)
    throw new KitError(
      'KIT_ERR_USAGE',
      "--sessions token needs --session-secret (the same on every replica, or they reject each other's tokens)",
    );
  if (store === 'sqlite' && !flags['state-file'])
    throw new KitError('KIT_ERR_USAGE', '--state sqlite needs --state-file <file> (one file all processes share)');
  if (store === 'redis' && !flags['redis-url'])
    throw new KitError(
      'KIT_ERR_USAGE',
      '--state redis needs --redis-url redis://127.0.0.1:<port> (npx tsx servers/redis.ts starts one)',
    );
  if (flags.limiter !== undefined && store !== 'redis')
    throw new KitError('KIT_ERR_USAGE', '--limiter counts in Redis: give it with --state redis --redis-url <url>');
  return {
    store,
    stateFile: flags['state-file'] as string | undefined,
    redisUrl: flags['redis-url'] as string | undefined,
    prefix: String(flags['state-prefix'] ?? 'nsl:'),
    sessions,
    secret,
    sessionTtlMs: 30 * 60_000,
    loanLimit: intFlag('loan-limit', flags['loan-limit'] as string | undefined, 1, 1_000_000, 10),
    loanWindowMs: intFlag('loan-window', flags['loan-window'] as string | undefined, 1, 3_600_000, 60_000),
    ...(flags.limiter !== undefined ? { limiterFile: String(flags.limiter) } : {}),
  };
}

/** The store the options name; with --limiter, its loan limit counted by the student's file. */
export async function openStateStore(o: StateOptions): Promise<StateStore> {
  const store = await openStore({ kind: o.store, file: o.stateFile, redisUrl: o.redisUrl, prefix: o.prefix });
  return o.limiterFile === undefined ? store : withStudentLimiter(store, o.limiterFile, o.redisUrl!, o.prefix);
}

/** The value of cookie `name` in a request, or undefined. */
function cookie(req: http.IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const expectedHashes = new Map<string, Promise<Buffer>>();
/** scrypt of the member's one valid password, computed once per member (at most 10 000 kept). */
function expectedHash(member: string): Promise<Buffer> {
  let h = expectedHashes.get(member);
  if (!h) {
    if (expectedHashes.size >= 10_000) expectedHashes.clear();
    h = scryptAsync(`pw-${member}`, `nsl:${member}`, 32, LOGIN_COST);
    expectedHashes.set(member, h);
  }
  return h;
}

/**
 * `raw`, with every failure turned into a 503 that names the store (Redis gone, say), rather than a
 * 500 in the client library's words; the failure itself goes to stderr.
 */
function storeOr503(raw: StateStore, o: StateOptions): StateStore {
  const unavailable = (err: unknown): never => {
    // An answer already chosen (a student's limiter that failed, lesson 7's exercise) passes as it is.
    if (err instanceof HttpError) throw err;
    process.stderr.write(`state store ${o.store} failed: ${(err as Error).message}\n`);
    throw new HttpError(503, `the state store (${o.store}${o.redisUrl ? ` at ${o.redisUrl}` : ''}) is not answering`);
  };
  return {
    kind: raw.kind,
    createSession: (m, ttl) => raw.createSession(m, ttl).catch(unavailable),
    sessionMember: (id) => raw.sessionMember(id).catch(unavailable),
    increment: (k, by) => raw.increment(k, by).catch(unavailable),
    counter: (k) => raw.counter(k).catch(unavailable),
    hit: (k, limit, w) => raw.hit(k, limit, w).catch(unavailable),
    close: () => raw.close(),
  };
}

/**
 * POST /login: checks the member's password (scrypt at LOGIN_COST against the one valid password's
 * hash) and answers 401, or 200 with a session cookie: a session kept in `store`, or a signed token.
 */
function loginHandler(store: StateStore, o: StateOptions, identity: () => object): Handler {
  return async (req, res) => {
    const body = (await readJsonBody(req, 4096)) as { member?: unknown; password?: unknown } | null;
    const member = body?.member;
    const password = body?.password;
    if (
      typeof member !== 'string' ||
      !/^[\w.-]{1,64}$/.test(member) ||
      typeof password !== 'string' ||
      password.length > 256
    ) {
      throw new HttpError(400, 'body must be {"member": "<1 to 64 letters, digits, . _ ->", "password": "..."}');
    }
    const [given, expected] = await Promise.all([
      scryptAsync(password, `nsl:${member}`, 32, LOGIN_COST),
      expectedHash(member),
    ]);
    if (!timingSafeEqual(given, expected)) {
      sendJson(res, 401, { error: 'wrong member or password', ...identity() });
      return;
    }
    const value =
      o.sessions === 'token'
        ? createToken(member, o.sessionTtlMs, o.secret!)
        : await store.createSession(member, o.sessionTtlMs);
    const cookieText = `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${Math.floor(o.sessionTtlMs / 1000)}`;
    sendJson(res, 200, { member, ...identity() }, { 'set-cookie': cookieText });
  };
}

/**
 * The lesson 7 routes over `store`. `identity` adds the answering process's fields (replica name,
 * pid) to every answer; `loanAnswer` shapes POST /loan's answer from the new total.
 */
export function stateRoutes(
  raw: StateStore,
  o: StateOptions,
  identity: () => object,
  loanAnswer: (total: number) => object = (loans) => ({ loans }),
): Routes {
  const store = storeOr503(raw, o);
  const memberOf = async (req: http.IncomingMessage): Promise<string | undefined> => {
    const value = cookie(req, SESSION_COOKIE);
    if (!value) return undefined;
    return o.sessions === 'token' ? verifyToken(value, o.secret!) : store.sessionMember(value);
  };
  return {
    '/login': { POST: loginHandler(store, o, identity) },
    '/me': {
      GET: async (req, res) => {
        const member = await memberOf(req);
        if (member === undefined) sendJson(res, 401, { error: 'no session: log in with POST /login', ...identity() });
        else sendJson(res, 200, { member, ...identity() });
      },
    },
    '/loan': {
      POST: async (req, res) => {
        const body = (await readJsonBody(req, 4096, true)) as { member?: unknown } | null | undefined;
        const member = body && typeof body === 'object' && typeof body.member === 'string' ? body.member : undefined;
        if (member !== undefined) {
          const { allowed, count } = await store.hit(`loans:${member}`, o.loanLimit, o.loanWindowMs);
          if (!allowed) {
            sendJson(
              res,
              429,
              { error: `${member} is over ${o.loanLimit} loans per ${o.loanWindowMs / 1000} s`, count, ...identity() },
              { 'retry-after': String(Math.ceil(o.loanWindowMs / 1000)) },
            );
            return;
          }
        }
        sendJson(res, 200, { ...identity(), ...loanAnswer(await store.increment('loans')) });
      },
    },
    '/loans': { GET: async (_req, res) => sendJson(res, 200, { ...identity(), loans: await store.counter('loans') }) },
  };
}
