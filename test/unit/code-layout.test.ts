// Keeps the code easy to change: no source file over 300 lines, no function over 80, and each
// layer imports only the layers below it (lib and core ← servers ← results ← sim ← measure ← web),
// so the simulator and the reports never depend on the lab's process handling. core/ holds the rules
// the balancer, the cluster and the simulator share (picking, the choice step, failover, the HPA
// rule): it imports nothing but itself and uses no Node global, so the simulator runs the lab's
// own code in a browser and a test can drive every rule with an injected clock. Keeps the tests in their
// tiers: every test file is in one of the tier folders the Makefile runs, and a unit test (they all
// share one process, test/run-unit.ts) imports nothing that starts a process and no file-level hook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { failOnWarnings, ROOT } from '../helpers.ts';
import { EXPERIMENTS } from '../../measure/lib/harness/experiments.ts';

failOnWarnings();

const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;
/** Each top-level folder, with the folders it may import from. */
const LAYERS: Record<string, readonly string[]> = {
  core: [],
  lib: [],
  servers: ['lib', 'core'],
  results: ['lib', 'core', 'servers'],
  sim: ['lib', 'core', 'servers', 'results'],
  measure: ['lib', 'core', 'servers', 'results', 'sim'],
  web: ['lib', 'core', 'servers', 'results', 'sim', 'measure'],
};
/** Globals that tie code to Node or to a clock: core/ takes time and randomness as arguments. */
const IMPURE_GLOBALS = new Set([
  'process',
  'Buffer',
  'require',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'queueMicrotask',
  'fetch',
  'globalThis',
  'performance',
  'Date',
  'Math.random',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((e) => {
    const rel = path.join(dir, e);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return sourceFiles(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

/** Files over the line limit and functions over theirs, as `file:line what lines`. */
export function sizeProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n').length;
  if (lines > MAX_FILE_LINES) problems.push(`${file} has ${lines} lines`);
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const length = lineOf(n.getEnd()) - lineOf(n.getStart()) + 1;
      const name = (n as ts.FunctionDeclaration).name?.getText(sf) ?? 'a function';
      if (length > MAX_FUNCTION_LINES) problems.push(`${file}:${lineOf(n.getStart())} ${name} has ${length} lines`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return problems;
}

/** Relative imports of `file` that reach a layer it may not use. */
export function layerProblems(file: string, text: string): string[] {
  const own = file.split(path.sep)[0]!;
  const allowed = new Set([own, ...(LAYERS[own] ?? [])]);
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  for (const st of sf.statements) {
    if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || !st.moduleSpecifier) continue;
    const spec = (st.moduleSpecifier as ts.StringLiteral).text;
    if (!spec.startsWith('.')) continue;
    const target = path.normalize(path.join(path.dirname(file), spec)).split(path.sep)[0]!;
    if (target in LAYERS && !allowed.has(target))
      problems.push(`${file} imports ${spec} (${own} may use ${[...allowed].join(', ')})`);
  }
  return problems;
}

/**
 * What makes a core/ file impure: an import from outside core/ (a package or a Node module
 * included), or a global that does I/O, keeps time or draws random numbers.
 */
export function coreProblems(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  const visit = (n: ts.Node) => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier) {
      const spec = (n.moduleSpecifier as ts.StringLiteral).text;
      const target = spec.startsWith('.')
        ? path.posix.normalize(path.posix.join(path.posix.dirname(file), spec))
        : spec;
      if (!target.startsWith('core/')) problems.push(`${file} imports ${spec}: core/ imports only core/`);
    } else if (ts.isPropertyAccessExpression(n) && n.getText(sf) === 'Math.random') {
      problems.push(`${file} uses Math.random: core/ takes an rng argument`);
    } else if (
      ts.isIdentifier(n) &&
      IMPURE_GLOBALS.has(n.text) &&
      !ts.isPropertyAccessExpression(n.parent) &&
      !ts.isPropertyAssignment(n.parent)
    ) {
      problems.push(`${file} uses ${n.text}: core/ takes time and I/O as arguments`);
    } else if (
      ts.isIdentifier(n) &&
      IMPURE_GLOBALS.has(n.text) &&
      ts.isPropertyAccessExpression(n.parent) &&
      n.parent.expression === n
    ) {
      problems.push(`${file} uses ${n.text}: core/ takes time and I/O as arguments`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return problems;
}

/**
 * The files each file imports for values (type-only imports left out), from the texts of `files`
 * (paths with / between folders).
 */
export function valueImports(files: Record<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of Object.entries(files)) {
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const targets: string[] = [];
    for (const st of sf.statements) {
      if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || !st.moduleSpecifier) continue;
      if (ts.isImportDeclaration(st) ? st.importClause?.isTypeOnly : st.isTypeOnly) continue;
      const spec = (st.moduleSpecifier as ts.StringLiteral).text;
      if (spec.startsWith('.')) targets.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Each import cycle in `graph`, as its files in import order (one list per cycle, from a depth-first walk). */
export function importCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const walk = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') cycles.push(stack.slice(stack.indexOf(next)));
      else if (!state.has(next)) walk(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) walk(file);
  return cycles;
}

/**
 * Scripts loaded by name, not by an import: measure/<experiment>.ts's `experiment`, which
 * measure/lib/harness/experiments.ts imports with a path built from the experiment's name.
 */
const LOADED_BY_NAME: readonly [RegExp, string][] = [[/^measure\/[^/]+\.ts$/, 'experiment']];

/** The names a top-level statement exports, re-exports included (a destructured const gives each name it binds). */
function exportedNames(st: ts.Statement, sf: ts.SourceFile): string[] {
  const mods = ts.canHaveModifiers(st) ? ts.getModifiers(st) : undefined;
  if (!mods?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
    if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause))
      return st.exportClause.elements.map((e) => e.name.text);
    return [];
  }
  if (mods.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) return ['default'];
  const bound = (n: ts.BindingName): string[] =>
    ts.isIdentifier(n) ? [n.text] : n.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : bound(e.name)));
  if (ts.isVariableStatement(st)) return st.declarationList.declarations.flatMap((d) => bound(d.name));
  const name = (st as ts.DeclarationStatement).name;
  return name && ts.isIdentifier(name) ? [name.text] : [];
}

/**
 * Exports no other file imports, as `file name`, from the texts of `files` (paths with / between
 * folders). `import * as`, `export *` and a dynamic import of a fixed path count as using every
 * export of their module. Test files (*.test.ts) are importers only.
 */
export function unusedExports(files: Record<string, string>): string[] {
  const exported = new Map<string, string[]>();
  const imported = new Map<string, Set<string>>();
  const whole = new Set<string>();
  const uses = (target: string) => imported.get(target) ?? imported.set(target, new Set()).get(target)!;
  for (const [file, text] of Object.entries(files)) {
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const target = (spec: string) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    exported.set(
      file,
      sf.statements.flatMap((st) => exportedNames(st, sf)),
    );
    for (const st of sf.statements) {
      if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || !st.moduleSpecifier) continue;
      const spec = (st.moduleSpecifier as ts.StringLiteral).text;
      if (!spec.startsWith('.')) continue;
      const t = target(spec);
      const bindings = ts.isImportDeclaration(st) ? st.importClause?.namedBindings : st.exportClause;
      if (ts.isImportDeclaration(st) && st.importClause?.name) uses(t).add('default');
      if (!bindings) {
        if (ts.isExportDeclaration(st)) whole.add(t);
      } else if (ts.isNamespaceImport(bindings) || ts.isNamespaceExport(bindings)) whole.add(t);
      else for (const e of bindings.elements) uses(t).add((e.propertyName ?? e.name).text);
    }
    const visit = (n: ts.Node) => {
      if (
        ts.isCallExpression(n) &&
        n.expression.kind === ts.SyntaxKind.ImportKeyword &&
        n.arguments[0] &&
        ts.isStringLiteral(n.arguments[0]) &&
        n.arguments[0].text.startsWith('.')
      )
        whole.add(target(n.arguments[0].text));
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  const problems: string[] = [];
  for (const [file, names] of exported) {
    if (file.endsWith('.test.ts') || whole.has(file)) continue;
    for (const name of names) {
      if (imported.get(file)?.has(name) || LOADED_BY_NAME.some(([re, n]) => re.test(file) && n === name)) continue;
      problems.push(`${file} ${name}`);
    }
  }
  return problems;
}

/** The most files and folders one source folder holds before it is split by topic. */
const MAX_FOLDER_ENTRIES = 20;
/**
 * Folders as long as the list of experiments, by design: measure/ holds the commands a student runs
 * by name (one per experiment, and the class's tools), results/ one folder per experiment (and
 * report/). Splitting them would hide an experiment's files behind a second name.
 */
const FLAT_BY_DESIGN = new Set(['measure', 'results']);
/** The topics of the folders that hold only topic folders, each with what goes there. */
const TOPICS: Record<string, readonly string[]> = {
  // harness: running an experiment; machine: how busy the machine is; process: starting servers;
  // load: sending requests; class: comparing, grading and rolling up students' runs; profile: --profile's
  // CPU profiles, cut to the load and summed by function; exercise: the write-the-fix exercises, their
  // specs and the batteries that check a fix's answers; overload: lesson 11's users who give up and
  // retry, and the passes that follow the service's capacity as the machine's speed drifts; network:
  // lesson 12's path through a namespace and a toxic proxy, and the client that waits on it.
  'measure/lib': ['harness', 'machine', 'process', 'load', 'class', 'profile', 'exercise', 'overload', 'network'],
  // serve: listening, draining, daemons; balancer: the kit's balancer and nginx's config;
  // cluster: node:cluster primaries and workers; cpu: quotas and CPU work; state: stores and
  // databases; stages: lesson 9's stamps; network: the path between a balancer and its replicas
  // (lesson 12's toxic proxy).
  'servers/lib': ['serve', 'balancer', 'cluster', 'cpu', 'state', 'stages', 'network'],
  // report: what every experiment's report shares; every other folder is one experiment's.
  results: ['report', '<experiment>'],
};

/**
 * What is wrong with the folders `entries` lists (folder -> its files and subfolders): one over
 * MAX_FOLDER_ENTRIES, a file loose in a topic-only folder, or a subfolder that is not one of its
 * topics (`<experiment>`: any name in `experiments`).
 */
export function folderProblems(
  entries: Record<string, { files: string[]; folders: string[] }>,
  experiments: readonly string[],
): string[] {
  const problems: string[] = [];
  for (const [dir, { files, folders }] of Object.entries(entries)) {
    const n = files.length + folders.length;
    if (n > MAX_FOLDER_ENTRIES && !FLAT_BY_DESIGN.has(dir))
      problems.push(`${dir} holds ${n} entries, over ${MAX_FOLDER_ENTRIES}: split it by topic`);
    const topics = TOPICS[dir];
    if (!topics) continue;
    for (const f of files) problems.push(`${dir}/${f} is loose: put it in one of the topics (${topics.join(', ')})`);
    for (const f of folders)
      if (!topics.includes(f) && !(topics.includes('<experiment>') && experiments.includes(f)))
        problems.push(`${dir}/${f} is not a topic of ${dir} (${topics.join(', ')})`);
  }
  return problems;
}

/** Every folder below the source layers, with its .ts files and its subfolders. */
function sourceFolders(): Record<string, { files: string[]; folders: string[] }> {
  const out: Record<string, { files: string[]; folders: string[] }> = {};
  const walk = (dir: string) => {
    const entries = readdirSync(path.join(ROOT, dir), { withFileTypes: true });
    const folders = entries.filter((e) => e.isDirectory()).map((e) => e.name);
    out[dir] = { files: entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => e.name), folders };
    for (const f of folders) walk(`${dir}/${f}`);
  };
  for (const layer of Object.keys(LAYERS)) walk(layer);
  return out;
}

/** The folders of test/ whose *.test.ts files the Makefile runs, each in its tier. */
const TEST_TIERS = ['unit', 'integration', 'smoke', 'e2e'];
/** Modules a unit test may not import: each starts processes, servers or browsers. */
const STARTS_PROCESSES = [
  'node:child_process',
  'measure/lib/process/lab.ts',
  'measure/lib/process/launch.ts',
  'measure/lib/process/topology.ts',
  'test/traffic-lab-helpers.ts',
  'test/other-browsers.ts',
  'web/browser.ts',
  'playwright-core',
  'puppeteer-core',
  'selenium-webdriver',
];
/** test/helpers.ts's functions that start a process or run an experiment. */
const STARTING_HELPERS = ['runScript', 'runInProcess', 'spawnOwned', 'spawnScript'];

/** node:test's file-level hooks: in the unit tests' shared process one would reach every file's tests. */
const FILE_HOOKS = ['before', 'after', 'beforeEach', 'afterEach'];

/** Test files (paths from the project root) that are in no tier's folder. */
export function untieredTests(files: string[]): string[] {
  return files.filter(
    (f) =>
      f.endsWith('.test.ts') &&
      !TEST_TIERS.some((tier) => f.startsWith(`test/${tier}/`) && !f.slice(`test/${tier}/`.length).includes('/')),
  );
}

/**
 * What unit test `file` imports that starts a process (a module, or one of the helpers' starters),
 * and any file-level hook it imports from node:test (a test's own t.after is fine).
 */
export function unitProblems(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st)) continue;
    const spec = (st.moduleSpecifier as ts.StringLiteral).text;
    const target = spec.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)) : spec;
    if (STARTS_PROCESSES.includes(target)) problems.push(`${file} imports ${spec}, which starts processes`);
    const named = st.importClause?.namedBindings;
    if (target === 'node:test' && named && ts.isNamedImports(named)) {
      for (const el of named.elements)
        if (FILE_HOOKS.includes(el.name.text))
          problems.push(
            `${file} imports ${el.name.text} from node:test, a file-level hook that would reach every unit test in the shared process`,
          );
    }
    if (target === 'test/helpers.ts' && named && ts.isNamedImports(named)) {
      for (const el of named.elements)
        if (STARTING_HELPERS.includes(el.name.text))
          problems.push(`${file} imports ${el.name.text}, which starts a process or runs an experiment`);
    }
  }
  return problems;
}

