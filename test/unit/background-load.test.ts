// Proves measure/background-load.ts's flags: the share of a core and the bound are checked, and a
// mistake is one coded line (exit 2) before any CPU is burnt. What the load does to the lessons is
// measured by hand (instructors/busy-laptops.md): timing it here would share the cores with the
// unit tests that run beside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../measure/background-load.ts';
import { failOnWarnings, runMainInProcess } from '../helpers.ts';

failOnWarnings();

test('background-load: --cores and --seconds are checked; --help works', async () => {
  for (const [args, message] of [
    [[], /--cores must be a number from 0.05 to 1; got nothing/],
    [['--cores', '2'], /--cores must be a number from 0.05 to 1; got '2'/],
    [['--cores', 'lots'], /--cores must be a number/],
    [['--cores', '0.25', '--seconds', '0'], /--seconds must be a number from 1 to 3600; got '0'/],
    [['--cores', '0.25', '--seconds', '99999'], /--seconds must be a number from 1 to 3600/],
  ] as const) {
    const r = await runMainInProcess(main, [...args]);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, /^error KIT_ERR_USAGE: /);
    assert.match(r.stderr, message);
  }
  const help = await runMainInProcess(main, ['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /share of one core/);
});
