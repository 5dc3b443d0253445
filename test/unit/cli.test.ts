// Proves flag parsing, the scrypt cost parser and the coded errors: every user mistake becomes a
// coded error with a one-line message, and --help text lists every flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineCommand, helpText, intFlag, nearestFlag, parseFlags } from '../../lib/cli.ts';
import { assertNodeVersion, describeError, exitCodeFor, KitError } from '../../lib/errors.ts';
import { formatReady, parseReady } from '../../lib/ready.ts';
import { commandMain, runMain } from '../../lib/entry.ts';
import { formatCost, HEAVY_COST, maxmemFor, memoryFor, parseCost } from '../../servers/lib/cpu/scrypt-cost.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();
const spec = defineCommand({
  usage: 'x [flags]',
  summary: 'does x',
  flags: {
    port: { type: 'string', valueName: 'n', description: 'the port', default: '0' },
    quick: { type: 'boolean', description: 'be quick' },
  },
});

test('parseFlags: values, defaults and --help', () => {
  const p = parseFlags(spec, ['--quick']);
  assert.equal(p.help, false);
  if (!p.help) assert.deepEqual({ ...p.flags }, { port: '0', quick: true });
  assert.equal(parseFlags(spec, ['--help']).help, true);
  assert.equal(parseFlags(spec, ['-h']).help, true);
});

test('parseFlags: unknown flags, missing values and stray arguments are KIT_ERR_USAGE', () => {
  for (const argv of [['--bogus'], ['--port'], ['junk']]) {
    assert.throws(
      () => parseFlags(spec, argv),
      (e: unknown) => e instanceof KitError && e.code === 'KIT_ERR_USAGE',
      argv.join(' '),
    );
  }
});

test('a mistyped flag gets a "did you mean"; one far from every flag does not', () => {
  const hint = (argv: string[]) => {
    try {
      parseFlags(spec, argv);
    } catch (e) {
      return (e as KitError).hint;
    }
    return 'no error';
  };
  assert.equal(hint(['--quik']), 'did you mean --quick? (--help lists the flags)');
  assert.equal(hint(['--prot', '1']), 'did you mean --port? (--help lists the flags)');
  assert.equal(hint(['--bogus']), 'run with --help to see the flags');
  assert.equal(nearestFlag('x', ['quick', 'port']), undefined, 'a one-letter name matches nothing');
  assert.equal(nearestFlag('lb', ['lb', 'db']), 'lb');
});

test('commandMain: --help prints the help and exits 0 without running; flags reach the body; a bad flag is exit 2', async () => {
  const out: string[] = [];
  const io = { stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => out.push(t) } };
  let ran: unknown;
  const main = commandMain(spec, async ({ flags, positionals }) => {
    ran = { port: flags.port, quick: flags.quick, positionals };
    return 7;
  });
  assert.equal(await main(['--help'], io), 0);
  assert.equal(ran, undefined, 'the body does not run for --help');
  assert.equal(out.join(''), helpText(spec));
  assert.equal(await main(['--port', '5', '--quick'], io), 7);
  assert.deepEqual(ran, { port: '5', quick: true, positionals: [] });
  out.length = 0;
  assert.equal(await runMain(main, ['--prot', '5'], io), 2);
  assert.match(out.join(''), /KIT_ERR_USAGE.*--prot/);
});

test('intFlag: range and form', () => {
  assert.equal(intFlag('port', '8080', 0, 65535, 0), 8080);
  assert.equal(intFlag('port', undefined, 0, 65535, 7), 7);
  for (const bad of ['abc', '-1', '99999', '1.5', '']) {
    assert.throws(() => intFlag('port', bad, 0, 65535, 0), { code: 'KIT_ERR_USAGE' }, bad);
  }
});

test('helpText lists every flag with its default', () => {
  const text = helpText(spec);
  assert.match(text, /Usage: x \[flags\]/);
  assert.match(text, /--help/);
  assert.match(text, /--port <n> +the port \(default: 0\)/);
  assert.match(text, /--quick +be quick/);
  const optional = helpText(
    defineCommand({
      usage: 'x',
      summary: 'x',
      flags: { predict: { type: 'string', valueName: 'answers.json', valueOptional: true, description: 'p' } },
    }),
  );
  assert.match(optional, /--predict \[answers\.json\] +p/, 'a value that may be left out is in brackets');
});

