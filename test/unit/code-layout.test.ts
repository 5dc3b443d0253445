// Keeps the code easy to change: no source file over 300 lines, no function over 80, and each
// layer imports only the layers below it (lib ← servers ← results ← sim ← measure ← web), so the
// simulator and the reports never depend on the lab's process handling. Keeps the tests in their
// tiers: every test file is in one of the tier folders the Makefile runs, and a unit test (they all
// share one process, test/run-unit.ts) imports nothing that starts a process and no file-level hook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { failOnWarnings, ROOT } from '../helpers.ts';

failOnWarnings();

const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;
/** Each top-level folder, with the folders it may import from. */
const LAYERS: Record<string, readonly string[]> = {
  lib: [],
  servers: ['lib'],
  results: ['lib', 'servers'],
  sim: ['lib', 'servers', 'results'],
  measure: ['lib', 'servers', 'results', 'sim'],
  web: ['lib', 'servers', 'results', 'sim', 'measure'],
};

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
    if (target in LAYERS && !allowed.has(target)) problems.push(`${file} imports ${spec} (${own} may use ${[...allowed].join(', ')})`);
  }
  return problems;
}

/** The folders of test/ whose *.test.ts files the Makefile runs, each in its tier. */
const TEST_TIERS = ['unit', 'integration', 'smoke', 'e2e'];
/** Modules a unit test may not import: each starts processes, servers or browsers. */
const STARTS_PROCESSES = ['node:child_process', 'measure/lib/lab.ts', 'measure/lib/launch.ts', 'measure/lib/topology.ts', 'test/traffic-lab-helpers.ts', 'test/other-browsers.ts', 'web/browser.ts', 'playwright-core', 'puppeteer-core', 'selenium-webdriver'];
/** test/helpers.ts's functions that start a process or run an experiment. */
const STARTING_HELPERS = ['runScript', 'runInProcess', 'spawnOwned', 'spawnScript'];

/** node:test's file-level hooks: in the unit tests' shared process one would reach every file's tests. */
const FILE_HOOKS = ['before', 'after', 'beforeEach', 'afterEach'];

/** Test files (paths from the project root) that are in no tier's folder. */
export function untieredTests(files: string[]): string[] {
  return files.filter((f) => f.endsWith('.test.ts') && !TEST_TIERS.some((tier) => f.startsWith(`test/${tier}/`) && !f.slice(`test/${tier}/`.length).includes('/')));
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
      for (const el of named.elements) if (FILE_HOOKS.includes(el.name.text)) problems.push(`${file} imports ${el.name.text} from node:test, a file-level hook that would reach every unit test in the shared process`);
    }
    if (target === 'test/helpers.ts' && named && ts.isNamedImports(named)) {
      for (const el of named.elements) if (STARTING_HELPERS.includes(el.name.text)) problems.push(`${file} imports ${el.name.text}, which starts a process or runs an experiment`);
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

test('every test file is in a tier\'s folder; no unit test starts a process or has a file-level hook', () => {
  const files = testFiles();
  assert.deepEqual(untieredTests(files), []);
  for (const tier of TEST_TIERS) assert.ok(files.some((f) => f.startsWith(`test/${tier}/`) && f.endsWith('.test.ts')), `test/${tier}/ has tests`);
  const problems = files.filter((f) => f.startsWith('test/unit/') && f.endsWith('.ts')).flatMap((f) => unitProblems(f, readFileSync(path.join(ROOT, f), 'utf8')));
  assert.deepEqual(problems, []);
});

test('the tier checks find a test outside the tiers, and a unit test that starts a process or imports a file-level hook', () => {
  assert.deepEqual(untieredTests(['test/a.test.ts', 'test/unit/b.test.ts', 'test/unit/deep/c.test.ts', 'test/slow/d.test.ts', 'test/helpers.ts']), ['test/a.test.ts', 'test/unit/deep/c.test.ts', 'test/slow/d.test.ts']);
  const text = "import { spawn } from 'node:child_process';\nimport { Lab } from '../../measure/lib/lab.ts';\nimport { failOnWarnings, runScript } from '../helpers.ts';\nimport { LESSONS } from '../../measure/lib/lessons.ts';\n";
  assert.deepEqual(unitProblems('test/unit/x.test.ts', text), [
    'test/unit/x.test.ts imports node:child_process, which starts processes',
    'test/unit/x.test.ts imports ../../measure/lib/lab.ts, which starts processes',
    'test/unit/x.test.ts imports runScript, which starts a process or runs an experiment',
  ]);
  assert.deepEqual(unitProblems('test/unit/x.test.ts', "import { failOnWarnings, usageInProcess } from '../helpers.ts';\n"), []);
  assert.deepEqual(unitProblems('test/unit/x.test.ts', "import { before, test } from 'node:test';\n"), [
    'test/unit/x.test.ts imports before from node:test, a file-level hook that would reach every unit test in the shared process',
  ]);
  assert.deepEqual(unitProblems('test/unit/x.test.ts', "import { test, type TestContext } from 'node:test';\n"), []);
});

test(`no source file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}`, () => {
  const problems = Object.keys(LAYERS).flatMap(sourceFiles).flatMap((f) => sizeProblems(f, readFileSync(path.join(ROOT, f), 'utf8')));
  assert.deepEqual(problems, []);
});

test('each layer imports only the layers below it', () => {
  const problems = Object.keys(LAYERS).flatMap(sourceFiles).flatMap((f) => layerProblems(f, readFileSync(path.join(ROOT, f), 'utf8')));
  assert.deepEqual(problems, []);
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
  assert.deepEqual(layerProblems(path.join('sim', 'x', 'a.ts'), "import { Lab } from '../../measure/lib/lab.ts';\nimport { c } from '../../results/format.ts';\n"), [
    `${path.join('sim', 'x', 'a.ts')} imports ../../measure/lib/lab.ts (sim may use sim, lib, servers, results)`,
  ]);
  assert.deepEqual(layerProblems(path.join('servers', 'a.ts'), "export { x } from '../results/shape.ts';\n"), [`${path.join('servers', 'a.ts')} imports ../results/shape.ts (servers may use servers, lib)`]);
  assert.deepEqual(layerProblems(path.join('measure', 'a.ts'), "import { x } from '../sim/engine.ts';\n"), []);
});
