/**
 * Lesson 10 · incident: diagnose a slow service, then fix it.
 *
 * Starts the incident server (servers/incident.ts) with one fault planted in it, and measures it
 * phase by phase, each phase aimed at one mechanism: /books and /search at a steady rate (event-loop
 * utilization and delay, and the CPU profile's heaviest functions), cover reads while /export runs
 * (the thread pool), a kept-alive connection left idle (against the balancer's idle timeout), pages
 * with a new session id each (the heap), and SIGTERM under kept-alive clients (the shutdown). With a
 * seed the incident is not named: the student names it (--name, or asked in a terminal) and the kit
 * checks the name. `--mine <name>` then measures the student's own copy of the faulty handler
 * (exercises/incidents/<name>.ts, copied on first use): the line that showed the symptom shows it gone.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import type { Io } from '../lib/entry.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { ROOT } from './lib/harness/paths.ts';
import { handlersCheck, INCIDENT_EXERCISES, studentFix } from './lib/exercise/specs.ts';
import { hints, render, shape } from '../results/incident/report.ts';
import { examples } from '../results/incident/examples.ts';
import { measures, predictions } from '../results/incident/predictions.ts';
import { INCIDENT_NAMES, type IncidentName, type IncidentResult } from '../results/incident/result.ts';
import { nameVerdict, seedIncident, SYMPTOMS } from '../results/incident/naming.ts';
import { runBattery } from './lib/load/incident-battery.ts';
import { askLine } from './lib/harness/predict.ts';

const command = defineCommand({
  usage: 'npx tsx measure/incident.ts [--seed <n> [--name <incident>] | --incident <name> | --mine <name>] [flags]',
  summary:
    'Starts a library service with one fault planted in it and measures it phase by phase, with every measure on ' +
    '(event loop, thread pool, keep-alive, heap, shutdown, CPU profile). Name the incident, then fix it in a copy of your own.',
  flags: {
    ...COMMON_FLAGS,
    seed: {
      type: 'string',
      valueName: 'n',
      description:
        'picks the incident without naming it (the same seed, the same incident); without any of these flags, a random seed',
    },
    name: {
      type: 'string',
      valueName: 'incident',
      description: `your diagnosis of a --seed run: ${INCIDENT_NAMES.join(', ')}; in a terminal you are asked after the table instead`,
    },
    incident: {
      type: 'string',
      valueName: 'name',
      description: `plant this incident, named: ${INCIDENT_NAMES.join(', ')}`,
    },
    mine: {
      type: 'string',
      valueName: 'name',
      description:
        "measure your fix: exercises/incidents/<name>.ts (copied from the planted handler on first use; edit it, then run this again); its answers are compared with a healthy service's first, then every line must read healthy (expected-output/fixed/incident.txt)",
    },
    handlers: {
      type: 'string',
      valueName: 'file.ts[,file.ts]',
      description:
        'measure the handlers in these files over the healthy ones, later files over earlier (servers/exercises/lesson-10/fixed/<name>.ts: the reference fixes)',
    },
  },
  epilogue:
    'Examples:\n' +
    '  make incident                       a random incident; name it when asked\n' +
    '  make incident SEED=7 NAME=pool      incident #7, named pool\n' +
    '  make incident-fix NAME=pool         your fix of pool, measured (copied to exercises/incidents/pool.ts first)\n' +
    'The decision table that names an incident from its measures is in lessons/10-diagnosis.md.',
});

type Subject =
  | { kind: 'planted'; incident: IncidentName; seed?: number }
  /** `file`: one handlers file, or several joined by commas (the server lays them over each other in order). */
  | { kind: 'handlers'; file: string; fixes?: IncidentName };

interface Options {
  subject: Subject;
  name: IncidentName | undefined;
}

function incidentName(flag: string, raw: string): IncidentName {
  if ((INCIDENT_NAMES as readonly string[]).includes(raw)) return raw as IncidentName;
  throw new KitError('KIT_ERR_USAGE', `--${flag} must be one of ${INCIDENT_NAMES.join(', ')}; got '${raw}'`);
}

