/**
 * Replica: one copy of a stateless app server, the unit that lesson 4 puts behind a balancer.
 * Every answer names the replica (header `x-replica` and field `replica`).
 *
 *   GET  /fast              trivial, sub-millisecond
 *   GET  /slow-sync?ms=N    busy-waits N ms on the event loop (blocks every other request)
 *   GET  /stall?ms=N        blocks the event loop N ms without using CPU (a sync wait on slow I/O)
 *   GET  /slow-async?ms=N   waits N ms on a timer (blocks nothing)
 *   GET  /work?ms=N         N ms of CPU time: the CPU-bound route for the scaling table
 *   GET  /whoami            name and pid
 *   GET  /health            200, or 503 while draining after SIGTERM
 *
 * On SIGTERM it drains (see serve() in lib/serve/main.ts): /health turns 503, new connections are
 * refused, requests in flight finish, then it exits; --drain-deadline closes what is left;
 * --abrupt exits at once. Each step prints a `stop:` line. On SIGUSR2 its address vanishes
 * (lib/serve/vanish.ts): it closes its connections, fills its accept queue and stops itself, so new
 * connection attempts get no answer until SIGCONT; give it a small --backlog for that.
 *   POST /users             {"name": "..."} → 201 { id }, in the SQLite file or PostgreSQL given by --db
 *   GET  /users/:id         200 with the user, or 404
 *                           (both take ?work=N: N ms of CPU first, the app's own work per request)
 *   GET  /__replica/stats   requests served per route (not counted itself), connections accepted,
 *                           CPU used so far (cpuUs: user + system, µs), the event loop's delay
 *                           over the last whole second (loopDelayMs: p99 and max, ms), the
 *                           database's writes and writer-lock times (db), and with --cpu-quota
 *                           how often the quota stopped it (throttle)
 *   POST /login, GET /me, POST /loan, GET /loans   lesson 7's state routes (lib/state/routes.ts),
 *                           over the store --state names (memory by default)
 *
 * `--cpu-quota <cores>` holds the replica to a share of a core, as a container's CPU limit would
 * (lib/cpu/self-quota.ts); `--commit-ms` makes every SQLite commit wait that long for a modelled disk
 * flush (lib/state/users-db.ts).
 *
 * Run alone: `npx tsx servers/replica.ts --name app1 --port 0 [--db /tmp/users.db]`.
 */
import http from 'node:http';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { DEFAULT_BACKLOG, HttpError, readJsonBody, router, sendJson, type Routes } from './lib/serve/http.ts';
import { vanishOnSignal } from './lib/serve/vanish.ts';
import { DRAIN_DEADLINE_MS } from './lib/serve/drain.ts';
import { failStartup, serve, serverFlags } from './lib/serve/main.ts';
import { MAX_COMMIT_MS, openUsersDb, type UsersDb } from './lib/state/users-db.ts';
import { isPostgresUrl, openUsersPg } from './lib/state/users-pg.ts';
import { openStateStore, stateFlags, stateOptions, stateRoutes } from './lib/state/routes.ts';
import { burnCpu, busyWait, sleepBlocking } from './lib/cpu/work.ts';
import { lastSecondLoopDelay } from './lib/serve/loop-delay.ts';
import type { SelfQuota } from './lib/cpu/self-quota.ts';
import { applyQuota, limitOptions } from './lib/cpu/limits.ts';
import type { ReplicaStats } from './contracts.ts';

