/**
 * `--predict`: the answers to an experiment's questions (results/report/predictions.ts), collected before
 * anything starts. `--predict` alone asks them on the terminal (one line per answer, on standard
 * input); `--predict answers.json` reads them from a file. A bad file, a bad answer left unfixed or
 * input that ends early is a KIT_ERR_USAGE, and the run never starts half-asked.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { KitError } from '../../../lib/errors.ts';
import type { Io } from '../../../lib/entry.ts';
import {
  choiceIndex,
  formatChoices,
  formatQuestion,
  parseAnswers,
  type Answers,
  type Question,
} from '../../../results/report/predictions.ts';

/** What the --predict flags need of an experiment: its name and its questions. */
interface Asking {
  name: string;
  report: { predictions?: readonly Question[] | undefined };
}

/** What --predict's value is when the flag is given alone: ask on the terminal. */
const ASK = 'ask';
/** Wrong answers to one question before giving up (input from a pipe would otherwise loop). */
const MAX_TRIES = 3;

/**
 * The argv with a bare `--predict` (last, or followed by another flag) turned into `--predict=ask`,
 * so that node:util's parseArgs, which wants a value for a string flag, accepts both forms.
 */
export function normalizePredictFlag(argv: readonly string[]): string[] {
  return argv.map((a, i) =>
    a === '--predict' && (i === argv.length - 1 || argv[i + 1]!.startsWith('-')) ? `--predict=${ASK}` : a,
  );
}

/** Reads and checks an answers file; KIT_ERR_USAGE naming the file and the problem. */
function readAnswersFile(file: string, questions: readonly Question[]): Answers {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `cannot read the answers file '${file}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `the answers file '${file}' is not JSON: ${(err as Error).message}`,
      example(questions),
    );
  }
  try {
    return parseAnswers(data, questions);
  } catch (err) {
    throw new KitError('KIT_ERR_USAGE', `the answers file '${file}': ${(err as Error).message}`, example(questions));
  }
}

function example(questions: readonly Question[]): string {
  return `for example: ${firstChoices(questions)}`;
}

/** An answers file that picks the first choice of every question, as JSON. */
function firstChoices(questions: readonly Question[]): string {
  return JSON.stringify(Object.fromEntries(questions.map((q) => [q.id, 1])));
}

/**
 * `--predict --list`: experiment `name`'s questions, each with its id and numbered choices, then
 * an answers file that picks the first choice of each, to copy and edit.
 */
function questionList(name: string, questions: readonly Question[]): string {
  if (!questions.length) return `${name} has no --predict questions yet\n`;
  const each = questions.map((q) => [`${q.id}: ${q.ask}`, ...formatChoices(q)].join('\n'));
  return (
    [
      ...each,
      `answers file (choice numbers): ${firstChoices(questions)}`,
      `then: npx tsx measure/${name}.ts --predict answers.json`,
    ].join('\n\n') + '\n'
  );
}

/** Asks each question on `output`, reading one answer a line from `input`. */
async function askAnswers(
  questions: readonly Question[],
  input: NodeJS.ReadableStream,
  output: { write(s: string): unknown },
): Promise<Answers> {
  const rl = createInterface({ input, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const answers: Answers = {};
  try {
    for (const [n, q] of questions.entries()) {
      output.write(`${formatQuestion(q, n + 1, questions.length)}\nYour answer (1-${q.choices.length}): `);
      for (let tries = 0; answers[q.id] === undefined; tries++) {
        const next = await lines.next();
        if (next.done)
          throw new KitError(
            'KIT_ERR_USAGE',
            `no answer to '${q.id}': the input ended; nothing was started`,
            'answer every question, or give the answers in a file: --predict answers.json',
          );
        const i = choiceIndex(q, next.value);
        if (i !== undefined) answers[q.id] = i;
        else if (tries + 1 >= MAX_TRIES)
          throw new KitError(
            'KIT_ERR_USAGE',
            `'${q.id}' needs a number from 1 to ${q.choices.length}; nothing was started`,
          );
        else output.write(`Type a number from 1 to ${q.choices.length}: `);
      }
      output.write('\n');
    }
  } finally {
    rl.close();
  }
  return answers;
}

/**
 * Asks `prompt` on `output` and reads one line from `input`: one of `choices`, asked again (up to
 * MAX_TRIES) until it is. KIT_ERR_USAGE when the input ends or no line is one.
 */
export async function askLine(
  prompt: string,
  choices: readonly string[],
  input: NodeJS.ReadableStream,
  output: { write(s: string): unknown },
): Promise<string> {
  const rl = createInterface({ input, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  try {
    output.write(prompt);
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const next = await lines.next();
      if (next.done) break;
      const answer = next.value.trim();
      if (choices.includes(answer)) return answer;
      output.write(`Type one of ${choices.join(', ')}: `);
    }
  } finally {
    rl.close();
  }
  throw new KitError('KIT_ERR_USAGE', `no answer among ${choices.join(', ')}`);
}

/** --predict --list: the questions with their ids and choices, on stdout; KIT_ERR_USAGE without --predict. */
export function listQuestions(exp: Asking, predict: unknown, io: Io): number {
  if (typeof predict !== 'string')
    throw new KitError(
      'KIT_ERR_USAGE',
      '--list goes with --predict',
      `npx tsx measure/${exp.name}.ts --predict --list`,
    );
  io.stdout.write(questionList(exp.name, exp.report.predictions ?? []));
  return 0;
}

/** --predict's answers: typed (`ask`) or from a file; KIT_ERR_USAGE when the experiment has no questions. */
export async function collectAnswers(exp: Asking, predict: string, io: Io): Promise<Answers> {
  const questions = exp.report.predictions;
  if (!questions?.length)
    throw new KitError(
      'KIT_ERR_USAGE',
      `${exp.name} has no --predict questions yet`,
      'see the README\'s "Predict first"',
    );
  if (predict !== ASK) return readAnswersFile(predict, questions);
  return askAnswers(questions, io.stdin ?? process.stdin, io.stderr);
}