test('parseCost: accepted forms', () => {
  assert.deepEqual(parseCost('N=2^16,r=8,p=4'), HEAVY_COST);
  assert.deepEqual(parseCost('N=65536,r=8,p=4'), HEAVY_COST);
  assert.deepEqual(parseCost('N=2^16'), HEAVY_COST, 'what is left out comes from the default');
  assert.deepEqual(parseCost('p=1, N=2^10'), { N: 1024, r: 8, p: 1 });
  assert.equal(formatCost(parseCost('N=16384,r=8,p=2')), 'N=2^14,r=8,p=2');
});

test('parseCost: every invalid cost is KIT_ERR_BAD_COST (exit code 2), never a crash', () => {
  for (const bad of [
    '',
    'N=3',
    'N=0',
    'N=2^21',
    'r=0',
    'r=33',
    'p=0',
    'p=65',
    'x=1',
    'N=abc',
    'N=2^20,r=16',
    'garbage',
    'N=2^16;r=8',
  ]) {
    assert.throws(
      () => parseCost(bad),
      (e: unknown) => e instanceof KitError && e.code === 'KIT_ERR_BAD_COST' && exitCodeFor(e) === 2,
      `'${bad}'`,
    );
  }
});

test("scrypt memory: 128·N·r bytes, and maxmem above Node's 32 MiB default for the heavy cost", () => {
  assert.equal(memoryFor({ N: 2 ** 16, r: 8, p: 1 }), 128 * 2 ** 16 * 8 + 128 * 8);
  assert.ok(maxmemFor(HEAVY_COST) > 64 * 1024 * 1024);
  assert.equal(maxmemFor({ N: 2, r: 1, p: 1 }), 32 * 1024 * 1024);
});

test('describeError: one line with the code and the hint', () => {
  const line = describeError(new KitError('KIT_ERR_PORT_IN_USE', 'port 1 is taken', 'pick another'));
  assert.equal(line, 'error KIT_ERR_PORT_IN_USE: port 1 is taken; pick another');
  assert.doesNotMatch(line, /\n/);
  assert.equal(describeError(new Error('boom')), 'error: boom');
});

test('exitCodeFor: the exit code kept with each error code: 2 for usage mistakes, 3 for a failed run or start', () => {
  assert.equal(exitCodeFor(new KitError('KIT_ERR_USAGE', 'x')), 2);
  assert.equal(exitCodeFor(new KitError('KIT_ERR_BAD_COST', 'x')), 2);
  assert.equal(exitCodeFor(new KitError('KIT_ERR_READY_TIMEOUT', 'x')), 3);
  assert.equal(exitCodeFor(new Error('x')), 3);
});

test('assertNodeVersion: Node 18 is too old, 20 and 22 are fine', () => {
  assert.throws(() => assertNodeVersion(20, '18.19.0'), { code: 'KIT_ERR_NODE_TOO_OLD' });
  assert.doesNotThrow(() => assertNodeVersion(20, '20.0.0'));
  assert.doesNotThrow(() => assertNodeVersion(20, '22.1.0'));
});

test('the ready line round-trips, and other lines are not ready lines', () => {
  const l = formatReady('loan-service', 41234, 999);
  assert.deepEqual(parseReady(l), { name: 'loan-service', host: '127.0.0.1', port: 41234, pid: 999 });
  assert.equal(parseReady('worker 5 listening, replacing 4'), undefined);
  // A kit namespace's own address (lesson 12) is one too; any other address is not.
  assert.equal(parseReady(formatReady('toxic-proxy', 7000, 5, '10.213.0.2'))?.host, '10.213.0.2');
  for (const host of ['0.0.0.0', '10.213.0.1', '10.1.0.2', '192.168.1.2'])
    assert.equal(parseReady(formatReady('x', 1, 1, host)), undefined, host);
});
