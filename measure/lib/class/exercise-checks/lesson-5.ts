/** Lesson 5's exercises (capacity) that a run can check (measure/lib/class/exercises.ts). */
import {
  BELOW_CAP_SHARE,
  CAPPED_GROWS_FACTOR,
  DB_FLAT_FACTOR,
  databaseVerdict,
  step,
} from '../../../../results/capped-scale-out/report.ts';
import type { CappedScaleOutResult, CappedStep } from '../../../../results/capped-scale-out/result.ts';
import { CPU_GROWS_FACTOR, type ScaleOutResult } from '../../../../results/scale-out/report.ts';
import { growthVerdict, plateauVerdict } from '../../../../results/report/scaling.ts';
import { CANNOT_SHOW } from '../../../../results/report/shape.ts';
import { fmtMs, fmtRate } from '../../../../results/report/format.ts';
import type { ExerciseCheck } from '../exercises.ts';

const users = (r: CappedScaleOutResult) => r.workloads.find((w) => w.name === 'user-scenario');

/** The user scenario's throughput at each replica count, e.g. "1: 39 req/s, 2: 79 req/s, ...". */
const row = (r: CappedScaleOutResult) =>
  (users(r)?.steps ?? []).map((s) => `${s.replicas}: ${fmtRate(s.throughput)}`).join(', ');

/** At 5 replicas the scenario still grows past 3 (the shape's `5-replicas-vs-3 keeps-growing`). */
const keepsGrowing = (r: CappedScaleOutResult) => {
  const three = step(users(r), 3);
  const five = step(users(r), 5);
  return !!three && !!five && five.throughput >= DB_FLAT_FACTOR * three.throughput;
};

/** At 5 replicas they use their CPU quotas (the shape's `replicas-cpu-at-5 at-cap`): CPU, not the database, sets the pace. */
const atCap = (r: CappedScaleOutResult, s: CappedStep | undefined) =>
  !!s && s.replicaCores >= BELOW_CAP_SHARE * s.replicas * r.cap.cores;

/** One sentence on a SQLite run's 5-replica step: its lock and its CPU. */
function sqliteAtFive(r: CappedScaleOutResult): string {
  const five = step(users(r), 5);
  const commitMs = r.database.kind === 'sqlite' ? r.database.commitMs : NaN;
  if (!five) return `--commit-ms ${commitMs}: no 5-replica step`;
  return (
    `--commit-ms ${commitMs}: user scenario ${row(r)}; at 5 replicas ${five.db.writesPerS.toFixed(0)} writes/s, ` +
    `writer lock busy ${Math.round(five.db.lockBusy * 100)} % (held ${fmtMs(five.db.lockHoldMs)}, waited ${fmtMs(five.db.lockWaitMs)} per write), ` +
    `replicas' CPU ${five.replicaCores.toFixed(2)} of ${(five.replicas * r.cap.cores).toFixed(1)}`
  );
}

const isSqlite = (r: CappedScaleOutResult, commitMs: number) =>
  r.database.kind === 'sqlite' && r.database.commitMs === commitMs;

