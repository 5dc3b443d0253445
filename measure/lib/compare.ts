/**
 * Comparing --shape files with expected-output/ (the pure half of measure/compare.ts): each line
 * goes to the experiment whose expected file has its key; a line this machine could not show
 * counts as held; `# not shown here:` comments carry the reasons.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { makeChalk } from '../../results/format.ts';
import { ROOT } from './paths.ts';
import { compareShape, NOT_SHOWN_PREFIX, NOTE_PREFIX, parseExpected, splitLine, type Comparison } from '../../results/shape.ts';

/** Every experiment's expected lines, by name. */
export function loadExpected(dir = path.join(ROOT, 'expected-output')): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.txt')).sort()) out.set(f.slice(0, -4), parseExpected(readFileSync(path.join(dir, f), 'utf8')));
  return out;
}

export interface FileVerdict {
  file: string;
  /** Experiment → its comparison. */
  experiments: Map<string, Comparison>;
  /** Lines whose key no experiment has. */
  foreign: string[];
  /** Reasons the run gave for lines it could not show. */
  notShown: string[];
  /** Notes the run wrote (other programs kept the cores busy). */
  notes: string[];
  holds: boolean;
}

/** Compares one --shape text with the expected files. Pure (given `expected`). */
export function compareText(file: string, text: string, expected: Map<string, string[]>, only?: string): FileVerdict {
  const lines = text.split('\n').map((l) => l.trimEnd());
  const notShown = lines.filter((l) => l.startsWith(NOT_SHOWN_PREFIX)).map((l) => l.slice(NOT_SHOWN_PREFIX.length));
  const notes = lines.filter((l) => l.startsWith(NOTE_PREFIX)).map((l) => l.slice(NOTE_PREFIX.length));
  const shapeLines = parseExpected(text);
  const owner = new Map<string, string>();
  for (const [name, exp] of expected) for (const l of exp) owner.set(splitLine(l).key, name);
  const byExperiment = new Map<string, string[]>();
  const foreign: string[] = [];
  for (const l of shapeLines) {
    const name = only ?? owner.get(splitLine(l).key);
    if (name === undefined) {
      foreign.push(l);
      continue;
    }
    byExperiment.set(name, [...(byExperiment.get(name) ?? []), l]);
  }
  const experiments = new Map<string, Comparison>();
  for (const [name, actual] of byExperiment) experiments.set(name, compareShape(expected.get(name)!, actual));
  const holds = experiments.size > 0 && foreign.length === 0 && [...experiments.values()].every((c) => c.holds);
  return { file, experiments, foreign, notShown, notes, holds };
}

/** The verdict for people (one block per file). Pure. */
export function renderVerdict(v: FileVerdict, color: boolean): string {
  const c = makeChalk(color);
  const out = [c.bold(`${v.file}: ${v.holds ? c.green('the shape holds') : c.red('the shape does not hold')}`)];
  for (const [name, cmp] of v.experiments) {
    const count = (s: string) => cmp.lines.filter((l) => l.status === s).length;
    const bad = cmp.lines.filter((l) => l.status === 'failed' || l.status === 'missing' || l.status === 'unexpected');
    const notShown = count('not-shown');
    out.push(`  ${cmp.holds ? c.green('✓') : c.red('✗')} ${name}: ${count('held')} held${notShown ? `, ${notShown} not shown on that machine` : ''}${bad.length ? `, ${bad.length} did not hold` : ''}`);
    for (const l of bad) {
      const saw = l.status === 'missing' ? 'no such line in the file' : l.status === 'unexpected' ? 'not in the expected file' : `the file has: ${l.actual}`;
      out.push(`      ${c.red('✗')} ${l.expected ?? l.actual}   (${saw})`);
    }
    for (const l of cmp.lines.filter((x) => x.status === 'not-shown')) out.push(`      ${c.yellow('-')} ${l.expected}`);
  }
  for (const why of v.notShown) out.push(`    not shown, because: ${why}`);
  if (v.experiments.size > 0 && [...v.experiments.values()].some((cmp) => cmp.lines.some((l) => l.status === 'not-shown')) && v.notShown.length === 0) {
    out.push('    not shown: the file gives no reason (it was made before the kit wrote them, or the comments were cut)');
  }
  for (const l of v.foreign) out.push(`  ${c.red('✗')} not a line of any experiment: ${l}`);
  for (const n of v.notes) out.push(`  note from the run: ${n}`);
  return out.join('\n') + '\n';
}

