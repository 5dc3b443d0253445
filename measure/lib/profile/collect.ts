/**
 * After a run with --profile: the profiles every Node process of the lab wrote when it exited
 * (`node --cpu-prof`, which the Lab puts on each server's command line), each cut to the windows
 * and mapped from the servers' bundles back to their TypeScript sources, then written per process
 * as a `.cpuprofile` (Chrome DevTools: Performance, then "Load profile") and a flame graph page,
 * and summed into the heaviest functions by self time.
 *
 * A process killed with SIGKILL writes no profile (V8 writes it on a normal exit only; nodejs/node
 * #55094): a cluster worker killed by an experiment is missing from the list.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ROOT } from '../harness/paths.ts';
import {
  cutToWindows,
  frameWhere,
  selfTimes,
  type CallFrame,
  type CpuProfile,
  type SelfTime,
  type Window,
} from '../../../results/report/cpuprofile.ts';
import { flameGraphPage } from './flame-page.ts';

/** One process's profile, cut to the windows. */
export interface ProcessProfile {
  pid: number;
  /**
   * The server's name as the lab started it, or `<server>-worker` for a process the server forked
   * itself (a cluster's worker), found in the server's profile folder.
   */
  name: string;
  /** The windows' profiles by label: self times, heaviest first, `where` as a source file:line. */
  windows: { label: string; selfTimes: SelfTime[]; samples: number }[];
  /** The files written: the whole cut profile and its flame graph page. */
  files: { cpuprofile: string; html: string } | undefined;
}

/** The pid in a file name `node --cpu-prof` chose: CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile (main thread only). */
function profilePid(file: string): number | undefined {
  const m = /^CPU\.\d+\.\d+\.(\d+)\.0\.\d+\.cpuprofile$/.exec(file);
  return m ? Number(m[1]) : undefined;
}

/**
 * Maps frames of the servers' bundles (node_modules/.cache/nsl/<hash>/<server>.mjs, with their
 * `.map` beside them) back to the TypeScript source, line and column; other frames stay as they
 * are. Source maps are read once per bundle.
 */
function sourceMapper(): (f: CallFrame) => CallFrame {
  const maps = new Map<string, SourceMap | undefined>();
  const mapFor = (file: string) => {
    if (!maps.has(file)) {
      const mapFile = `${file}.map`;
      maps.set(file, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : undefined);
    }
    return maps.get(file);
  };
  return (f) => {
    if (!f.url.startsWith('file://')) return f;
    const file = fileURLToPath(f.url);
    const entry = mapFor(file)?.findEntry(f.lineNumber, f.columnNumber) as
      | { originalSource?: string; originalLine: number; originalColumn: number }
      | undefined;
    if (!entry?.originalSource) return f;
    const source = entry.originalSource.startsWith('file://')
      ? entry.originalSource
      : pathToFileURL(path.resolve(path.dirname(file), entry.originalSource)).href;
    return { ...f, url: source, lineNumber: entry.originalLine, columnNumber: entry.originalColumn };
  };
}

/** The profile with every frame mapped by `map` (sourceMapper): what DevTools and the flame graph then show. */
function mapFrames(p: CpuProfile, map: (f: CallFrame) => CallFrame): CpuProfile {
  return { ...p, nodes: p.nodes.map((n) => ({ ...n, callFrame: map(n.callFrame) })) };
}

/** A frame's place relative to the project (`servers/loan.ts:61`), or V8's own for node's modules. */
function projectWhere(f: CallFrame): string {
  const where = frameWhere(f);
  const relative = path.relative(ROOT, where);
  return path.isAbsolute(where) && !relative.startsWith('..') ? relative : where;
}

/**
 * Reads every profile in the servers' folders (one per Node process that exited normally; `folders`
 * maps each to its server's name), cuts each to the labelled windows, writes
 * `<name>-<pid>.cpuprofile` and `<name>-<pid>.html` into `dir`, and returns each process's self
 * times per window. `names` maps the pids the lab started to server names; any other process in a
 * server's folder is one of its cluster workers.
 */
export function collectProfiles(
  dir: string,
  folders: ReadonlyMap<string, string>,
  names: ReadonlyMap<number, string>,
  windows: ReadonlyMap<string, readonly Window[]>,
): ProcessProfile[] {
  const map = sourceMapper();
  const out: ProcessProfile[] = [];
  for (const [folder, server] of folders) {
    for (const file of existsSync(folder) ? readdirSync(folder).sort() : []) {
      const pid = profilePid(file);
      if (pid === undefined) continue;
      const whole = mapFrames(JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as CpuProfile, map);
      out.push(writeCut(dir, pid, names.get(pid) ?? `${server}-worker`, whole, windows));
    }
  }
  return out;
}

/** One process's profile cut to `windows`: its self times per window, and the files written to `dir`. */
function writeCut(
  dir: string,
  pid: number,
  name: string,
  whole: CpuProfile,
  windows: ReadonlyMap<string, readonly Window[]>,
): ProcessProfile {
  const perWindow = [...windows].map(([label, ws]) => {
    const cut = cutToWindows(whole, ws);
    return { label, selfTimes: cut ? selfTimes(cut, projectWhere) : [], samples: cut?.samples.length ?? 0 };
  });
  const cut = cutToWindows(whole, [...windows.values()].flat());
  if (!cut) return { pid, name, windows: perWindow, files: undefined };
  const base = path.join(dir, `${name}-${pid}`);
  writeFileSync(`${base}.cpuprofile`, JSON.stringify(cut));
  writeFileSync(
    `${base}.html`,
    flameGraphPage(`${name} (pid ${pid})`, `${name}-${pid}.cpuprofile`, JSON.stringify(cut)),
  );
  return { pid, name, windows: perWindow, files: { cpuprofile: `${base}.cpuprofile`, html: `${base}.html` } };
}