const spec = defineCommand({
  usage:
    'npx tsx servers/replica.ts --name <name> [--port <n>] [--db <file> [--commit-ms <ms>]] [--cpu-quota <cores> [--quota-mode auto|cgroup|throttle]] [--drain-deadline <ms>] [--abrupt] [--backlog <n>] [--state memory|sqlite|redis] [--state-file <file>] [--redis-url <url>] [--sessions store|token] [--session-secret <text>]',
  summary:
    'A stateless app replica for lesson 4: fast, slow, CPU-bound and user routes; every answer names the replica. Listens on 127.0.0.1 and prints one ready line.',
  flags: {
    name: { type: 'string', valueName: 'name', description: "the replica's name, in every answer", default: 'app1' },
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: '3010' },
    db: {
      type: 'string',
      valueName: 'file|url',
      description:
        'SQLite file for /users, shared by all replicas (created if missing), or a postgres:// URL (servers/postgres.ts prints one)',
    },
    'commit-ms': {
      type: 'string',
      valueName: 'ms',
      description: `each commit to a SQLite --db also waits this long holding the writer lock, as for a slow disk's flush (0 to ${MAX_COMMIT_MS}; default 0)`,
    },
    'cpu-quota': {
      type: 'string',
      valueName: 'cores',
      description:
        'hold the replica to this share of a core, 0.05 to 4, as a container CPU limit would (default: none)',
    },
    'quota-mode': {
      type: 'string',
      valueName: 'mode',
      description:
        'how the quota is enforced: auto (cgroup if allowed, else throttle), cgroup, throttle (default: auto)',
    },
    'drain-deadline': {
      type: 'string',
      valueName: 'ms',
      description: `on SIGTERM, how long in-flight requests may take to finish before their connections are closed`,
      default: String(DRAIN_DEADLINE_MS),
    },
    abrupt: { type: 'boolean', description: 'on SIGTERM exit at once, cutting requests in flight (no drain)' },
    backlog: {
      type: 'string',
      valueName: 'n',
      description: `connections the kernel may hold for the replica before it accepts them (listen backlog; SIGUSR2's fault fills it)`,
      default: String(DEFAULT_BACKLOG),
    },
    ...stateFlags(),
  },
  epilogue:
    'Routes: GET /fast, /slow-sync?ms=N, /slow-async?ms=N, /work?ms=N, /whoami, /health; POST /users; GET /users/:id\nTry: curl -s 127.0.0.1:3010/work?ms=50',
});

/** Longest ?ms= a route accepts: beyond it the request is a mistake, not a lesson. */
const MAX_MS = 10_000;
/** Largest request body, bytes. */
const BODY_LIMIT = 16 * 1024;

/** Parses ?ms=N: a whole number from 0 to MAX_MS, else HttpError 400. */
function msParam(url: URL): number {
  const raw = url.searchParams.get('ms');
  if (raw === null) throw new HttpError(400, 'ms is missing: add ?ms=<0..10000>');
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_MS)
    throw new HttpError(400, `ms must be a whole number from 0 to ${MAX_MS}; got '${raw}'`);
  return Number(raw);
}

/** ?work=N on a /users route: N ms of CPU before the database, the app's own work (none without it). */
function appWork(url: URL): void {
  const raw = url.searchParams.get('work');
  if (raw === null) return;
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_MS)
    throw new HttpError(400, `work must be a whole number of ms from 0 to ${MAX_MS}; got '${raw}'`);
  burnCpu(Number(raw));
}

/** What the routes need from the process: the replica's name, its database, its drain flag. */
interface ReplicaContext {
  name: string;
  db: UsersDb | undefined;
  isDraining: () => boolean;
}

/** The lesson routes (the shared-state ones come from stateRoutes). */
function replicaRoutes(ctx: ReplicaContext): Routes {
  const { name } = ctx;
  const reply = (res: http.ServerResponse, status: number, body: object) =>
    sendJson(res, status, { replica: name, ...body });
  const needDb = (): UsersDb => {
    if (!ctx.db) throw new HttpError(503, 'no database: start the replica with --db <file>');
    return ctx.db;
  };
  return {
    '/fast': { GET: (_req, res) => reply(res, 200, { ok: true }) },
    '/slow-sync': {
      GET: (_req, res, url) => {
        const ms = msParam(url);
        busyWait(ms);
        reply(res, 200, { ms, blocked: 'event-loop' });
      },
    },
    '/stall': {
      GET: (_req, res, url) => {
        const ms = msParam(url);
        sleepBlocking(ms);
        reply(res, 200, { ms, blocked: 'event-loop', cpu: false });
      },
    },
    '/slow-async': {
      GET: async (_req, res, url) => {
        const ms = msParam(url);
        await new Promise((r) => setTimeout(r, ms));
        reply(res, 200, { ms, blocked: 'nothing' });
      },
    },
    '/work': {
      GET: (_req, res, url) => {
        const ms = msParam(url);
        burnCpu(ms);
        reply(res, 200, { ms, cpu: true });
      },
    },
    '/whoami': { GET: (_req, res) => reply(res, 200, { pid: process.pid }) },
    '/health': {
      GET: (_req, res) => reply(res, ctx.isDraining() ? 503 : 200, { status: ctx.isDraining() ? 'draining' : 'ok' }),
    },
    '/users': {
      POST: async (req, res, url) => {
        appWork(url);
        const body = (await readJsonBody(req, BODY_LIMIT)) as { name?: unknown } | null;
        const userName = body && typeof body === 'object' ? body.name : undefined;
        if (typeof userName !== 'string' || userName.length === 0 || userName.length > 200) {
          throw new HttpError(400, 'body must be {"name": "<1 to 200 characters>"}');
        }
        const user = await needDb().create(userName, name);
        reply(res, 201, { id: user.id });
      },
    },
    '/users/:id': {
      GET: async (_req, res, url, params) => {
        appWork(url);
        if (!/^\d{1,15}$/.test(params.id ?? '')) throw new HttpError(400, 'a user id is a whole number');
        const user = await needDb().get(Number(params.id));
        if (!user) throw new HttpError(404, `no user ${params.id}`);
        reply(res, 200, { user });
      },
    },
  };
}

