/**
 * Lesson 7 · sessions: where does a login live?
 *
 * For each configuration, 3 replicas behind the balancer. N members (31; 11 with --quick) each log
 * in (POST /login), then read GET /me 10 times, each with its own cookies, one request at a time
 * and the members in turn; then the replica that answered the most requests is SIGKILLed and they
 * read /me 10 more times.
 * Configurations: sessions in replica memory with round robin, ip-hash and a sticky cookie; in
 * SQLite; in Redis (needs redis-server or REDIS_URL); in a signed token (no store).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { defineCommand } from '../lib/cli.ts';
import type { BalancerPolicy } from '../core/policies.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { createLatencyHistogram, recordMs, summarize } from '../results/report/latency.ts';
import { probe } from './lib/load/probe.ts';
import { redisForRun } from './lib/process/stores.ts';
import type { Lab } from './lib/process/lab.ts';
import { balancerKind, LB_FLAG, startBalancer, startReplicas, type BalancerKind } from './lib/process/topology.ts';
import {
  notShown,
  CONFIGS,
  hints,
  render,
  shape,
  type PhaseCount,
  type SessionRun,
  type SessionsResult,
} from '../results/sessions/report.ts';
import { measures, predictions } from '../results/sessions/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/sessions.ts [flags]',
  summary:
    'Members log in through the balancer and read /me, before and after a replica is killed, with sessions in replica memory ' +
    '(round robin, ip-hash, sticky cookie), in SQLite, in Redis and in a signed token; prints the share of reads that lost the session.',
  flags: { ...COMMON_FLAGS, lb: LB_FLAG },
  epilogue: 'Example: npx tsx measure/sessions.ts --lb nginx',
});

interface Options {
  lb: BalancerKind;
}

const REPLICAS = 3;
const READS = 10;
/** Prime to 3 and to 2 (the replicas before and after the kill): see readRounds. */
const membersFor = (quick: boolean) => (quick ? 11 : 31);

/** One member's cookies, as a client keeps them. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(setCookie: string | string[] | undefined): void {
    for (const c of setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      if (eq > 0) this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }
  header(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }
}

interface Config {
  name: (typeof CONFIGS)[number];
  store: string;
  policy: BalancerPolicy;
}

/** The replicas' flags for a configuration's store: its own SQLite file, Redis keys or token secret. */
function stateArgsFor(config: Config, lab: Lab, redisUrl: string | undefined, index: number): string[] {
  return config.store === 'sqlite'
    ? ['--state', 'sqlite', '--state-file', path.join(lab.tempDir('sessions'), 'state.db')]
    : config.store === 'redis'
      ? ['--state', 'redis', '--redis-url', redisUrl!, '--state-prefix', `nsl:sessions:${process.pid}:${index}:`]
      : config.store === 'token'
        ? ['--sessions', 'token', '--session-secret', randomBytes(16).toString('hex')]
        : ['--state', 'memory'];
}

/** Logs every member in (member<k>, its one valid password), counting each login in `perReplica` and a failed one in `count`. */
async function logIn(
  lbUrl: string,
  jars: CookieJar[],
  perReplica: Record<string, number>,
  count: PhaseCount,
): Promise<void> {
  for (const [m, jar] of jars.entries()) {
    const member = `member${m + 1}`;
    const r = await probe(`${lbUrl}/login`, {
      method: 'POST',
      json: { member, password: `pw-${member}` },
      headers: jar.header(),
    }).catch(() => undefined);
    if (!r || r.status !== 200) {
      count.errors++;
      continue;
    }
    jar.take(r.headers['set-cookie']);
    const who = r.headers['x-replica'];
    if (typeof who === 'string') perReplica[who] = (perReplica[who] ?? 0) + 1;
  }
}

