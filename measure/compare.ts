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
import { defineCommand, helpText, parseFlags } from '../lib/cli.ts';
import { describeError, KitError } from '../lib/errors.ts';
import { compareText, loadExpected, renderVerdict } from './lib/compare.ts';
import { EXIT } from './lib/experiment.ts';
import { colorEnabled } from './lib/output.ts';

const command = defineCommand({
  usage: 'npx tsx measure/compare.ts <file>... [--experiment <name>]',
  summary:
    'Compares one or more --shape files (one experiment\'s, or a whole lesson\'s) with expected-output/: which lines held, which did not, ' +
    'and which this machine could not show, with the reason the run gave. A line not shown counts as held.',
  flags: {
    experiment: { type: 'string', valueName: 'name', description: 'compare every line with this experiment (default: found from each line\'s key)' },
  },
  epilogue: 'Example: npx tsx measure/cluster.ts --shape > alice.txt; npx tsx measure/compare.ts alice.txt\nExit: 0 every file held, 1 one did not, 2 usage error.',
  positionals: true,
});

async function main(argv: string[]): Promise<number> {
  const parsed = parseFlags(command, argv);
  if (parsed.help) {
    process.stdout.write(helpText(command));
    return EXIT.holds;
  }
  const only = parsed.flags.experiment;
  const expected = loadExpected();
  if (only !== undefined && !expected.has(only)) throw new KitError('KIT_ERR_USAGE', `--experiment: no expected file for '${only}'; there are ${[...expected.keys()].join(', ')}`);
  const targets = parsed.positionals;
  if (targets.length === 0) throw new KitError('KIT_ERR_USAGE', 'name at least one --shape file to compare', 'run with --help');
  const color = colorEnabled(process.stdout);
  let allHold = true;
  for (const file of targets) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new KitError('KIT_ERR_USAGE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    const v = compareText(file, text, expected, only);
    if (v.experiments.size === 0) throw new KitError('KIT_ERR_USAGE', `${file} holds no shape line of the kit`, 'make it with --shape, e.g. npx tsx measure/cluster.ts --shape > alice.txt');
    process.stdout.write(renderVerdict(v, color));
    allHold &&= v.holds;
  }
  return allHold ? EXIT.holds : EXIT.doesNotHold;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(describeError(err) + '\n');
  process.exitCode = err instanceof KitError && err.code === 'KIT_ERR_USAGE' ? EXIT.usage : EXIT.failed;
}
