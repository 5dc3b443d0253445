/**
 * Compares students' `--shape` files with expected-output/ (`npx tsx measure/compare.ts alice.txt`).
 *
 * A file may hold one experiment's lines or a whole lesson's (`make lesson-3 ARGS=--shape >
 * alice.txt`): each line goes to the experiment whose expected file has its key. A line this
 * machine could not show counts as held, and the file's `# not shown here:` comments say why.
 * Exit 0 when every file held, 1 when one did not, 2 on a usage error (no such file, or a file
 * with no shape line of the kit in it).
 */
import { readFileSync } from 'node:fs';
import { defineCommand } from '../lib/cli.ts';
import { EXIT, KitError } from '../lib/errors.ts';
import { commandMain, runIfMain } from '../lib/entry.ts';
import { compareText, loadExpected, renderVerdict } from './lib/class/compare.ts';
import { colorEnabled } from '../results/report/format.ts';

const command = defineCommand({
  usage: 'npx tsx measure/compare.ts <file>... [--experiment <name>]',
  summary:
    "Compares one or more --shape files (one experiment's, or a whole lesson's) with expected-output/: which lines held, which did not, " +
    'and which this machine could not show, with the reason the run gave. A line not shown counts as held.',
  flags: {
    experiment: {
      type: 'string',
      valueName: 'name',
      description: "compare every line with this experiment (default: found from each line's key)",
    },
  },
  epilogue:
    'Example: npx tsx measure/cluster.ts --shape > alice.txt; npx tsx measure/compare.ts alice.txt\nExit: 0 every file held, 1 one did not, 2 usage error.',
  positionals: true,
});

/** The command: exit 0 when every file held, 1 when one did not; throws KIT_ERR_USAGE. */
export const main = commandMain(command, async (parsed, io) => {
  const only = parsed.flags.experiment;
  const expected = loadExpected();
  if (only !== undefined && !expected.has(only))
    throw new KitError(
      'KIT_ERR_USAGE',
      `--experiment: no expected file for '${only}'; there are ${[...expected.keys()].join(', ')}`,
    );
  const targets = parsed.positionals;
  if (targets.length === 0)
    throw new KitError('KIT_ERR_USAGE', 'name at least one --shape file to compare', 'run with --help');
  const color = colorEnabled(io.stdout);
  let allHold = true;
  for (const file of targets) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new KitError(
        'KIT_ERR_USAGE',
        `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    const v = compareText(file, text, expected, only);
    if (v.experiments.size === 0)
      throw new KitError(
        'KIT_ERR_USAGE',
        `${file} holds no shape line of the kit`,
        'make it with --shape, e.g. npx tsx measure/cluster.ts --shape > alice.txt',
      );
    io.stdout.write(renderVerdict(v, color));
    allHold &&= v.holds;
  }
  return allHold ? EXIT.holds : EXIT.doesNotHold;
});

await runIfMain(import.meta, main);
