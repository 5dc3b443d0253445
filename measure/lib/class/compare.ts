/**
 * Comparing --shape files with expected-output/ (the pure half of measure/compare.ts): each line
 * goes to the experiment whose expected file has its key; a line this machine could not show
 * counts as held; `# not shown here:` comments carry the reasons.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { makeChalk } from '../../../results/report/format.ts';
import { ROOT } from '../harness/paths.ts';
import {
  compareShape,
  NOT_SHOWN_PREFIX,
  NOTE_PREFIX,
  parseExpected,
  splitLine,
  type Comparison,
  withoutProfileLines,
} from '../../../results/report/shape.ts';

/** The lines of expected-output/<name>.txt (`fixed/blocking`, say). */
export function readExpectedFile(name: string, dir = path.join(ROOT, 'expected-output')): string[] {
  return parseExpected(readFileSync(path.join(dir, `${name}.txt`), 'utf8'));
}

/** Every experiment's expected lines, by name. */
export function loadExpected(dir = path.join(ROOT, 'expected-output')): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort())
    out.set(f.slice(0, -4), parseExpected(readFileSync(path.join(dir, f), 'utf8')));
  return out;
}

interface FileVerdict {
  file: string;
  /** Experiment → its comparison. */
  experiments: Map<string, Comparison>;
  /** Lines whose key no experiment has. */
  foreign: string[];
  /** Reasons the run gave for lines it could not show. */
  notShown: string[];
  /** Notes the run wrote (other programs kept the cores busy). */
  notes: string[];
  /** Experiments whose run wrote a note that the machine was busy: their lines are not judged. */
  busy: Set<string>;
  holds: boolean;
}

/**
 * Compares one --shape text with the expected files. Pure (given `expected`). Lines go to the
 * experiment that owns their key; where two experiments share a key (scale-out's and
 * capped-scale-out's `cpu-bound  failed-checks`), to the one whose lines came just before, as a
 * lesson's file holds each experiment's lines together. A `# note:` comment belongs to the
 * experiment whose lines it follows (the run writes it after them).
 */
export function compareText(file: string, text: string, expected: Map<string, string[]>, only?: string): FileVerdict {
  const lines = withoutProfileLines(text.split('\n').map((l) => l.trimEnd()));
  const notShown = lines.filter((l) => l.startsWith(NOT_SHOWN_PREFIX)).map((l) => l.slice(NOT_SHOWN_PREFIX.length));
  const notes = lines.filter((l) => l.startsWith(NOTE_PREFIX)).map((l) => l.slice(NOTE_PREFIX.length));
  const owners = new Map<string, string[]>();
  for (const [name, exp] of expected)
    for (const l of exp) owners.set(splitLine(l).key, [...new Set([...(owners.get(splitLine(l).key) ?? []), name])]);
  const byExperiment = new Map<string, string[]>();
  const foreign: string[] = [];
  const busy = new Set<string>();
  let current: string | undefined;
  for (const l of lines) {
    if (l.startsWith(NOTE_PREFIX)) {
      if (current !== undefined && BUSY_NOTE.test(l)) busy.add(current);
      continue;
    }
    if (l.trim() === '' || l.startsWith('#')) continue;
    const key = splitLine(l).key;
    const candidates = owners.get(key) ?? [];
    const name =
      only ??
      (current !== undefined && candidates.includes(current)
        ? current
        : (candidates.find((n) => !(byExperiment.get(n) ?? []).some((x) => splitLine(x).key === key)) ??
          candidates[0]));
    if (name === undefined) {
      foreign.push(l);
      continue;
    }
    current = name;
    byExperiment.set(name, [...(byExperiment.get(name) ?? []), l]);
  }
  const experiments = new Map<string, Comparison>();
  for (const [name, actual] of byExperiment) experiments.set(name, compareShape(expected.get(name)!, actual));
  const holds = experiments.size > 0 && foreign.length === 0 && [...experiments.values()].every((c) => c.holds);
  return { file, experiments, foreign, notShown, notes, busy, holds };
}

/** A run's note that other programs (or other virtual machines) kept the cores busy (results/report/format.ts busyMachineCaveat). */
const BUSY_NOTE = /^# note: (other programs|other virtual machines)/;

/** The verdict for people (one block per file). Pure. */
export function renderVerdict(v: FileVerdict, color: boolean): string {
  const c = makeChalk(color);
  const out = [c.bold(`${v.file}: ${v.holds ? c.green('the shape holds') : c.red('the shape does not hold')}`)];
  for (const [name, cmp] of v.experiments) {
    const count = (s: string) => cmp.lines.filter((l) => l.status === s).length;
    const bad = cmp.lines.filter((l) => l.status === 'failed' || l.status === 'missing' || l.status === 'unexpected');
    const notShown = count('not-shown');
    // On a machine its run found busy, a line that did not hold is not judged (~), as in the run's own output.
    const busy = v.busy.has(name);
    const mark = cmp.holds ? c.green('✓') : busy ? c.yellow('~') : c.red('✗');
    out.push(
      `  ${mark} ${name}: ${count('held')} held${notShown ? `, ${notShown} not shown on that machine` : ''}${bad.length ? `, ${bad.length} ${busy ? 'not judged: the machine was busy' : 'did not hold'}` : ''}`,
    );
    for (const l of bad) {
      const saw =
        l.status === 'missing'
          ? 'no such line in the file'
          : l.status === 'unexpected'
            ? 'not in the expected file'
            : `the file has: ${l.actual}`;
      out.push(
        `      ${busy && l.status !== 'unexpected' ? c.yellow('~') : c.red('✗')} ${l.expected ?? l.actual}   (${saw})`,
      );
    }
    for (const l of cmp.lines.filter((x) => x.status === 'not-shown')) out.push(`      ${c.yellow('-')} ${l.expected}`);
  }
  for (const why of v.notShown) out.push(`    not shown, because: ${why}`);
  if (
    v.experiments.size > 0 &&
    [...v.experiments.values()].some((cmp) => cmp.lines.some((l) => l.status === 'not-shown')) &&
    v.notShown.length === 0
  ) {
    out.push(
      '    not shown: the file gives no reason (it was made before the kit wrote them, or the comments were cut)',
    );
  }
  for (const l of v.foreign) out.push(`  ${c.red('✗')} not a line of any experiment: ${l}`);
  for (const n of v.notes) out.push(`  note from the run: ${n}`);
  return out.join('\n') + '\n';
}