/** Every file below test/, as a path from the project root with / between folders. */
function testFiles(dir = 'test'): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((e) => {
    const rel = `${dir}/${e}`;
    return statSync(path.join(ROOT, rel)).isDirectory() ? testFiles(rel) : [rel];
  });
}

test("every test file is in a tier's folder; no unit test starts a process or has a file-level hook", () => {
  const files = testFiles();
  assert.deepEqual(untieredTests(files), []);
  for (const tier of TEST_TIERS)
    assert.ok(
      files.some((f) => f.startsWith(`test/${tier}/`) && f.endsWith('.test.ts')),
      `test/${tier}/ has tests`,
    );
  const problems = files
    .filter((f) => f.startsWith('test/unit/') && f.endsWith('.ts'))
    .flatMap((f) => unitProblems(f, readFileSync(path.join(ROOT, f), 'utf8')));
  assert.deepEqual(problems, []);
});

test('the tier checks find a test outside the tiers, and a unit test that starts a process or imports a file-level hook', () => {
  assert.deepEqual(
    untieredTests([
      'test/a.test.ts',
      'test/unit/b.test.ts',
      'test/unit/deep/c.test.ts',
      'test/slow/d.test.ts',
      'test/helpers.ts',
    ]),
    ['test/a.test.ts', 'test/unit/deep/c.test.ts', 'test/slow/d.test.ts'],
  );
  const text =
    "import { spawn } from 'node:child_process';\nimport { Lab } from '../../measure/lib/process/lab.ts';\nimport { failOnWarnings, runScript } from '../helpers.ts';\nimport { LESSONS } from '../../measure/lib/harness/lessons.ts';\n";
  assert.deepEqual(unitProblems('test/unit/x.test.ts', text), [
    'test/unit/x.test.ts imports node:child_process, which starts processes',
    'test/unit/x.test.ts imports ../../measure/lib/process/lab.ts, which starts processes',
    'test/unit/x.test.ts imports runScript, which starts a process or runs an experiment',
  ]);
  assert.deepEqual(
    unitProblems('test/unit/x.test.ts', "import { failOnWarnings, usageInProcess } from '../helpers.ts';\n"),
    [],
  );
  assert.deepEqual(unitProblems('test/unit/x.test.ts', "import { before, test } from 'node:test';\n"), [
    'test/unit/x.test.ts imports before from node:test, a file-level hook that would reach every unit test in the shared process',
  ]);
  assert.deepEqual(unitProblems('test/unit/x.test.ts', "import { test, type TestContext } from 'node:test';\n"), []);
});

