// Proves every lesson text has the frame a student reads it by: its finding first, an "In one
// minute" box, the glossary, a real output table with the cells to read marked, the explanation,
// a summary and a bridge to the next lesson, then the exercises; that it stays within its word
// budget; and that the README and the lesson give the same time for `make lesson-N`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { failOnWarnings, ROOT } from '../helpers.ts';

failOnWarnings();
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

/** Words a lesson may have: the source lessons the course grew from have 1,200 to 2,200. */
export const MAX_LESSON_WORDS = 2500;

/** Words as `wc -w` counts them: runs of non-space characters. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The `## ` headings of a text, outside fenced blocks, in order, with their offsets. */
function headings(text: string): { title: string; at: number }[] {
  const out: { title: string; at: number }[] = [];
  let fenced = false;
  let at = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && line.startsWith('## ')) out.push({ title: line.slice(3).trim(), at });
    at += line.length + 1;
  }
  return out;
}

/** What lesson `id`'s text lacks of the frame (empty when it has it all); `last` has no bridge. */
export function frameProblems(id: number, text: string, last: boolean): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  if (!lines[0]?.startsWith(`# Lesson ${id} — `)) problems.push(`the first line is not "# Lesson ${id} — <title>"`);
  const opening = lines.slice(1).find((l) => l.trim() !== '') ?? '';
  if (/^(#|>|```|\||- |\d+\. )/.test(opening)) problems.push('the title is not followed by the finding in a sentence');
  const heads = headings(text);
  const firstHead = heads[0]?.at ?? text.length;
  if (!/^> \*\*In one minute\.\*\*/m.test(text.slice(0, firstHead)))
    problems.push('no "> **In one minute.**" box before the first section');
  else if (!text.slice(0, firstHead).includes(`make lesson-${id}`))
    problems.push(`the box does not give make lesson-${id}`);
  if (!text.includes('(glossary.md)')) problems.push('no link to the glossary');
  const block = /^```[^\n]*\n([\s\S]*?)^```[^\n]*\n((?:[^\n]+\n?){0,3})/m.exec(text);
  if (!block || block.index > (heads[1]?.at ?? text.length)) problems.push('no output block within the first section');
  else if (!/←/.test(block[1]!) && !/←|\b(look|read)\b/i.test(block[2]!))
    problems.push('the output block does not mark the cells to read (← or a line under it)');
  const titles = heads.map((h) => h.title);
  const summary = titles.indexOf('Summary');
  const next = titles.indexOf('Next');
  const exercises = titles.indexOf('Exercises');
  if (summary < 0) problems.push('no "## Summary"');
  else {
    const part = text.slice(heads[summary]!.at, heads[summary + 1]?.at ?? text.length);
    if ((part.match(/^- /gm) ?? []).length < 3) problems.push('the summary is not a list of at least 3 points');
  }
  if (!last && next < 0) problems.push('no "## Next" bridge');
  if (!last && next >= 0 && summary >= 0 && next < summary) problems.push('"## Next" comes before "## Summary"');
  if (exercises !== titles.length - 1) problems.push('"## Exercises" is not the last section');
  const words = wordCount(text);
  if (words > MAX_LESSON_WORDS) problems.push(`${words} words, over ${MAX_LESSON_WORDS}`);
  return problems;
}

/**
 * A duration as the texts write it ("about 15 s", "about 5½ min", "about 4 minutes"), in seconds;
 * undefined where `line` gives none.
 */
export function durationS(line: string): number | undefined {
  const m = /about (\d+)(½)?\s*(s|sec|seconds|min|minutes)\b/.exec(line);
  if (!m) return undefined;
  const n = Number(m[1]) + (m[2] ? 0.5 : 0);
  return m[3]!.startsWith('m') ? n * 60 : n;
}

/** The time `text` gives for `make lesson-<id>`: on the line that runs it, else in its box. */
function lessonDuration(text: string, id: number): number | undefined {
  const line = text.split('\n').find((l) => l.includes(`make lesson-${id} `) && durationS(l) !== undefined);
  if (line) return durationS(line);
  const box = /^> \*\*In one minute\.\*\*[\s\S]*?(?=\n[^>]|$)/m.exec(text)?.[0];
  return box ? durationS(box) : undefined;
}

test('every lesson has the frame: finding, box, glossary, marked output, summary, bridge, exercises last', () => {
  for (const [i, l] of LESSONS.entries())
    assert.deepEqual(frameProblems(l.id, read(l.text), i === LESSONS.length - 1), [], l.text);
});

test('the frame check fails on a lesson without each part', () => {
  const good = [
    '# Lesson 1 — A title',
    '',
    'One process serves 200 req/s of CPU work, whatever the connections.',
    '',
    '> **In one minute.** The finding; 200 req/s here; `make lesson-1`.',
    '',
    'Words in *italics* are in the [glossary](glossary.md).',
    '',
    '```',
    '1 conn  200 req/s  ←',
    '```',
    '',
    '## Why',
    '',
    'Because.',
    '',
    '## Summary',
    '',
    '- one',
    '- two',
    '- three',
    '',
    '## Next',
    '',
    'Lesson 2.',
    '',
    '## Exercises',
    '',
    '1. **One.** Do it.',
    '',
  ].join('\n');
  assert.deepEqual(frameProblems(1, good, false), []);
  const cases: [string, string][] = [
    [good.replace('# Lesson 1 — A title', '# A title'), 'the first line is not "# Lesson 1 — <title>"'],
    [
      good.replace('One process serves', '## One process serves'),
      'the title is not followed by the finding in a sentence',
    ],
    [good.replace('> **In one minute.**', '> **Briefly.**'), 'no "> **In one minute.**" box before the first section'],
    [good.replace('`make lesson-1`', 'the make target'), 'the box does not give make lesson-1'],
    [good.replace('(glossary.md)', '(words.md)'), 'no link to the glossary'],
    [good.replace('  ←', ''), 'the output block does not mark the cells to read (← or a line under it)'],
    [good.replace('- three\n', ''), 'the summary is not a list of at least 3 points'],
    [good.replace('## Next', '## Then'), 'no "## Next" bridge'],
    [good.replace('## Exercises', '## Practice') + '## More\n', '"## Exercises" is not the last section'],
    [good + ' word'.repeat(MAX_LESSON_WORDS), `${wordCount(good) + MAX_LESSON_WORDS} words, over ${MAX_LESSON_WORDS}`],
  ];
  for (const [text, problem] of cases) assert.ok(frameProblems(1, text, false).includes(problem), problem);
  assert.ok(
    frameProblems(1, good.replace(/```[\s\S]*?```\n/, ''), false).includes('no output block within the first section'),
  );
  assert.deepEqual(
    frameProblems(1, good.replace('## Next\n\nLesson 2.\n\n', ''), true),
    [],
    'the last lesson needs no bridge',
  );
});

test('the README and each lesson give the same time for make lesson-N, where both give one', () => {
  const readme = read('README.md');
  const problems: string[] = [];
  for (const l of LESSONS) {
    const inReadme = lessonDuration(readme, l.id);
    const inLesson = lessonDuration(read(l.text), l.id);
    if (inReadme !== undefined && inLesson !== undefined && inReadme !== inLesson)
      problems.push(`lesson ${l.id}: README ${inReadme} s, ${l.text} ${inLesson} s`);
  }
  assert.deepEqual(problems, []);
  assert.equal(durationS('make lesson-3     # (about 15 s)'), 15);
  assert.equal(durationS('(about 5½ min)'), 330);
  assert.equal(durationS('about 4 minutes; ARGS=--quick for 3'), 240);
  assert.equal(durationS('make lesson-1'), undefined);
});
