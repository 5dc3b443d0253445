/**
 * Lesson 9 · stages: the life of one request, stage by stage, on one clock.
 *
 * Starts the stage-stamping loan service (servers/stages.ts) and, in five parts, sends requests
 * whose stages both sides timestamp: fresh against kept-alive connections; directly, through the
 * kit's balancer and through nginx; a light loan behind a heavy scrypt on the event loop and on
 * the thread pool; a large export to a slow reader, with and without backpressure; an upload
 * over the body limit, checked early and late. Prints a stage table and a waterfall per part.
 */
import { randomBytes } from 'node:crypto';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { COST_FLAG, heavyCost } from './lib/harness/costs.ts';
import { EXPORT_EXERCISE, studentFix } from './lib/exercise/specs.ts';
import {
  blockedPart,
  bodyLimitPart,
  keepAlivePart,
  proxyPart,
  slowReaderPart,
  type PartContext,
  type PartSettings,
} from './lib/load/stage-parts.ts';
import { oneConnection, sendFresh, StageClient } from './lib/load/stage-client.ts';
import { DEFAULT_BODY_LIMIT } from '../servers/lib/stages/routes.ts';
import { PARTS, type PartName, type StagesPart, type StagesResult } from '../results/stages/report.ts';
import { hints, shape } from '../results/stages/shape.ts';
import { render } from '../results/stages/render.ts';
import { measures, notShown, predictions } from '../results/stages/predictions.ts';

/**
 * The slow reader's pace, MiB/s: half a second for the 32 MiB export, several times the server's
 * time to make it (a 64 KiB chunk per loop turn: 50-70 ms here), so the kernel's socket buffers
 * fill and stay full. At 128 MiB/s the waits for 'drain' were 44 to 80 % of the server's time in
 * 60 --quick runs, too close to the shape's half.
 */
const READ_MIB_S = 64;

const command = defineCommand({
  usage: 'npx tsx measure/stages.ts [flags]',
  summary:
    'Timestamps every stage of a request on both sides (connect, accept, first bytes read, headers parsed, ' +
    'handler, finish, close; µs on one clock) in five parts: keep-alive, proxy, blocked, slow-reader and ' +
    'body-limit. Prints a stage table and a waterfall per request, and checks the shape.',
  flags: {
    ...COMMON_FLAGS,
    cost: COST_FLAG,
    part: {
      type: 'string',
      valueName: 'names',
      description: `run only these parts, comma-separated: ${PARTS.join(', ')}`,
    },
    'read-mib-s': {
      type: 'string',
      valueName: 'n',
      description: "the slow reader's pace, MiB/s (slow-reader part)",
      default: String(READ_MIB_S),
    },
    mine: {
      type: 'boolean',
      description:
        "the lesson's exercise: the slow-reader part, its honouring export run by your exercises/lesson-9/export.ts (copied on first use); the bytes its readers get are checked first, and once it waits for the reader its backpressure lines read as the lesson's (expected-output/fixed/stages.txt)",
    },
  },
  epilogue: 'Example: npx tsx measure/stages.ts --quick --part blocked,body-limit',
});

interface Options {
  cost: string;
  parts: PartName[];
  settings: PartSettings;
  /** With --mine: the student's copy of servers/exercises/lesson-9/export.ts. */
  mine: string | undefined;
}

const RUNNERS: Record<PartName, (ctx: PartContext) => Promise<StagesPart>> = {
  'keep-alive': keepAlivePart,
  proxy: proxyPart,
  blocked: blockedPart,
  'slow-reader': slowReaderPart,
  'body-limit': bodyLimitPart,
};

/** The --part flag as part names, in the lesson's order; KIT_ERR_USAGE for a name that is none. */
function partsFlag(raw: string | undefined): PartName[] {
  if (raw === undefined) return [...PARTS];
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.find((n) => !(PARTS as readonly string[]).includes(n));
  if (bad !== undefined || names.length === 0)
    throw new KitError('KIT_ERR_USAGE', `--part: '${bad ?? raw}' is not a part; the parts are ${PARTS.join(', ')}`);
  return PARTS.filter((p) => names.includes(p));
}

/** The parts to run: the slow reader alone with --mine (the part the exercise changes), else --part's. */
function mineParts(mine: boolean | undefined, raw: string | undefined): PartName[] {
  if (mine && raw !== undefined)
    throw new KitError('KIT_ERR_USAGE', '--mine runs the slow-reader part alone: leave out --part');
  return mine ? ['slow-reader'] : partsFlag(raw);
}

/** First requests pay for JIT compilation and for undici's and the server's first sockets. */
async function warmUp(ctx: PartContext): Promise<void> {
  ctx.progress.step('warming up: 40 loans on one connection, 5 on fresh ones');
  const origin = ctx.server.url;
  const conn = oneConnection(origin);
  const body = JSON.stringify({ book: 1, member: 'warm' });
  for (let i = 0; i < 40; i++)
    await ctx.client.send(conn, origin, `/loans?sid=${ctx.nextId()}`, { method: 'POST', body });
  await conn.close();
  for (let i = 0; i < 5; i++)
    await sendFresh(ctx.client, origin, `/loans?sid=${ctx.nextId()}`, { method: 'POST', body });
}

async function run({ lab, progress, options, port, machine, quick }: RunContext<Options>): Promise<StagesResult> {
  progress.step('starting the stage-stamping loan service');
  const server = await lab.start({
    server: 'stages',
    args: [
      '--port',
      String(port),
      '--cost',
      options.cost,
      '--body-limit',
      String(DEFAULT_BODY_LIMIT),
      ...(options.mine ? ['--export', options.mine] : []),
    ],
  });
  const client = new StageClient();
  const prefix = randomBytes(3).toString('hex');
  let n = 0;
  const ctx: PartContext = {
    lab,
    progress,
    client,
    server,
    settings: options.settings,
    nextId: () => `${prefix}-${++n}`,
  };
  try {
    await warmUp(ctx);
    const parts: StagesPart[] = [];
    for (const name of options.parts) parts.push(await RUNNERS[name](ctx));
    const s = options.settings;
    return {
      machine,
      quick,
      heavyCost: options.cost,
      offsetMs: s.offsetMs,
      readBytesPerS: s.readBytesPerS,
      exportBytes: s.exportMb * 1024 ** 2,
      uploadBytes: s.uploadBytes,
      bodyLimitBytes: DEFAULT_BODY_LIMIT,
      parts,
      ...(options.mine ? { mine: true } : {}),
    };
  } finally {
    client.close();
  }
}

export const experiment = defineExperiment({
  name: 'stages',
  command,
  options: (flags) => ({
    cost: heavyCost(flags.cost, flags.quick),
    parts: mineParts(flags.mine, flags.part),
    mine: flags.mine ? studentFix(EXPORT_EXERCISE).file : undefined,
    settings: {
      requests: flags.quick ? 8 : 12,
      offsetMs: 50,
      exportMb: 32,
      readBytesPerS: intFlag('read-mib-s', flags['read-mib-s'], 1, 100_000, READ_MIB_S) * 1024 ** 2,
      uploadBytes: 32 * 1024 ** 2,
    },
  }),
  run,
  report: { render, shape, hints, notShown, measures, predictions },
  exercise: (o: Options) => (o.mine ? studentFix(EXPORT_EXERCISE) : undefined),
});

await runIfEntry(import.meta, experiment);
