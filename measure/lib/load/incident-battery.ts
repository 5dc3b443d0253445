/**
 * A diagnosis run of the incident server (measure/incident.ts): one server under the CPU profiler
 * through four phases (paced /books, paced /search, cover reads during exports, pages with new
 * session ids), a kept-alive connection left idle in the background meanwhile, then a second
 * server stopped under kept-alive clients. Each phase is one of incident-phases.ts.
 */
import { UPSTREAM_IDLE_MS } from '../../../servers/lib/balancer/upstreams.ts';
import type { IncidentResult, PhaseProfile } from '../../../results/incident/result.ts';
import { profileDir } from '../harness/paths.ts';
import type { Progress } from '../harness/progress.ts';
import type { Lab } from '../process/lab.ts';
import type { LaunchSpec } from '../process/launch.ts';
import { ProfileSession } from '../profile/session.ts';
import { probeOk } from './probe.ts';
import {
  coversDuringExport,
  heapUnderPages,
  idleCloseAfter,
  pacedPhase,
  SHUTDOWN_CLIENTS,
  shutdownUnderKeepAlive,
} from './incident-phases.ts';

/**
 * A title a reader might paste, ending in an ellipsis (…), which no title check allows. A regular
 * expression with nested repetition tries every way to split the words before it, and spends tens
 * of ms failing (25 ms here, Node 20); a linear one, microseconds.
 */
const TITLE = 'The Dispossessed Again…';
/** Paced rates, req/s: the healthy service's loop reads under 10 % busy at both. */
const BOOKS_RATE = 100;
const SEARCH_RATE = 20;
/** How long SIGTERM may take under kept-alive clients before the server is killed, ms. */
const SHUTDOWN_GRACE_MS = 3000;
/** Functions per phase kept from the profile. */
const TOP = 3;

/** The heaviest functions by self time of the `incident` process, per window, without idle time. */
function phaseProfiles(profile: ProfileSession): PhaseProfile[] {
  const server = profile.collect().find((p) => p.name === 'incident');
  return (server?.windows ?? []).map((w) => ({
    phase: w.label,
    top: w.selfTimes
      .filter((s) => s.functionName !== '(idle)' && s.functionName !== '(program)')
      .slice(0, TOP)
      .map((s) => ({ functionName: s.functionName, where: s.where, share: s.share })),
  }));
}

/** The four phases on one server; `window` names each (the profiled pass cuts its profile to them). */
async function phases(
  base: string,
  seconds: number,
  progress: Progress,
  window: <T>(label: string, f: () => Promise<T>) => Promise<T>,
) {
  // Once each first: the first answer of a route pays for its first compilation and its caches.
  for (const route of ['/books?page=0', '/search?title=river', '/cover/0', '/export'])
    await probeOk(base + route, { timeoutMs: 10_000 });
  // Then one full collection: start-up leaves the catalog's 11 MB JSON string and the books' copies
  // as garbage, and a mark-compact of it inside a 1.5 s phase stalled the loop 50 to 70 ms (Node 24,
  // this machine), a sixth of the way to the busy threshold, whatever the handlers did.
  await probeOk(`${base}/__incident/stats?gc`);
  progress.step(`/books at ${BOOKS_RATE}/s for ${seconds} s`);
  const books = await window('/books', () => pacedPhase(base, '/books?page=7', BOOKS_RATE, seconds));
  progress.step(`/search at ${SEARCH_RATE}/s for ${seconds} s`);
  const search = await window('/search', () =>
    pacedPhase(base, `/search?title=${encodeURIComponent(TITLE)}`, SEARCH_RATE, seconds),
  );
  progress.step(`cover reads while /export runs on 4 connections, ${seconds} s`);
  const covers = await window('/export', () => coversDuringExport(base, seconds));
  progress.step(`pages of /books with a new session id each, ${seconds} s`);
  const pages = await window('new pages', () => heapUnderPages(base, seconds));
  return { books, search, covers, pages };
}

/**
 * Runs the phases against `servers/incident.ts <args>` twice: measured on a server without the profiler,
 * since V8's CPU profiler makes the event loop read busy (measured: an idle loop reads 95 %
 * utilized under --cpu-prof, Node 20 on Linux), then briefly on one under it, for the heaviest
 * functions. A third server is stopped under kept-alive clients. `quick`: shorter phases.
 */
export async function runBattery(
  lab: Lab,
  progress: Progress,
  args: string[],
  quick: boolean,
): Promise<Omit<IncidentResult, 'subject' | 'machine'>> {
  const spec: LaunchSpec = { server: 'incident', args: ['--port', '0', ...args] };
  const harnessProfile = lab.profile;
  lab.profile = undefined;
  progress.step('starting the incident server');
  const server = await lab.start(spec);
  const base = `http://127.0.0.1:${server.port}`;
  const idle = idleCloseAfter(server.port, UPSTREAM_IDLE_MS + 500);
  const measured = await phases(base, quick ? 1.5 : 2.5, progress, (_label, f) => f());
  progress.step('waiting for the kept-alive connection left idle since the start');
  const closedAfterMs = await idle;
  await lab.stop(server, SHUTDOWN_GRACE_MS);

  progress.step('the same phases again, shorter, under the CPU profiler');
  const profile = (lab.profile = harnessProfile ?? new ProfileSession(profileDir('incident')));
  const profiled = await lab.start(spec);
  const again = await phases(`http://127.0.0.1:${profiled.port}`, 1, progress, (label, f) => profile.window(label, f));
  await lab.stop(profiled, SHUTDOWN_GRACE_MS);
  // The last server is stopped by SIGKILL when its shutdown hangs: it would write no profile.
  lab.profile = harnessProfile;
  progress.step(`SIGTERM under ${SHUTDOWN_CLIENTS} kept-alive clients (killed after ${SHUTDOWN_GRACE_MS / 1000} s)`);
  const shutdown = await shutdownUnderKeepAlive(lab, spec, SHUTDOWN_GRACE_MS);
  return {
    ...measured,
    idleClose: { closedAfterMs, waitedMs: UPSTREAM_IDLE_MS + 500, balancerIdleMs: UPSTREAM_IDLE_MS },
    shutdown,
    underProfiler: { books: again.books.utilization, search: again.search.utilization },
    profiles: phaseProfiles(profile),
    profileDir: profile.dir,
  };
}
