/**
 * Lesson 3's cluster loan counter. A node:cluster primary forks --workers processes that share one
 * port; each worker counts loans in its own memory, so no counter sees every loan. A worker that
 * dies is replaced by a new process whose counter starts at 0. The ready line comes once every
 * worker listens. What no lesson is about (round robin on every OS, the restart budget, stopping
 * the workers, the launcher's commands) is in lib/cluster/keeper.ts. Lessons 6 to 8 add a rolling
 * restart, shared state, a CPU quota and an autoscaler to the same primary: servers/managed-cluster.ts.
 */
import cluster from 'node:cluster';
import http from 'node:http';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { formatReady } from '../lib/ready.ts';
import type { WorkerStatus } from './contracts.ts';
import { serveWorker, WorkerKeeper } from './lib/cluster/keeper.ts';
import { router, sendJson, type Routes } from './lib/serve/http.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import { formatCost, hashOnEventLoop, HEAVY_COST, heavyCostFrom } from './lib/cpu/scrypt-cost.ts';

const spec = defineCommand({
  usage:
    'npx tsx servers/cluster.ts [--port <n>] [--workers <n>] [--cost N=..,r=..,p=..] [--restart-budget <n>] [--crash-at-start]',
  summary:
    "Lesson 3's cluster loan server: a node:cluster primary and N workers on one port, each with its own in-memory loan counter. A killed worker is replaced. Listens on 127.0.0.1 and prints one ready line once every worker listens.",
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: '3001' },
    workers: { type: 'string', valueName: 'n', description: 'number of worker processes (1-32)', default: '3' },
    cost: {
      type: 'string',
      valueName: 'N=..,r=..,p=..',
      description: `scrypt cost of /member/verify-blocking (default ${formatCost(HEAVY_COST)})`,
    },
    'restart-budget': {
      type: 'string',
      valueName: 'n',
      description: 'worker deaths allowed within 30 s before the primary gives up and exits',
      default: '10',
    },
    'crash-at-start': {
      type: 'boolean',
      description: 'workers throw before listening (to see the restart budget work)',
    },
  },
  epilogue:
    'Routes: POST /loan, GET /status, GET /member/verify-blocking; each answers { pid, loanCounter }.\nTry: curl -s -X POST 127.0.0.1:3001/loan   (a few times: the pid changes)\n     kill -USR2 <primary pid>              (kills the oldest worker; watch its replacement)',
});

async function primary(): Promise<void> {
  const flags = serverFlags(spec);
  const workers = intFlag('workers', flags.workers, 1, 32, 3);
  const cost = flags.cost ?? process.env.LAB_SCRYPT_COST ?? '';
  heavyCostFrom(cost || undefined); // a bad --cost fails here, once, not in every worker
  const keeper = new WorkerKeeper(
    intFlag('port', flags.port, 0, 65535, 3001),
    intFlag('restart-budget', flags['restart-budget'], 0, 1000, 10),
  );
  const replacing = new Map<number, number>(); // a new worker's id -> the pid of the one it replaces
  let ready = false;

  const fork = (replaces?: number) => {
    const env = {
      LAB_WORKER_PORT: String(keeper.workerPort()),
      LAB_SCRYPT_COST: cost,
      LAB_CRASH_AT_START: flags['crash-at-start'] ? '1' : '',
      LAB_LIFELINE: '',
    };
    const worker = cluster.fork(env);
    if (replaces !== undefined) replacing.set(worker.id, replaces);
  };

  cluster.on('listening', (worker, address) => {
    const old = replacing.get(worker.id);
    if (old !== undefined) {
      keeper.say(`worker ${worker.process.pid} listening, replacing ${old}`);
      keeper.tell({ event: 'worker-replaced', old, pid: worker.process.pid! });
    }
    if (!ready && keeper.everListened >= workers) {
      ready = true;
      keeper.say(formatReady('cluster', address.port, process.pid));
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const death = keeper.death(worker, code, signal); // undefined: stopping, or past the restart budget
    if (!death) return;
    keeper.say(
      `worker ${death.pid} ${death.how}; starting a replacement${death.delayMs ? ` in ${death.delayMs} ms` : ''}`,
    );
    setTimeout(() => keeper.shuttingDown || fork(death.pid), death.delayMs);
  });

  keeper.obeyLauncher();
  for (let i = 0; i < workers; i++) fork();
}

async function worker(): Promise<void> {
  if (process.env.LAB_CRASH_AT_START) throw new Error('crashing at start-up, as asked by --crash-at-start');
  const heavy = heavyCostFrom(undefined); // LAB_SCRYPT_COST, from the primary
  let loanCounter = 0; // this process's memory: no other worker sees it
  const me = (): WorkerStatus => ({ pid: process.pid, loanCounter });
  const routes: Routes = {
    '/loan': {
      POST: (_req, res) => sendJson(res, 200, { pid: process.pid, loanCounter: ++loanCounter } satisfies WorkerStatus),
    },
    '/status': { GET: (_req, res) => sendJson(res, 200, me()) },
    '/member/verify-blocking': {
      GET: (_req, res) => {
        hashOnEventLoop('correct horse battery staple', heavy); // blocks this worker only
        sendJson(res, 200, me());
      },
    },
  };
  await serveWorker(http.createServer(router(routes, () => ({ pid: process.pid }))));
}

(cluster.isPrimary ? primary() : worker()).catch(failStartup);