test(`no source file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}`, () => {
  const problems = Object.keys(LAYERS)
    .flatMap(sourceFiles)
    .flatMap((f) => sizeProblems(f, readFileSync(path.join(ROOT, f), 'utf8')));
  assert.deepEqual(problems, []);
});

test('each layer imports only the layers below it', () => {
  const problems = Object.keys(LAYERS)
    .flatMap(sourceFiles)
    .flatMap((f) => layerProblems(f, readFileSync(path.join(ROOT, f), 'utf8')));
  assert.deepEqual(problems, []);
});

test('core/ imports only core/ and uses no Node global, clock or random number', () => {
  const problems = sourceFiles('core').flatMap((f) =>
    coreProblems(f.split(path.sep).join('/'), readFileSync(path.join(ROOT, f), 'utf8')),
  );
  assert.ok(sourceFiles('core').length >= 4, 'core/ holds the shared rules');
  assert.deepEqual(problems, []);
});

test('no source file imports itself back through others (value imports)', () => {
  const files = Object.fromEntries(
    Object.keys(LAYERS)
      .flatMap(sourceFiles)
      .map((f) => [f.split(path.sep).join('/'), readFileSync(path.join(ROOT, f), 'utf8')]),
  );
  assert.deepEqual(importCycles(valueImports(files)), []);
});