async function runConfig(
  ctx: RunContext<Options>,
  config: Config,
  redisUrl: string | undefined,
  index: number,
  total: number,
): Promise<SessionRun> {
  const { lab, progress, quick, port, options } = ctx;
  const members = membersFor(quick);
  const label = `${index}/${total} ${config.name}`;
  progress.step(`${label}: starting ${REPLICAS} replicas and ${options.lb}`);
  const stateArgs = stateArgsFor(config, lab, redisUrl, index);
  const replicas = await startReplicas(lab, REPLICAS, stateArgs);
  const lb = await startBalancer(lab, options.lb, config.policy, replicas, port);
  const jars = Array.from({ length: members }, () => new CookieJar());
  const perReplica: Record<string, number> = Object.fromEntries(replicas.map((r) => [r.name, 0]));
  const histogram = createLatencyHistogram();

  const read = async (jar: CookieJar, count: PhaseCount, tally: boolean) => {
    count.requests++;
    const r = await probe(`${lb.url}/me`, { headers: jar.header() }).catch(() => undefined);
    if (!r) {
      count.errors++;
      return;
    }
    jar.take(r.headers['set-cookie']);
    if (tally) {
      recordMs(histogram, r.ms);
      const who = r.headers['x-replica'];
      if (typeof who === 'string') perReplica[who] = (perReplica[who] ?? 0) + 1;
    }
    if (r.status === 401) count.lost++;
    else if (r.status !== 200) count.errors++;
  };
  // One request at a time, the members in turn: READS rounds of one read each. Members sent all at
  // once moved in lockstep, and with a member count that is a multiple of the replica count round
  // robin then sent each member to the same replica at every read (sticky by accident), so the
  // share lost depended on timing jitter. In turn, with a member count that shares no factor with
  // 3 or 2 replicas, round robin sends each member's reads to every replica in turn.
  const readRounds = async (count: PhaseCount, tally: boolean) => {
    for (let i = 0; i < READS; i++) for (const jar of jars) await read(jar, count, tally);
  };

  progress.step(`${label}: ${members} members log in, then read /me ${READS} times, in turn`);
  const before: PhaseCount = { requests: 0, lost: 0, errors: 0 };
  await logIn(lb.url, jars, perReplica, before);
  await readRounds(before, true);
  const victim = Object.entries(perReplica).sort((a, b) => b[1] - a[1])[0]![0];
  progress.step(`${label}: SIGKILL to ${victim}, then ${READS} more reads each`);
  const target = replicas.find((r) => r.name === victim)!;
  target.proc.signal('SIGKILL');
  await target.proc.exited;
  const after: PhaseCount = { requests: 0, lost: 0, errors: 0 };
  await readRounds(after, false);
  await lab.stop(lb);
  await Promise.all(replicas.map((r) => lab.stop(r.proc)));
  return {
    name: config.name,
    store: config.store,
    policy: config.policy,
    before,
    after,
    perReplica,
    victim,
    p95: summarize(histogram).p95,
  };
}

async function run(ctx: RunContext<Options>): Promise<SessionsResult> {
  const configs: Config[] = [
    { name: 'memory-round-robin', store: 'memory', policy: 'round-robin' },
    { name: 'memory-ip-hash', store: 'memory', policy: 'ip-hash' },
    { name: 'memory-sticky-cookie', store: 'memory', policy: 'sticky-cookie' },
    { name: 'sqlite-round-robin', store: 'sqlite', policy: 'round-robin' },
    { name: 'redis-round-robin', store: 'redis', policy: 'round-robin' },
    { name: 'token-round-robin', store: 'token', policy: 'round-robin' },
  ];
  const notRun: Record<string, string> = {};
  ctx.progress.step('starting redis-server');
  const redis = await redisForRun(ctx.lab);
  if (!redis.url) notRun.redis = redis.missing!;
  const runs: SessionRun[] = [];
  const todo = configs.filter((c) => c.store !== 'redis' || redis.url);
  for (const [i, config] of todo.entries()) runs.push(await runConfig(ctx, config, redis.url, i + 1, todo.length));
  return { machine: ctx.machine, balancer: ctx.options.lb, members: membersFor(ctx.quick), reads: READS, runs, notRun };
}

export const experiment = defineExperiment({
  name: 'sessions',
  command,
  options: (flags) => ({ lb: balancerKind(flags.lb) }),
  run,
  report: { render, shape, hints, notShown, measures, predictions },
});

await runIfEntry(import.meta, experiment);
