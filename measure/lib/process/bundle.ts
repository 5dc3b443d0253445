/**
 * The lesson servers compiled once, ahead of their start: every server an experiment launches (and
 * every cluster worker it forks) would otherwise pay tsx's TypeScript loader at start-up, measured
 * here at 0.35 s of a 0.9 s start, and a lesson starts dozens of them. esbuild bundles the
 * servers' own code into node_modules/.cache/nsl/<hash of the sources>/, leaving the packages in
 * node_modules as imports, so a source that changes gets a new folder and a stale build is never run.
 * Where esbuild cannot run, the servers start through tsx as before.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../harness/paths.ts';

/** The folders whose TypeScript the servers import. */
const SOURCES = ['servers', 'core', 'lib', 'results'];
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'nsl');

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|template)$/.test(e.name)) out.push(p);
    }
  };
  for (const d of SOURCES) walk(path.join(ROOT, d));
  return out.sort();
}

/** Changed with the build's options (sourcemap, say), so that a build made with the old ones is not run. */
const BUILD_OPTIONS = 'esm,node20,external,sourcemap';

/** A hash of every source file's path, size and modification time, and of the build's options: a new one for any edit. */
function sourcesHash(files = sourceFiles()): string {
  const h = createHash('sha256');
  h.update(`${BUILD_OPTIONS}\n`);
  for (const f of files) {
    const st = statSync(f);
    h.update(`${path.relative(ROOT, f)}\0${st.size}\0${st.mtimeMs}\n`);
  }
  return h.digest('hex').slice(0, 16);
}

/** The event-loop report every server loads first when the harness asks for it (node --import). */
const LOOP_REPORT = path.join(ROOT, 'servers', 'lib', 'serve', 'loop-report.ts');

/** The servers to bundle: every servers/*.ts, and the loop report they may load. */
function entries(): string[] {
  return readdirSync(path.join(ROOT, 'servers'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(ROOT, 'servers', f))
    .concat(LOOP_REPORT);
}

/**
 * The folder of the current build (building it when there is none yet), or undefined when esbuild
 * is not there or failed (then the servers run through tsx). Two processes building at once each
 * write a folder of their own and rename it into place; the loser's is removed.
 */
export async function serverBuild(): Promise<string | undefined> {
  const dir = path.join(CACHE, sourcesHash());
  if (existsSync(path.join(dir, 'done'))) return dir;
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  const tmp = `${dir}.${process.pid}.tmp`;
  try {
    mkdirSync(tmp, { recursive: true });
    // One build per entry: import.meta.url must read as the server's own source file (the nginx
    // template is found next to it, the project root above it), and esbuild defines it per build.
    await Promise.all(
      entries().map((entry) =>
        esbuild.build({
          entryPoints: [entry],
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node20',
          packages: 'external',
          outfile: path.join(tmp, path.basename(entry).replace(/\.ts$/, '.mjs')),
          define: { 'import.meta.url': JSON.stringify(pathToFileURL(entry).href) },
          // A map beside each bundle lets --profile name TypeScript files and lines (profile/collect.ts).
          sourcemap: true,
          logLevel: 'silent',
        }),
      ),
    );
    mkdirSync(path.join(tmp, 'done'));
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another process got there first
    }
    prune(dir);
    return existsSync(path.join(dir, 'done')) ? dir : undefined;
  } catch {
    rmSync(tmp, { recursive: true, force: true });
    return undefined;
  }
}

/** Removes builds of older sources (an hour old: a run still going may be using one). */
function prune(keep: string): void {
  for (const e of readdirSync(CACHE)) {
    const p = path.join(CACHE, e);
    if (p !== keep && Date.now() - statSync(p).mtimeMs > 3_600_000) rmSync(p, { recursive: true, force: true });
  }
}

/** The command line that starts `servers/<name>.ts`: its bundle when there is one, else through tsx. */
export function serverCommand(name: string, build: string | undefined): string[] {
  const bundled = build && path.join(build, `${name}.mjs`);
  return bundled && existsSync(bundled) ? [bundled] : ['--import', 'tsx', path.join(ROOT, 'servers', `${name}.ts`)];
}

/** Node's options that load the event-loop report before a server: its bundle, else through tsx. */
export function loopReportArgs(build: string | undefined): string[] {
  const bundled = build && path.join(build, 'loop-report.mjs');
  return bundled && existsSync(bundled)
    ? ['--import', pathToFileURL(bundled).href]
    : ['--import', 'tsx', '--import', pathToFileURL(LOOP_REPORT).href];
}