test('the cycle check finds a cycle of three and ignores type-only imports', () => {
  const files = {
    'sim/a.ts': "import { b } from './b.ts';\nimport type { D } from './d.ts';",
    'sim/b.ts': "import { c } from './c.ts';",
    'sim/c.ts': "import { a, type A } from './a.ts';",
    'sim/d.ts': "import type { A } from './a.ts';\nexport type { B } from './b.ts';",
  };
  assert.deepEqual(importCycles(valueImports(files)), [['sim/a.ts', 'sim/b.ts', 'sim/c.ts']]);
  assert.deepEqual(importCycles(valueImports({ ...files, 'sim/c.ts': "import type { A } from './a.ts';" })), []);
});

test('every export has an importer: none dead, none used only in its own file', () => {
  const all = [
    ...Object.keys(LAYERS)
      .flatMap(sourceFiles)
      .map((f) => f.split(path.sep).join('/')),
    ...testFiles().filter((f) => f.endsWith('.ts')),
  ];
  const files = Object.fromEntries(all.map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8')]));
  assert.deepEqual(unusedExports(files), []);
});

test('the export check finds a dead export and a file-local one, and counts every kind of import', () => {
  const files = {
    'lib/a.ts':
      'export const used = 1;\nexport const dead = 2;\nexport function local() {}\nlocal();\nexport const { x: X, y: Y } = { x: 1, y: 2 };\nexport type T = 1;',
    'lib/b.ts':
      "import { used, type T } from './a.ts';\nimport * as c from './c.ts';\nexport { X } from './a.ts';\nconst d = await import('./d.ts');",
    'lib/c.ts': 'export const anything = 1;',
    'lib/d.ts': 'export const loaded = 1;',
    'measure/e.ts': 'export const experiment = 1;\nexport const other = 1;',
    'test/unit/f.test.ts': "import { X } from '../../lib/b.ts';\nexport const fine = 1;",
  };
  assert.deepEqual(unusedExports(files), ['lib/a.ts dead', 'lib/a.ts local', 'lib/a.ts Y', 'measure/e.ts other']);
  assert.deepEqual(unusedExports({ ...files, 'test/unit/f.test.ts': '' }), [
    'lib/a.ts dead',
    'lib/a.ts local',
    'lib/a.ts Y',
    'lib/b.ts X',
    'measure/e.ts other',
  ]);
});

test(`no source folder over ${MAX_FOLDER_ENTRIES} entries; measure/lib, servers/lib and results/ hold only their topics`, () => {
  assert.deepEqual(folderProblems(sourceFolders(), EXPERIMENTS), []);
});

test('the folder check finds a long folder, a loose file, an unknown topic, and knows an experiment', () => {
  const many = Array.from({ length: 21 }, (_, i) => `f${i}.ts`);
  const entries = {
    sim: { files: many, folders: [] },
    measure: { files: many, folders: ['lib'] },
    'servers/lib': { files: ['http.ts'], folders: ['serve', 'misc'] },
    results: { files: [], folders: ['report', 'cluster', 'nonsense'] },
  };
  assert.deepEqual(folderProblems(entries, ['cluster']), [
    'sim holds 21 entries, over 20: split it by topic',
    'servers/lib/http.ts is loose: put it in one of the topics (serve, balancer, cluster, cpu, state, stages, network)',
    'servers/lib/misc is not a topic of servers/lib (serve, balancer, cluster, cpu, state, stages, network)',
    'results/nonsense is not a topic of results (report, <experiment>)',
  ]);
});

test('the core check finds an outside import, a Node module, a package, a global, the clock and Math.random', () => {
  const text = [
    "import { a } from './policies.ts';",
    "import { b } from '../servers/lib/http.ts';",
    "import { readFileSync } from 'node:fs';",
    "export { c } from 'tinyqueue';",
    '// process.env in a comment is fine',
    "const s = 'Date.now() in a string is fine';",
    'export const now = () => Date.now() + process.hrtime()[0] + Math.random();',
    'export const o = { process: 1 }.process;',
  ].join('\n');
  assert.deepEqual(coreProblems('core/x.ts', text), [
    'core/x.ts imports ../servers/lib/http.ts: core/ imports only core/',
    'core/x.ts imports node:fs: core/ imports only core/',
    'core/x.ts imports tinyqueue: core/ imports only core/',
    'core/x.ts uses Date: core/ takes time and I/O as arguments',
    'core/x.ts uses process: core/ takes time and I/O as arguments',
    'core/x.ts uses Math.random: core/ takes an rng argument',
  ]);
});

test('the checks find a long file, a long function, an arrow function and a forbidden import', () => {
  const body = Array.from({ length: 81 }, (_, i) => `  x += ${i};`).join('\n');
  const long = `function big() {\n  let x = 0;\n${body}\n}\nconst arrow = () => {\n${body}\n};\n` + '\n'.repeat(300);
  const found = sizeProblems('servers/a.ts', long);
  assert.equal(found.length, 3, found.join('\n'));
  assert.match(found[0]!, /servers\/a\.ts has \d+ lines/);
  assert.match(found[1]!, /servers\/a\.ts:1 big has 84 lines/);
  assert.match(found[2]!, /a function has 83 lines/);
  assert.deepEqual(sizeProblems('servers/a.ts', 'function small() {\n  return 1;\n}\n'), []);
  assert.deepEqual(
    layerProblems(
      path.join('sim', 'x', 'a.ts'),
      "import { Lab } from '../../measure/lib/process/lab.ts';\nimport { c } from '../../results/report/format.ts';\n",
    ),
    [
      `${path.join('sim', 'x', 'a.ts')} imports ../../measure/lib/process/lab.ts (sim may use sim, lib, core, servers, results)`,
    ],
  );
  assert.deepEqual(layerProblems(path.join('servers', 'a.ts'), "export { x } from '../results/shape.ts';\n"), [
    `${path.join('servers', 'a.ts')} imports ../results/shape.ts (servers may use servers, lib, core)`,
  ]);
  assert.deepEqual(layerProblems(path.join('measure', 'a.ts'), "import { x } from '../sim/engine.ts';\n"), []);
});