function options(flags: Record<string, string | boolean | undefined>): Options {
  const given = (['seed', 'incident', 'mine', 'handlers'] as const).filter((f) => flags[f] !== undefined);
  if (given.length > 1)
    throw new KitError('KIT_ERR_USAGE', `--${given[0]} and --${given[1]} pick two different servers; give one`);
  if (flags.name !== undefined && flags.incident !== undefined)
    throw new KitError('KIT_ERR_USAGE', '--name goes with --seed: with --incident the incident is already named');
  const name = flags.name === undefined ? undefined : incidentName('name', String(flags.name));
  if (typeof flags.incident === 'string')
    return { subject: { kind: 'planted', incident: incidentName('incident', flags.incident) }, name };
  if (typeof flags.mine === 'string') {
    const fixes = incidentName('mine', flags.mine);
    return { subject: { kind: 'handlers', file: studentFix(INCIDENT_EXERCISES[fixes]).file, fixes }, name };
  }
  if (typeof flags.handlers === 'string') {
    const files = flags.handlers.split(',').filter(Boolean);
    const missing = files.find((f) => !existsSync(f));
    if (missing !== undefined || files.length === 0)
      throw new KitError('KIT_ERR_USAGE', `--handlers: no file ${missing ?? flags.handlers}`);
    return { subject: { kind: 'handlers', file: files.map((f) => path.resolve(f)).join(',') }, name };
  }
  const seed = intFlag('seed', flags.seed as string | undefined, 1, 999_999, 1 + Math.floor(Math.random() * 999));
  return { subject: { kind: 'planted', incident: seedIncident(seed), seed }, name };
}

async function run({ lab, progress, options: o, quick, machine }: RunContext<Options>): Promise<IncidentResult> {
  const s = o.subject;
  const args = s.kind === 'planted' ? ['--incident', s.incident] : ['--handlers', s.file];
  const measured = await runBattery(lab, progress, args, quick);
  const subject =
    s.kind === 'planted'
      ? { planted: s.incident, ...(s.seed ? { seed: s.seed } : {}) }
      : {
          handlers: s.file
            .split(',')
            .map((f) => path.relative(ROOT, f))
            .join(', '),
        };
  return { machine, subject, ...measured };
}

/** After the table of a --seed run: the student's name for the incident, checked. */
async function conclude(r: IncidentResult, o: Options, io: Io): Promise<number | undefined> {
  if (o.subject.kind !== 'planted' || o.subject.seed === undefined) return undefined;
  const seed = o.subject.seed;
  const stdin = (io.stdin ?? process.stdin) as NodeJS.ReadStream;
  let guess = o.name;
  if (!guess && !stdin.isTTY) {
    io.stdout.write(
      `\nWhich incident is #${seed}? Its shape lines are shown once you name it: make incident SEED=${seed} NAME=<${INCIDENT_NAMES.join('|')}>\n`,
    );
    return undefined;
  }
  if (!guess)
    io.stdout.write(
      `\nWhich phase reads unlike a healthy service? The decision table in lessons/10-diagnosis.md names its cause.`,
    );
  for (let tries = 0; tries < 3; tries++) {
    guess ??= incidentName(
      'name',
      await askLine(`\nWhich incident is #${seed}? (${INCIDENT_NAMES.join(', ')}): `, INCIDENT_NAMES, stdin, io.stdout),
    );
    const verdict = nameVerdict(o.subject.incident, guess, shape(r));
    io.stdout.write(verdict.text + '\n');
    if (verdict.right) return 0;
    if (o.name) return 1;
    guess = undefined;
  }
  io.stdout.write(
    `It was ${o.subject.incident}: ${SYMPTOMS[o.subject.incident].line} reads ${SYMPTOMS[o.subject.incident].symptom}.\n`,
  );
  return 1;
}

export const experiment = defineExperiment({
  name: 'incident',
  command,
  options,
  run,
  report: { render, shape, hints, measures, predictions, examples },
  // A fix (--mine) or a handlers file (--handlers): its answers first, then a healthy service's lines.
  exercise: (o: Options) =>
    o.subject.kind !== 'handlers'
      ? undefined
      : o.subject.fixes
        ? studentFix(INCIDENT_EXERCISES[o.subject.fixes])
        : handlersCheck(o.subject.file),
  expected: (o: Options) =>
    o.subject.kind === 'handlers'
      ? undefined
      : {
          file: path.join(ROOT, 'expected-output', 'incident', `${o.subject.incident}.txt`),
          label:
            o.subject.seed === undefined
              ? `expected-output/incident/${o.subject.incident}.txt`
              : `the expected lines of incident #${o.subject.seed}`,
          // A seeded incident's lines would name it: they are shown once it is named (conclude).
          hideComparison: o.subject.seed !== undefined,
        },
  conclude,
});

await runIfEntry(import.meta, experiment);
