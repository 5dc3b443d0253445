/**
 * Predict, then measure (`--predict`): an experiment's questions, each answered by one of its
 * measures (results/report/measures.ts), checked against a run and printed beside what was measured with
 * the lesson section that explains it. Pure: parsing an answers file, grading, the table.
 */
import { formatMeasure, type Measure } from './measures.ts';
import { makeChalk } from './format.ts';

/** One choice: the measure's value falls in [from, to) (either end open when absent). */
interface Choice {
  label: string;
  from?: number;
  to?: number;
}

/** Choices for "how much of the heavy request's time": a ratio of two durations. */
export const SHARE_OF_HEAVY: readonly Choice[] = [
  { label: 'almost none of it (under 0.1×)', to: 0.1 },
  { label: 'part of it (0.1× to 0.5×)', from: 0.1, to: 0.5 },
  { label: 'about all of it (0.5× or more)', from: 0.5 },
];

export interface Question {
  /** Kebab-case, unique within the experiment: the key of an answers file. */
  id: string;
  ask: string;
  /** The id of the measure that answers it. */
  measure: string;
  choices: readonly Choice[];
  /** Why the measured answer is what it is, in one or two sentences, and where the lesson says more. */
  explain: string;
  lesson: string;
}

/** Question id → the chosen choice's index (0-based). */
export type Answers = Record<string, number>;

/**
 * An answers file's content, checked: an object with one entry per question, each the number of a
 * choice as the questions print it (1-based) or its exact label. Throws an Error naming the
 * question and what it accepts; nothing else is read from the file.
 */
export function parseAnswers(data: unknown, questions: readonly Question[]): Answers {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new Error('the answers file must hold one JSON object: {"<question id>": <choice number>, ...}');
  const given = data as Record<string, unknown>;
  const known = new Set(questions.map((q) => q.id));
  const extra = Object.keys(given).filter((k) => !known.has(k));
  if (extra.length)
    throw new Error(`no question '${extra[0]}' in this experiment; its questions are ${[...known].join(', ')}`);
  const out: Answers = {};
  for (const q of questions) {
    const index = choiceIndex(q, given[q.id]);
    if (index === undefined)
      throw new Error(
        `'${q.id}' needs a choice number from 1 to ${q.choices.length} (or its label); got ${JSON.stringify(given[q.id]) ?? 'nothing'}`,
      );
    out[q.id] = index;
  }
  return out;
}

/** A typed answer to a question, 1-based number or exact label (case-insensitive), as an index; undefined when it is neither. */
export function choiceIndex(q: Question, answer: unknown): number | undefined {
  const text = typeof answer === 'number' ? String(answer) : typeof answer === 'string' ? answer.trim() : undefined;
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n >= 1 && n <= q.choices.length ? n - 1 : undefined;
  }
  const i = q.choices.findIndex((c) => c.label.toLowerCase() === text.toLowerCase());
  return i >= 0 ? i : undefined;
}

/** The question as asked on a terminal: the question, then its numbered choices. */
export function formatQuestion(q: Question, n: number, total: number): string {
  return [`Prediction ${n} of ${total}: ${q.ask}`, ...formatChoices(q)].join('\n');
}

/** A question's choices, one line each, numbered from 1 as an answer gives them. */
export function formatChoices(q: Question): string[] {
  return q.choices.map((c, i) => `  ${i + 1}) ${c.label}`);
}

interface Graded {
  question: Question;
  chosen: number;
  /** The choice the measured value falls in (undefined: the run did not measure it). */
  measured?: number;
  value?: Measure;
}

/** Each answer beside the choice the run's measures fall in. */
export function grade(questions: readonly Question[], answers: Answers, measures: readonly Measure[]): Graded[] {
  return questions.map((q) => {
    const value = measures.find((m) => m.id === q.measure);
    const measured = value
      ? q.choices.findIndex(
          (c) => (c.from === undefined || value.value >= c.from) && (c.to === undefined || value.value < c.to),
        )
      : -1;
    return { question: q, chosen: answers[q.id]!, ...(measured >= 0 ? { measured } : {}), ...(value ? { value } : {}) };
  });
}

/** The predictions after the run: each one, what was measured, and the explanation. */
export function renderPredictions(graded: readonly Graded[], color: boolean): string {
  const c = makeChalk(color);
  const right = graded.filter((g) => g.measured === g.chosen).length;
  // A question this run did not measure (a part left out) is neither right nor wrong.
  const unmeasured = graded.filter((g) => g.measured === undefined).length;
  const out = [
    c.bold(
      `Your predictions: ${right} of ${graded.length - unmeasured} right${unmeasured ? `; ${unmeasured} not in this run` : ''}`,
    ),
  ];
  for (const g of graded) {
    const q = g.question;
    const mark = g.measured === undefined ? c.yellow('?') : g.measured === g.chosen ? c.green('✓') : c.red('✗');
    out.push(`${mark} ${q.ask}`);
    out.push(`    you said: ${q.choices[g.chosen]!.label}`);
    out.push(
      g.value && g.measured !== undefined
        ? `    measured: ${formatMeasure(g.value)} (${q.choices[g.measured]!.label})`
        : '    measured: not in this run',
    );
    out.push(`    ${c.dim(`${q.explain} (${q.lesson})`)}`);
  }
  return out.join('\n');
}