async function main(): Promise<void> {
  const flags = serverFlags(spec);
  const state = stateOptions(flags);
  const name = flags.name ?? 'app1';
  if (!/^[\w.-]{1,40}$/.test(name))
    throw new KitError('KIT_ERR_USAGE', `--name must be 1 to 40 letters, digits, '.', '_' or '-'; got '${name}'`);
  const port = intFlag('port', flags.port, 0, 65535, 3010);
  const drainDeadlineMs = intFlag('drain-deadline', flags['drain-deadline'], 0, 600_000, DRAIN_DEADLINE_MS);
  const backlog = intFlag('backlog', flags.backlog, 1, 4096, DEFAULT_BACKLOG);
  const limits = limitOptions(flags);
  let quota: SelfQuota | undefined;
  const db =
    flags.db === undefined
      ? undefined
      : isPostgresUrl(flags.db)
        ? await openUsersPg(flags.db)
        : openUsersDb(flags.db, { commitMs: limits.commitMs });
  const store = await openStateStore(state);
  let draining = false;
  /** Requests served per route (the path without its query), for experiments to read. */
  const served: Record<string, number> = {};
  const routes: Routes = {
    ...stateRoutes(store, state, () => ({ replica: name })),
    ...replicaRoutes({ name, db, isDraining: () => draining }),
  };
  const route = router(routes, () => ({ replica: name }));
  // Connections accepted so far (lesson 2: how many a proxy opens), this stats request's own included.
  let connections = 0;
  const loopDelay = lastSecondLoopDelay();
  // Every answer, errors included, names the replica in a header too.
  const server = http.createServer((req, res) => {
    res.setHeader('x-replica', name);
    quota?.checkpoint();
    const pathOnly = (req.url ?? '/').split('?')[0]!.replace(/^\/users\/[^/]+$/, '/users/:id');
    if (pathOnly === '/__replica/stats') {
      const cpu = process.cpuUsage();
      const limited = quota ? { quota: { mode: quota.mode, cores: limits.quota!, throttle: quota.stats() } } : {};
      sendJson(res, 200, {
        replica: name,
        pid: process.pid,
        served,
        connections,
        cpuUs: cpu.user + cpu.system,
        loopDelayMs: loopDelay(),
        ...(db ? { db: db.stats() } : {}),
        ...limited,
      } satisfies ReplicaStats);
      return;
    }
    if (routes[pathOnly]) served[pathOnly] = (served[pathOnly] ?? 0) + 1; // known routes only: junk paths must not grow memory
    route(req, res);
  });
  server.on('connection', () => connections++);
  let bound = 0;
  vanishOnSignal(
    server,
    backlog,
    () => bound,
    (line) => process.stdout.write(line + '\n'),
  );
  quota = applyQuota(limits);
  bound = await serve(`replica-${name}`, server, port, {
    onStop: () => (draining = true),
    drainDeadlineMs,
    abrupt: Boolean(flags.abrupt),
    backlog,
  });
}

main().catch(failStartup);