export const LESSON_5: readonly ExerciseCheck[] = [
  {
    lesson: 5,
    n: 1,
    title: 'More replicas than cores',
    runs: [{ script: 'measure/scale-out.ts', args: [] }],
    quickOk: true,
    expect: `CPU-bound throughput grows up to the core count (at least ${CPU_GROWS_FACTOR}x one replica's) and stays flat past it; on Linux the kit also names the busiest process at five replicas`,
    check: ([result]) => {
      const r = result as ScaleOutResult;
      const cpu = r.workloads.find((w) => w.name === 'cpu-bound');
      const points = (cpu?.steps ?? []).map((s) => ({ n: s.replicas, throughput: s.throughput }));
      const growth = growthVerdict(points, r.machine.cores, CPU_GROWS_FACTOR);
      const plateau = plateauVerdict(points, r.machine.cores);
      const knee = growth === 'grows' && plateau === 'flat';
      const busiest = r.workloads.map((w) => {
        const c = w.steps.find((s) => s.replicas === 5)?.cpu;
        return c
          ? `${w.name} at 5 replicas: busiest process the ${c.busiest.role} (${c.busiest.cores.toFixed(2)} core); balancer ${c.balancer.toFixed(2)}, replicas together ${c.replicas.toFixed(2)}, load generator ${c.generator.toFixed(2)}`
          : `${w.name}: no per-process CPU at 5 replicas (Linux /proc only)`;
      });
      return {
        held: knee,
        ...(growth === CANNOT_SHOW || plateau === CANNOT_SHOW
          ? {
              cannotShow: `with ${r.machine.cores} core${r.machine.cores === 1 ? '' : 's'} the steps of 1, 2, 3 and 5 replicas have no growth up to the core count and a step past it; the knee needs 2 to 4 cores`,
            }
          : {}),
        saw: [
          `/work?ms=5 on ${r.machine.cores} cores: ${points.map((x) => `${x.n} → ${fmtRate(x.throughput)}`).join(', ')}`,
          ...busiest,
        ],
      };
    },
  },
  {
    lesson: 5,
    n: 2,
    title: 'A faster disk',
    runs: [
      { script: 'measure/capped-scale-out.ts', args: ['--commit-ms', '0'] },
      { script: 'measure/capped-scale-out.ts', args: ['--commit-ms', '4'] },
    ],
    quickOk: true,
    expect:
      'with a 0 ms or a 4 ms commit the user scenario keeps growing to 5 replicas and the replicas use their whole quota: their CPU, not the writer lock, stops it; with 0 ms the lock has room, so the three database lines fail',
    check: ([zero, four]) => {
      const z = zero as CappedScaleOutResult;
      const f = four as CappedScaleOutResult;
      const zFive = step(users(z), 5);
      const zeroShows =
        isSqlite(z, 0) && keepsGrowing(z) && !!zFive && databaseVerdict(zFive) === 'has-room' && atCap(z, zFive);
      const fourShows = isSqlite(f, 4) && keepsGrowing(f) && atCap(f, step(users(f), 5));
      return { held: zeroShows && fourShows, saw: [sqliteAtFive(z), sqliteAtFive(f)] };
    },
  },
  {
    lesson: 5,
    n: 5,
    title: 'A database server',
    runs: [{ script: 'measure/capped-scale-out.ts', args: ['--db', 'postgres'] }],
    quickOk: true,
    expect: `against PostgreSQL the user scenario grows at least ${CAPPED_GROWS_FACTOR}x from 1 to 5 replicas, and at 5 the replicas use their whole quota: the server is not what stops it; the run prints its CPU per create and read`,
    check: ([result]) => {
      const r = result as CappedScaleOutResult;
      const one = step(users(r), 1);
      const five = step(users(r), 5);
      const cores = five?.db.cores;
      // The 1-replica row's CPU taken away: what the extra creates and reads cost, not the server's idle work.
      const extra =
        one && five && cores !== undefined
          ? { cores: cores - (one.db.cores ?? 0), pairs: five.db.writesPerS - one.db.writesPerS }
          : undefined;
      const perPairMs = extra && extra.pairs > 0 && extra.cores > 0 ? (extra.cores / extra.pairs) * 1000 : NaN;
      const perReplica = one ? one.db.writesPerS : NaN;
      const toFill = 1000 / perPairMs / perReplica;
      const grows = !!one && !!five && five.throughput >= CAPPED_GROWS_FACTOR * one.throughput;
      return {
        held: r.database.kind === 'postgres' && grows && atCap(r, five) && cores !== undefined,
        saw: [
          `user scenario ${row(r)}${five ? `; replicas' CPU at 5: ${five.replicaCores.toFixed(2)} of ${(five.replicas * r.cap.cores).toFixed(1)}` : ''}`,
          cores === undefined || !one
            ? 'no PostgreSQL CPU reading at 5 replicas'
            : `PostgreSQL used ${(one.db.cores ?? NaN).toFixed(3)} core at 1 replica (${one.db.writesPerS.toFixed(0)} creates and reads a second) and ${cores.toFixed(3)} at 5 (${five!.db.writesPerS.toFixed(0)}): ` +
              (Number.isFinite(perPairMs) && Number.isFinite(toFill)
                ? `${perPairMs.toFixed(2)} ms of CPU for each extra one; at ${perReplica.toFixed(0)} a second per replica, about ${Math.round(toFill)} replicas would keep one core of it busy`
                : 'the extra CPU is too small to measure in this run'),
        ],
      };
    },
  },
];
