// Proves sim/run.ts end to end as a real process: --help names every scenario, usage errors exit 2,
// each scenario prints its table in seconds, --json is reproducible from the seed (and shows the
// degraded replica's cost), and the engine's import graph uses no Node-only API (it runs in a browser).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { SCENARIOS } from '../../sim/scenarios/index.ts';
import { upAfterDown } from '../../sim/scenarios/autoscale.ts';
import { main } from '../../sim/run.ts';
import { failOnWarnings, ROOT, runMainInProcess, runScript, type ScriptRun, spawnScript } from '../helpers.ts';

failOnWarnings();

const SCRIPT = 'sim/run.ts';
// In this process, as the script runs it: a process of its own each would cost more than most runs.
// The --help check and the SIGINT one start the script as a real process.
const sim = (args: string[]) => runMainInProcess(main, args);
const noWarnings = (r: ScriptRun) => assert.doesNotMatch(r.stderr, /Warning:/, r.stderr);

// --- usage ----------------------------------------------------------------------------------

test('--help exits 0 and lists every scenario and flag', async () => {
  const r = await runScript(SCRIPT, ['--help'], {}, 60_000);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(SCENARIOS.length >= 6, `scenarios: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  for (const s of SCENARIOS) assert.ok(r.stdout.includes(s.name), `--help names '${s.name}'`);
  for (const flag of ['--scenario', '--seed', '--loop', '--json', '--requests'])
    assert.ok(r.stdout.includes(flag), `--help names ${flag}`);
  noWarnings(r);
});

test('usage errors exit 2 with a KIT_ERR_USAGE line naming what is wrong, and print nothing on stdout', async () => {
  const cases: [string[], RegExp][] = [
    [[], /--scenario/],
    [['--scenario', 'nope'], /no scenario 'nope'/],
    [['--scenario', 'degraded', '--loop', 'bogus'], /--loop.*bogus/],
    // parseArgs takes '-1' for a flag: an ambiguous --seed, still a usage error.
    [['--scenario', 'degraded', '--seed', '-1'], /--seed/],
    [['--scenario', 'degraded', '--seed=-1'], /--seed must be .*'-1'/],
    [['--scenario', 'stale', '--requests', '5'], /--requests/],
    [['--scenario', 'stale', '--stale-ms', '0'], /--stale-ms must be/],
    [['--scenario', 'degraded', '--stale-ms', '5'], /--stale-ms is for the stale scenario, not degraded/],
    [['--scenario', 'autoscale', '--tolerance', '0.7'], /--tolerance must be a fraction from 0 to 0\.5; got '0\.7'/],
    [['--scenario', 'autoscale', '--tolerance', ''], /--tolerance must be/],
    [['--scenario', 'autoscale', '--window-s', '61'], /--window-s/],
    [['--scenario', 'degraded', '--tolerance', '0'], /are for the autoscale scenario, not degraded/],
    [['--scenario', 'degraded', '--nonsense'], /nonsense/],
  ];
  // One after another: each in-process run holds its own SIGINT and SIGTERM listeners while it runs.
  const runs: ScriptRun[] = [];
  for (const [args] of cases) runs.push(await sim(args));
  for (const [i, [args, message]] of cases.entries()) {
    const r = runs[i]!;
    const what = `sim/run.ts ${args.join(' ')}`;
    assert.equal(r.code, 2, `${what}: exit ${r.code}\n${r.stderr}`);
    assert.match(r.stderr, /^error KIT_ERR_USAGE: /, what);
    assert.match(r.stderr, message, what);
    assert.equal(r.stdout, '', what);
  }
});

// --- each scenario --------------------------------------------------------------------------

/** A phrase of each scenario's table title (stale has its own test: a million requests by default). */
const TITLE: Record<string, RegExp> = {
  degraded: /degraded replica/,
  failover: /failover/,
  graceful: /graceful vs abrupt/,
  'scale-out': /scale-out/,
  autoscale: /autoscaling/,
  'hog-probe': /first come, first served against turns/,
  overload: /overload, simulated: a spike past capacity/,
};

test('the table titles above cover every scenario but stale', () => {
  assert.deepEqual(
    Object.keys(TITLE).sort(),
    SCENARIOS.map((s) => s.name)
      .filter((n) => n !== 'stale')
      .sort(),
  );
});

/** The wall time sim/run.ts reports for its simulations, s. */
function wallSeconds(stdout: string): number {
  const m = /simulated [\d,]+ requests in \d+ run\(s\) in ([\d.]+) s of wall time/.exec(stdout);
  assert.ok(m, `no wall-time line in:\n${stdout}`);
  return Number(m[1]);
}

for (const [name, title] of Object.entries(TITLE)) {
  test(`--scenario ${name} prints its table within seconds`, async () => {
    const began = performance.now();
    const r = await sim(['--scenario', name]);
    const seconds = (performance.now() - began) / 1000;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, title);
    assert.match(r.stdout, /┌/, 'a table');
    assert.match(r.stdout, /seed 1\b/, 'the caption names the seed');
    assert.doesNotMatch(r.stdout, /\x1b\[/, 'no colour codes off a terminal');
    // Under a second here (0.2-0.7 s); the bounds leave room for a loaded machine, not for a 10× slower engine.
    assert.ok(wallSeconds(r.stdout) < 6, `simulated in ${wallSeconds(r.stdout)} s`);
    assert.ok(seconds < 20, `the process took ${seconds.toFixed(1)} s`);
  });
}

test('--scenario stale --requests 20000 prints least connections live and with stale counts', async () => {
  const r = await sim(['--scenario', 'stale', '--requests', '20000']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /100 replicas, 20,000 requests per policy/);
  const rows = r.stdout.split('\n').filter((l) => l.includes('least-connections'));
  assert.equal(rows.length, 2, r.stdout);
  assert.match(rows[0]!, /live/);
  assert.match(rows[1]!, /50 ms old/);
  assert.ok(wallSeconds(r.stdout) < 6, `simulated in ${wallSeconds(r.stdout)} s`);
});

test('--stale-ms sets how old the stale counts are (lesson 4, exercise 6)', async () => {
  const r = await sim(['--scenario', 'stale', '--requests', '20000', '--stale-ms', '5', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const ages = new Set(JSON.parse(r.stdout).result.rows.map((row: { staleMs: number }) => row.staleMs));
  assert.deepEqual([...ages].sort(), [0, 5]);
  assert.equal(JSON.parse(r.stdout).result.staleMs, 5);
});

test('--window-s and --tolerance set the simulated controller (lesson 8, exercise 4); the count flaps only without both', async () => {
  const flaps = async (args: string[]) => {
    const r = await sim(['--scenario', 'autoscale', ...args]);
    assert.equal(r.code, 0, r.stderr);
    return [...r.stdout.matchAll(/scale-ups after a scale-down during the load: (\d+)/g)].map((m) => Number(m[1]));
  };
  const both = await sim(['--scenario', 'autoscale', '--window-s', '0', '--tolerance', '0', '--json']);
  assert.deepEqual([JSON.parse(both.stdout).result.hpa.windowMs, JSON.parse(both.stdout).result.hpa.tolerance], [0, 0]);
  assert.deepEqual(await flaps([]), [0, 0]);
  assert.ok(
    (await flaps(['--window-s', '0', '--tolerance', '0'])).some((n) => n > 0),
    'with neither, the count follows the noise back up',
  );
});

test('upAfterDown counts rises after a fall, during the load only', () => {
  assert.equal(upAfterDown([1, 2, 4, 4, 3, 4, 3, 4, 1, 2], 8), 2);
  assert.equal(upAfterDown([1, 2, 4, 5, 5, 4, 4], 7), 0, 'a scale-down alone is not flapping');
});

// --- --json ---------------------------------------------------------------------------------

interface DegradedJson {
  scenario: string;
  mirrors: string | null;
  seed: number;
  loop: string;
  totals: { requests: number; events: number; runs: number };
  result: { policies: { policy: string; p95: number; throughput: number }[] };
}

async function degradedJson(...args: string[]): Promise<DegradedJson> {
  const r = await sim(['--scenario', 'degraded', '--json', ...args]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout) as DegradedJson;
}

/** `--scenario degraded --json` with the default seed (1), run once for both tests below. */
let seed1: Promise<DegradedJson> | undefined;
const degradedSeed1 = () => (seed1 ??= degradedJson());

test('--json: the same seed gives the same result exactly, another seed or loop another', async () => {
  const [a, b, c, fifo] = await Promise.all([
    degradedSeed1(),
    degradedJson('--seed', '1'),
    degradedJson('--seed', '2'),
    degradedJson('--loop', 'fifo'),
  ]);
  assert.equal(a.scenario, 'degraded');
  assert.equal(a.mirrors, 'degraded');
  assert.equal(a.seed, 1);
  assert.equal(a.loop, 'turns', 'turns by default');
  assert.equal(a.totals.runs, 4);
  assert.ok(a.totals.requests > 10_000, `requests ${a.totals.requests}`);
  assert.deepEqual(b.result, a.result);
  assert.deepEqual(b.totals, a.totals);
  assert.equal(c.seed, 2);
  assert.notDeepEqual(c.result, a.result);
  assert.equal(fifo.loop, 'fifo');
  assert.notDeepEqual(fifo.result, a.result);
});

test('--json, degraded: round robin p95 is at least 10× least connections p95', async () => {
  const j = await degradedSeed1();
  const p95 = (policy: string) => {
    const row = j.result.policies.find((p) => p.policy === policy);
    assert.ok(row, `no ${policy} row`);
    return row.p95;
  };
  assert.ok(
    p95('round-robin') >= 10 * p95('least-connections'),
    `round robin ${p95('round-robin')}, least connections ${p95('least-connections')}`,
  );
});

// --- the engine runs in a browser ------------------------------------------------------------

/** The only packages the engine may import: none uses a Node-only API. */
const BROWSER_PACKAGES = new Set(['tinyqueue', 'pure-rand', 'hdr-histogram-js']);
const NODE_BUILTINS = new Set(builtinModules);

/** `import type` and `export type` are erased at run time: nothing is loaded. */
const TYPE_ONLY = /^\s*(?:import|export)\s+type\s/;
const SPECIFIER =
  /(?:\b(?:import|export)\s[^;]*?\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(['"])([^'"]+)\1/g;
const NODE_GLOBAL = /\b(process|Buffer|require|__dirname|__filename|global|setImmediate)\b/;

const withoutComments = (code: string) => code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"\\])\/\/.*$/gm, '$1');
const withoutStrings = (code: string) =>
  code.replace(/'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g, "''");
const packageName = (spec: string) =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;

/**
 * Follows the relative imports from `entry` (paths relative to the project) and returns what
 * would not run in a browser: a Node module, a package not in BROWSER_PACKAGES, a Node global.
 */
function nodeOnlyUses(entry: string, read: (file: string) => string): { files: string[]; problems: string[] } {
  const seen = new Set<string>();
  const problems: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = withoutComments(read(file));
    for (const statement of code.split(/;|\n(?=\s*(?:import|export)\b)/)) {
      if (TYPE_ONLY.test(statement)) continue;
      for (const m of statement.matchAll(SPECIFIER)) {
        const spec = m[2]!;
        if (spec.startsWith('./') || spec.startsWith('../'))
          visit(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
        else if (spec.startsWith('node:') || NODE_BUILTINS.has(spec) || NODE_BUILTINS.has(packageName(spec)))
          problems.push(`${file} imports ${spec}`);
        else if (!BROWSER_PACKAGES.has(packageName(spec)))
          problems.push(`${file} imports the package ${spec}, not known to run in a browser`);
      }
    }
    const global = NODE_GLOBAL.exec(withoutStrings(code));
    if (global) problems.push(`${file} uses ${global[1]}`);
  };
  visit(entry);
  return { files: [...seen], problems };
}

test('the scanner below finds a Node module, a Node global and an unknown package, and ignores comments, strings and type imports', () => {
  const fake: Record<string, string> = {
    'sim/engine.ts': [
      "// a comment about process.env and import 'node:fs'",
      "/* Buffer, require('fs') */",
      "import TinyQueue from 'tinyqueue';",
      "import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';",
      "import type { Server } from 'node:http';",
      "import { a, type B } from './a.ts';",
      "export { c } from '../lib/c.ts';",
      "const s = 'the process and its Buffer';",
    ].join('\n'),
    'sim/a.ts': "import { readFileSync } from 'node:fs';\nexport const a = 1;",
    'lib/c.ts':
      "import path from 'path';\nimport express from 'express';\nexport const c = process.env.X ?? Buffer.from('');",
  };
  const found = nodeOnlyUses('sim/engine.ts', (f) => {
    assert.ok(f in fake, `reads only the imported files: ${f}`);
    return fake[f]!;
  });
  assert.deepEqual(found.files.sort(), ['lib/c.ts', 'sim/a.ts', 'sim/engine.ts']);
  assert.deepEqual(found.problems.sort(), [
    'lib/c.ts imports path',
    'lib/c.ts imports the package express, not known to run in a browser',
    'lib/c.ts uses process',
    'sim/a.ts imports node:fs',
  ]);
  // A clean file passes.
  assert.deepEqual(
    nodeOnlyUses('x.ts', () => "import TinyQueue from 'tinyqueue';\nexport const q = new TinyQueue();").problems,
    [],
  );
});

test("the engine's import graph (sim/engine.ts and every file it imports) uses no Node-only API", () => {
  const found = nodeOnlyUses('sim/engine.ts', (file) => readFileSync(path.join(ROOT, file), 'utf8'));
  // The graph as it is: the balancer's and the autoscaler's own code, the latency histogram.
  for (const file of [
    'sim/dist.ts',
    'sim/rng.ts',
    'core/choose.ts',
    'core/failover.ts',
    'core/hpa.ts',
    'core/policies.ts',
    'results/report/latency.ts',
    'sim/replica.ts',
    'sim/balancer.ts',
    'sim/world.ts',
  ]) {
    assert.ok(found.files.includes(file), `${file} is in the graph: ${found.files.join(', ')}`);
  }
  assert.deepEqual(found.problems, []);
});

test('SIGINT to the simulator during the stale scenario ends it between runs: exit 130, no table', async (t) => {
  const { createInterface } = await import('node:readline');
  const child = spawnScript(t, SCRIPT, ['--scenario', 'stale', '--requests', '400000']);
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (l) => l.startsWith('[2/8]') && resolve());
    child.once('exit', () => reject(new Error('ended before its second run')));
  });
  const sent = performance.now();
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 130);
  assert.equal(stdout, '', 'no table after an interrupt');
  // One run of 400,000 requests on 100 replicas takes about a second here.
  assert.ok(
    performance.now() - sent < 15_000,
    `stopped ${((performance.now() - sent) / 1000).toFixed(1)} s after the signal`,
  );
});
