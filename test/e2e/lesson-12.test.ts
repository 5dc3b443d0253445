// Proves lesson 12 on real processes: a run killed outright (SIGKILL) leaves its namespace behind,
// and the next run's start sweeps it; `measure/network.ts --quick --shape` as root prints exactly
// its expected shape through a real namespace and leaves no namespace, veth or nft table behind;
// with --no-kernel (what a student without root gets) the loss, timeout and hedge lines are not
// shown and say why while the rest hold; and a flag out of range exits 2, names the flag and its
// range, and makes nothing in the kernel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { kitNamespaces, netnsUnavailable } from '../../servers/lib/network/netns.ts';
import { CANNOT_SHOW, NOT_SHOWN_PREFIX, parseExpected } from '../../results/report/shape.ts';
import {
  assertShapeOutput,
  classSave,
  expectedShape,
  failOnWarnings,
  ROOT,
  runScript,
  spawnOwned,
  toolSkip,
} from '../helpers.ts';

failOnWarnings();

const SCRIPT = 'measure/network.ts';
const why = await netnsUnavailable();
// A missing tool fails where tools are required (CI installs them); no root skips, saying so.
const skip = why && /^needs (ip|nft|tc) /.test(why) ? toolSkip('nft', why) : (why ?? false);

/** What the kit left in the kernel: namespaces, host ends of veth pairs, and nft tables on the host. */
function leftovers(): string[] {
  const links = execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => /: nslh\d+x\d+[@:]/.test(l));
  const tables = execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('nsl'));
  return [...links, ...tables];
}

test('a run killed by SIGKILL leaves its namespace, and the next start sweeps it', { skip }, async (t) => {
  const child = spawnOwned(t, process.execPath, ['--import', 'tsx', path.join(ROOT, SCRIPT), '--quick'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // The first part's progress line: by then the namespace is made and its servers are up.
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (c) => reject(new Error(`the run exited (${c}) before its first part`)));
    createInterface({ input: child.stderr! }).on('line', (l) => / a\. /.test(l) && resolve());
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('close', r));
  assert.ok((await kitNamespaces()).includes(`nsl-${child.pid}-0`), 'the killed run left its namespace');
  const r = await runScript(SCRIPT, ['--quick', '--shape', ...classSave('lb-builtin')]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assertShapeOutput(r.stdout, 'network', r.stderr);
  assert.deepEqual(await kitNamespaces(), [], 'no kit namespace after the next run');
  assert.deepEqual(leftovers(), [], 'no veth or nft table after it');
});

test('network --quick --no-kernel: the proxy alone; the loss lines say why they are not shown', async () => {
  const r = await runScript(SCRIPT, ['--quick', '--shape', '--no-kernel']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const kernel = /^network {2}(loss|timeout|hedged)/;
  const got = parseExpected(r.stdout);
  assert.deepEqual(
    got.filter((l) => !kernel.test(l)),
    expectedShape('network').filter((l) => !kernel.test(l)),
  );
  const hidden = got.filter((l) => kernel.test(l));
  assert.equal(hidden.length, 11);
  for (const l of hidden) assert.ok(l.endsWith(CANNOT_SHOW), l);
  assert.match(r.stdout, new RegExp(`^${NOT_SHOWN_PREFIX}the loss, timeout and hedge rows: `, 'm'));
});

test('network: loss, latency, jitter or bandwidth out of range exits 2, names the flag, makes nothing', async () => {
  const before = why ? [] : await kitNamespaces();
  for (const [args, says] of [
    [['--loss', '60'], /--loss is a number from 0 to 50; got '60'/],
    [['--latency', '3000'], /--latency is a number from 0 to 2000; got '3000'/],
    [['--latency', '5', '--jitter', '6'], /--jitter is at most the latency \(5 ms\); got '6'/],
    [['--bandwidth', '0'], /--bandwidth is a number above 0 to 1000; got '0'/],
  ] as const) {
    const r = await runScript(SCRIPT, [...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, says, args[0]);
    assert.doesNotMatch(r.stderr, /started /, `${args.join(' ')} started nothing`);
  }
  if (!why) assert.deepEqual(await kitNamespaces(), before, 'no namespace was made');
});
