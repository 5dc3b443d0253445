/**
 * A worker of lessons 6 to 8's cluster (servers/managed-cluster.ts): the loan routes (`{ pid, loanCounter }`),
 * lesson 7's state routes and lesson 8's workload routes, on the port the primary shares. Its
 * settings come from the primary in the environment (LAB_*); it reports its CPU time when the
 * primary measures it, and runs the in-process throttle when no cgroup holds it to its quota.
 */
import http from 'node:http';
import type { WorkerStatus } from '../../contracts.ts';
import { serveWorker } from './keeper.ts';
import { reportCpu, type PauseRequest } from '../cpu/quota.ts';
import { startThrottle } from '../cpu/throttle.ts';
import { router, sendJson } from '../serve/http.ts';
import { formatCost, hashOnEventLoop, heavyCostFrom, parseCost } from '../cpu/scrypt-cost.ts';
import { openStateStore, stateRoutes, type StateOptions } from '../state/routes.ts';
import { SIGNUP_COST, workloadRoutes } from './workload-routes.ts';

/** A worker: the loan routes, lesson 7's state routes and lesson 8's workload, on the primary's shared port. */
export async function runWorker(): Promise<void> {
  if (process.env.LAB_CRASH_AT_START) throw new Error('crashing at start-up, as asked by --crash-at-start');
  const heavy = heavyCostFrom(undefined);
  const state = JSON.parse(process.env.LAB_STATE_JSON ?? '{}') as StateOptions;
  const quota = JSON.parse(process.env.LAB_QUOTA_JSON ?? '{}') as {
    mode?: string;
    quota?: number;
    periodMs?: number;
    report?: boolean;
  };
  if (quota.report) reportCpu((sample) => process.send?.(sample));
  const signupCost = parseCost(process.env.LAB_SIGNUP_COST || formatCost(SIGNUP_COST));
  // With --state memory (the default) the counter lives in this worker alone: lesson 3's finding.
  const store = await openStateStore(state);
  const me = async (): Promise<WorkerStatus> => ({ pid: process.pid, loanCounter: await store.counter('loans') });

  const server = http.createServer(
    router(
      {
        ...stateRoutes(
          store,
          state,
          () => ({ pid: process.pid }),
          (total) => ({ loanCounter: total }),
        ),
        ...workloadRoutes(process.env.LAB_TOKEN_SECRET || 'lesson-6', signupCost, () => ({ pid: process.pid })),
        '/status': { GET: async (_req, res) => sendJson(res, 200, await me()) },
        '/member/verify-blocking': {
          GET: async (_req, res) => {
            hashOnEventLoop('correct horse battery staple', heavy);
            sendJson(res, 200, await me());
          },
        },
      },
      () => ({ pid: process.pid }),
    ),
  );
  await serveWorker(server);
  // Like the cgroup (see the primary's 'listening'), the throttle starts once the worker listens.
  if (quota.mode === 'throttle' && quota.quota)
    startThrottle(quota.quota, (ms) => process.send?.({ type: 'pause', ms } satisfies PauseRequest), quota.periodMs);
}
