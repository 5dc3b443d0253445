// Keeps the code easy to change: no source file over 300 lines, no function over 80, and each
// layer imports only the layers below it (lib ← servers ← results ← sim ← measure ← web), so the
// simulator and the reports never depend on the lab's process handling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { failOnWarnings, ROOT } from './helpers.ts';

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
