/**
 * A healthy diagnosis run (numbers from this machine, the healthy handlers) and, per shape line,
 * the change its incident makes: test/unit/report-examples.test.ts checks each fails its own line
 * and no other.
 */
import type { ReportExamples } from '../report/shape.ts';
import type { IncidentResult } from './result.ts';

export const examples: ReportExamples<IncidentResult> = {
  healthy: () => ({
    machine: { cores: 2, loadavg1: 0.5, busyCoresAtStart: 0.05, node: '20.20.2', platform: 'linux-x64' },
    subject: { handlers: 'servers/exercises/lesson-10/fixed/pool.ts' },
    books: {
      route: '/books?page=7',
      rate: 50,
      completed: 125,
      errors: 0,
      p50Ms: 0.9,
      p99Ms: 3.1,
      utilization: 0.04,
      delayMaxMs: 2.1,
    },
    search: {
      route: '/search?title=...',
      rate: 20,
      completed: 50,
      errors: 0,
      p50Ms: 4.2,
      p99Ms: 8,
      utilization: 0.06,
      delayMaxMs: 5.3,
    },
    covers: { idleP50Ms: 0.6, duringExportP50Ms: 1.4, exports: 2900, exportUtilization: 0.8 },
    idleClose: { closedAfterMs: undefined, waitedMs: 4500, balancerIdleMs: 4000 },
    pages: { completed: 4100, heapBeforeMb: 40, heapAfterMb: 41, gcMs: 60 },
    shutdown: { exitedAfterMs: 40, graceMs: 3000, answeredAfterSignal: 4 },
    underProfiler: { books: 0.81, search: 0.78 },
    profiles: [],
    profileDir: 'profiles/incident-2026-12-06-12-00-00',
  }),
  broken: {
    // sync-read: every /books reads the catalog file synchronously.
    'incident  loop-under-books': (r) => void Object.assign(r.books, { utilization: 0.55, delayMaxMs: 14 }),
    // redos: every search backtracks for tens of ms on the loop.
    'incident  loop-under-search': (r) => void Object.assign(r.search, { utilization: 0.7, delayMaxMs: 190 }),
    // pool: gzip at level 9 on every export fills the thread pool.
    'incident  cover-reads-during-export': (r) => void Object.assign(r.covers, { duringExportP50Ms: 180, exports: 20 }),
    // keepalive: keepAliveTimeout 1 s.
    'incident  idle-close': (r) => void (r.idleClose.closedAfterMs = 1001),
    // cache: every page kept, keyed by its URL.
    'incident  heap-under-new-pages': (r) => void Object.assign(r.pages, { heapAfterMb: 70 }),
    // shutdown: server.close() waits for busy kept-alive connections.
    'incident  shutdown-under-keep-alive': (r) => void (r.shutdown.exitedAfterMs = undefined),
  },
};
