/**
 * A steady background load for trying the kit on a "busy laptop": keeps a given share of one core
 * busy (a browser tab, an editor or a video call takes a fifth of a core or more) for a bounded
 * time, in another terminal, while a lesson runs. Each period of PERIOD_MS it spins for
 * `cores × PERIOD_MS`, then blocks without using CPU for the rest (Atomics.wait), so the share is
 * steady at the scale of a measured step. Instructors use it to see which findings a busy machine
 * still shows (instructors/busy-laptops.md).
 */
import { performance } from 'node:perf_hooks';
import { defineCommand } from '../lib/cli.ts';
import { EXIT, KitError } from '../lib/errors.ts';
import { commandMain, runIfMain } from '../lib/entry.ts';

const command = defineCommand({
  usage: 'npx tsx measure/background-load.ts --cores <share> [--seconds <n>]',
  summary:
    "Keeps a share of one core busy, steadily, for a bounded time: a stand-in for the other programs on a student's laptop. Ctrl-C stops it.",
  flags: {
    cores: {
      type: 'string',
      valueName: 'share',
      description: 'the share of one core to keep busy, 0.05 to 1 (e.g. 0.25)',
    },
    seconds: { type: 'string', valueName: 'n', description: 'stop after this long, 1 to 3600', default: '600' },
  },
  epilogue:
    'Example, in a second terminal: npx tsx measure/background-load.ts --cores 0.25 --seconds 900; then make lessons ARGS=--quick in the first.',
});

/** One busy-then-idle cycle, ms: short beside a measured step (0.5 s or more), long beside the scheduler's tick. */
const PERIOD_MS = 20;

/** Reads a number flag from `min` to `max`; KIT_ERR_USAGE naming the flag otherwise. */
function numberFlag(name: string, raw: string | undefined, min: number, max: number): number {
  const n = Number(raw);
  if (raw === undefined || raw.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `--${name} must be a number from ${min} to ${max}; got ${raw === undefined ? 'nothing' : `'${raw}'`}`,
    );
  }
  return n;
}

/** Spins for `cores × PERIOD_MS` and blocks for the rest of each period, until `seconds` have passed. */
function burn(cores: number, seconds: number): void {
  const idle = new Int32Array(new SharedArrayBuffer(4));
  const end = performance.now() + seconds * 1000;
  for (let start = performance.now(); start < end; start += PERIOD_MS) {
    while (performance.now() < start + cores * PERIOD_MS);
    const rest = start + PERIOD_MS - performance.now();
    if (rest > 0) Atomics.wait(idle, 0, 0, rest);
  }
}

export const main = commandMain(command, async (parsed, io) => {
  const cores = numberFlag('cores', parsed.flags.cores, 0.05, 1);
  const seconds = numberFlag('seconds', parsed.flags.seconds, 1, 3600);
  io.stderr.write(`background load: ${cores} of a core busy for ${seconds} s (pid ${process.pid}); Ctrl-C stops it\n`);
  burn(cores, seconds);
  return EXIT.holds;
});

await runIfMain(import.meta, main);
