/**
 * Lesson 8's routes on each cluster worker: what one virtual user of the autoscaling workload
 * calls (measure/lib/load/users.ts). A sign-up is expensive (a password hashed with scrypt on libuv's
 * thread pool); refreshing a token and searching the catalogue are light.
 *
 *   POST /signup          {"name": "..."}  → 201 {member, token}: scrypt of the password, then a token
 *   POST /token/refresh   Authorization: Bearer <token> → 200 {token} (a new one), 401 without a valid one
 *   GET  /books?q=<text>  Authorization: Bearer <token> → 200 {matches, titles}: a scan of 2000 titles
 *   GET  /work?ms=N       N ms of this worker's CPU time (for checking the CPU quota), 400 for a bad N
 *
 * Tokens are HMAC-signed (session-token.ts) with a secret the primary gives every worker, so any
 * worker accepts any worker's token and no shared store is needed.
 */
import { randomBytes, scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import { burnCpu } from '../cpu/work.ts';
import { HttpError, readJsonBody, sendJson, type Routes } from '../serve/http.ts';
import { maxmemFor, type ScryptCost } from '../cpu/scrypt-cost.ts';
import { createToken, verifyToken } from '../state/session-token.ts';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;

/** The sign-up's scrypt cost: about 10–20 ms of one core on a laptop (N=2^13: 8 MiB). */
export const SIGNUP_COST: ScryptCost = { N: 2 ** 13, r: 8, p: 1 };
/** How long a token lives, ms. */
const TOKEN_TTL_MS = 10 * 60_000;
/** Largest /work?ms= accepted. */
const MAX_WORK_MS = 10_000;

const WORDS = [
  'river',
  'night',
  'garden',
  'iron',
  'silent',
  'north',
  'glass',
  'winter',
  'paper',
  'stone',
  'golden',
  'city',
  'last',
  'small',
  'hidden',
  'long',
];
/** 2000 made-up titles, the same in every worker. */
const CATALOGUE = Array.from(
  { length: 2000 },
  (_, i) => `The ${WORDS[i % 16]} ${WORDS[(i * 7 + 3) % 16]} of ${WORDS[(i * 11 + 5) % 16]} ${i}`,
);

function bearer(authorization: string | undefined, secret: string): string {
  const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
  const member = token ? verifyToken(token, secret) : undefined;
  if (!member)
    throw new HttpError(401, 'a valid token is needed: Authorization: Bearer <token> (POST /signup gives one)');
  return member;
}

/** The routes, for a worker whose tokens are signed with `secret` and whose sign-up costs `cost`. */
export function workloadRoutes(secret: string, cost: ScryptCost, fields: () => object = () => ({})): Routes {
  const maxmem = maxmemFor(cost);
  return {
    '/signup': {
      POST: async (req, res) => {
        const body = (await readJsonBody(req, 4096)) as { name?: unknown };
        if (typeof body?.name !== 'string' || body.name.length === 0 || body.name.length > 100) {
          throw new HttpError(400, 'send {"name": "<1 to 100 characters>"}');
        }
        await scryptAsync(`pw-${body.name}`, randomBytes(16), 64, { ...cost, maxmem });
        sendJson(res, 201, { member: body.name, token: createToken(body.name, TOKEN_TTL_MS, secret), ...fields() });
      },
    },
    '/token/refresh': {
      POST: (req, res) => {
        const member = bearer(req.headers.authorization, secret);
        sendJson(res, 200, { token: createToken(member, TOKEN_TTL_MS, secret), ...fields() });
      },
    },
    '/books': {
      GET: (req, res, url) => {
        bearer(req.headers.authorization, secret);
        const q = (url.searchParams.get('q') ?? '').toLowerCase().slice(0, 50);
        const found = CATALOGUE.filter((t) => t.toLowerCase().includes(q));
        sendJson(res, 200, { matches: found.length, titles: found.slice(0, 10), ...fields() });
      },
    },
    '/work': {
      GET: (_req, res, url) => {
        const raw = url.searchParams.get('ms') ?? '';
        if (!/^\d+$/.test(raw) || Number(raw) > MAX_WORK_MS)
          throw new HttpError(400, `ms must be a whole number from 0 to ${MAX_WORK_MS}; got '${raw}'`);
        burnCpu(Number(raw));
        sendJson(res, 200, { ms: Number(raw), ...fields() });
      },
    },
  };
}
