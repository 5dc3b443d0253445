/**
 * The routine of the fault experiments (lesson 6's failover and graceful, lesson 7's counter): start N
 * replicas and a balancer in front of them, warm the path up, run one bounded load through it,
 * send the last replica a signal at a set second or after a set number of answers, collect the
 * requests the balancer retried, let the experiment look at what it needs (`inspect`), and stop
 * every server it started.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { summarizeAccessLog, type AccessSummary } from '../../../servers/lib/balancer/access-log.ts';
import type { BalancerPolicy } from '../../../core/policies.ts';
import type { Lab } from '../process/lab.ts';
import { runLoad, startLoad } from './load.ts';
import type { LoadOptions, LoadResult } from './load-types.ts';
import { withoutLeadIn } from './lead-in.ts';
import type { ServerProcess } from '../process/launch.ts';
import type { Progress } from '../harness/progress.ts';
import { retriesOf, startBalancer, startReplicas, type BalancerKind, type Replica } from '../process/topology.ts';

interface FaultedLoadSpec {
  /** For progress lines: `2/5 sigkill`. */
  label: string;
  replicas: number;
  /** Flags for every replica (--abrupt, a state store). */
  replicaArgs?: string[];
  /** Flags for the last replica only, the one the fault hits (the vanish fault's small --backlog). */
  victimArgs?: string[];
  lb: BalancerKind;
  policy: BalancerPolicy;
  port: number;
  /** More balancer flags (--retries 0, --response-timeout 1500). */
  lbArgs?: string[];
  /** Load through the balancer before the measured one: fresh processes answer slowly until their JIT has warmed up. */
  warmup?: { route: string; connections: number; seconds: number };
  /**
   * Seconds of the measured load itself before its measured part: the same connections, never a
   * gap, and nothing of them counted (the timeline starts after them, the fault's second counts
   * from their end). A separate warm-up left the measured load's first second at about two
   * thirds of the rest (a new load starting), which a lead-in does not.
   */
  leadInS?: number;
  /** The measured load, on `route` through the balancer. */
  load: Omit<LoadOptions, 'url' | 'onResponse'> & { route: string };
  /** The fault: a signal to the last replica, `atS` seconds into the load or after `afterResponses` answers. */
  fault: { signal: NodeJS.Signals } & ({ atS: number } | { afterResponses: number });
  /**
   * Have the balancer write its access log, and count the measured load's part of it (requests
   * of `load.slowMs` or more as slow); the clients count answers whose x-upstream-addr names
   * more than one replica, to set against it.
   */
  accessLog?: boolean;
}

export interface FaultedTopology {
  /** With the shared database's file (`dbFile`), as startReplicas returns them. */
  replicas: Replica[] & { dbFile?: string };
  victim: Replica;
  lb: ServerProcess;
  load: LoadResult;
  /** Requests the balancer tried on more than one replica, from its `retry:` lines. */
  retries: Awaited<ReturnType<typeof retriesOf>>;
  /** With `accessLog`: what the balancer's log says of the measured load. */
  accessLog?: AccessSummary;
}

/** Runs the routine; `inspect` sees the topology before it is stopped (a database, a replica's stop lines). */
export async function faultedLoad<T>(
  lab: Lab,
  progress: Progress,
  spec: FaultedLoadSpec,
  inspect: (t: FaultedTopology) => Promise<T> | T,
): Promise<FaultedTopology & { extra: T }> {
  const { label } = spec;
  progress.step(`${label}: starting ${spec.replicas} replicas and ${spec.lb}`);
  const replicas = await startReplicas(lab, spec.replicas, spec.replicaArgs ?? [], spec.victimArgs ?? []);
  const victim = replicas.at(-1)!;
  const logFile = spec.accessLog ? path.join(lab.tempDir('access-log'), 'access.log') : undefined;
  const lbArgs = [...(spec.lbArgs ?? []), ...(logFile ? ['--access-log', logFile] : [])];
  const lb = await startBalancer(lab, spec.lb, spec.policy, replicas, spec.port, true, lbArgs);
  if (spec.warmup) {
    progress.step(`${label}: warm-up`);
    await runLoad({
      url: `${lb.url}${spec.warmup.route}`,
      connections: spec.warmup.connections,
      durationS: spec.warmup.seconds,
    });
  }
  const { route, ...measured } = spec.load;
  const lead = spec.leadInS ?? 0;
  const load = lead > 0 ? { ...measured, durationS: measured.durationS + lead, settleS: lead } : measured;
  const when = 'atS' in spec.fault ? `at second ${spec.fault.atS}` : `after ${spec.fault.afterResponses} answers`;
  progress.step(
    `${label}: ${load.method ?? 'GET'} ${route} with ${load.connections} connections, ${spec.fault.signal} to ${victim.name} ${when}`,
  );
  const fault = spec.fault;
  // The log's clock: its lines before this are the warm-up's or the lead-in's, and so are the
  // clients' answers before it, left out of the slow and retried counts alike.
  const loadFromS = Date.now() / 1000 + lead;
  const running = startLoad({
    url: `${lb.url}${route}`,
    ...load,
    ...(lead > 0 ? { countFromMs: loadFromS * 1000 } : {}),
    ...(logFile ? { countHeader: { name: 'x-upstream-addr', pattern: /,/ } } : {}),
    ...('afterResponses' in fault
      ? { onResponse: (n: number) => n === fault.afterResponses && victim.proc.signal(fault.signal) }
      : {}),
  });
  const timer =
    'atS' in fault ? setTimeout(() => victim.proc.signal(fault.signal), (lead + fault.atS) * 1000) : undefined;
  let result: LoadResult;
  try {
    result = await running.result;
  } finally {
    clearTimeout(timer);
    // A frozen replica, or one whose address vanished (it stopped itself), runs again for its stop.
    if (fault.signal === 'SIGSTOP' || fault.signal === 'SIGUSR2') victim.proc.signal('SIGCONT');
  }
  // retriesOf has the kit's balancer write out its log; nginx writes each line as the request ends.
  const topology: FaultedTopology = {
    replicas,
    victim,
    lb,
    load: lead > 0 ? withoutLeadIn(result, lead) : result,
    retries: await retriesOf(lb),
  };
  if (logFile) topology.accessLog = summarizeAccessLog(readIfThere(logFile), (load.slowMs ?? 1000) / 1000, loadFromS);
  const extra = await inspect(topology);
  await lab.stop(lb);
  await Promise.all(replicas.map((r) => lab.stop(r.proc)));
  return { ...topology, extra };
}

/** A file's text, or '' when it was never written (nginx creates its log with the first line). */
function readIfThere(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}
