// Proves what a student on native Windows meets, with the platform injected (NSL_PLATFORM=win32,
// read by lib/platform.ts only): every experiment, the lesson runner, fidelity and the Traffic Lab
// benchmark stop before they start anything, with one KIT_ERR_NEEDS_WSL line (exit 3) that says to
// use WSL2; the simulator, compare and the roll-up still work. The arguments carry a usage mistake
// that is checked later: were the Windows check gone, the call would stop there (exit 2) and the
// test fail, rather than run an experiment in the unit tier. The Traffic Lab's live mode is
// checked on its server in test/integration/native-windows.test.ts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ERROR_CODES } from '../../lib/errors.ts';
import { kitPlatform } from '../../lib/platform.ts';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { main as lessonMain } from '../../measure/lesson.ts';
import { main as fidelityMain } from '../../measure/fidelity.ts';
import { main as compareMain } from '../../measure/compare.ts';
import { main as rollupMain } from '../../measure/rollup.ts';
import { main as simMain } from '../../sim/run.ts';
import { main as benchMain } from '../../web/bench.ts';
import { shape as blockingShape } from '../../results/blocking/report.ts';
import { blockingResult, MACHINE } from '../fixtures/results.ts';
import { failOnWarnings, onWindowsInProcess, runMainInProcess, usageInProcess, type ScriptRun } from '../helpers.ts';

failOnWarnings();

/**
 * A test body run with NSL_PLATFORM=win32, restored after it: a test's own setting, not the file's
 * (in hooks), because the unit tests share one process (test/run-unit.ts).
 */
function onWindows(body: (t: TestContext) => void | Promise<void>): (t: TestContext) => Promise<void> {
  return async (t) => {
    const saved = process.env.NSL_PLATFORM;
    process.env.NSL_PLATFORM = 'win32';
    try {
      await body(t);
    } finally {
      if (saved === undefined) delete process.env.NSL_PLATFORM;
      else process.env.NSL_PLATFORM = saved;
    }
  };
}

/** One line, exit 3 (the registry's), naming WSL2; nothing started. */
function assertRefused(r: ScriptRun, what: string): void {
  assert.equal(r.code, ERROR_CODES.KIT_ERR_NEEDS_WSL.exit, `${what}: ${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `${what}: ${r.stderr}`);
  assert.match(lines[0]!, /^error KIT_ERR_NEEDS_WSL: .*native Windows.*; run the kit inside WSL2/, what);
  assert.doesNotMatch(r.stderr + r.stdout, /^started /m, what);
}

test(
  'the platform is injected for these tests only through NSL_PLATFORM',
  onWindows(() => {
    assert.equal(kitPlatform(), 'win32');
    assert.equal(kitPlatform({}), process.platform);
  }),
);

test(
  'every experiment stops at once on native Windows, with one line saying to use WSL2',
  onWindows(async () => {
    const names = [...new Set(LESSONS.flatMap((l) => l.experiments))];
    assert.ok(names.length >= 19, `${names.length} experiments`);
    for (const name of names) assertRefused(await onWindowsInProcess(name, ['--port', '99999']), name);
  }),
);

test(
  '--help still works there',
  onWindows(async () => {
    const r = await usageInProcess('ceiling', ['--help']);
    assert.match(r.stdout, /Usage/i);
  }),
);

test(
  'the lesson runner, fidelity and the Traffic Lab benchmark stop the same way',
  onWindows(async () => {
    assertRefused(await runMainInProcess(lessonMain, ['3', '--port', '99999']), 'lesson 3');
    assertRefused(await runMainInProcess(lessonMain, ['all', '--port', '99999']), 'every lesson');
    assertRefused(await runMainInProcess(fidelityMain, ['--runs', '0']), 'fidelity');
    assertRefused(await runMainInProcess(benchMain, ['--part', 'nope']), 'bench');
  }),
);

test(
  'the simulator, compare and the roll-up start no server and work there',
  onWindows(async (t) => {
    const sim = await runMainInProcess(simMain, ['--scenario', 'degraded', '--requests', '20000']);
    assert.equal(sim.code, 0, sim.stderr);
    assert.match(sim.stdout, /round-robin/);

    const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-win-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const result = blockingResult();
    const shape = blockingShape(result);
    writeFileSync(path.join(dir, 'ann.txt'), shape.join('\n') + '\n');
    const compared = await runMainInProcess(compareMain, [path.join(dir, 'ann.txt')]);
    assert.equal(compared.code, 0, compared.stdout + compared.stderr);

    writeFileSync(
      path.join(dir, 'ann.blocking.json'),
      JSON.stringify({
        experiment: 'blocking',
        result: { ...result, machine: MACHINE },
        shape,
        holds: true,
        caveats: [],
        notShown: [],
        measures: [],
      }),
    );
    const rolled = await runMainInProcess(rollupMain, [dir]);
    assert.equal(rolled.code, 0, rolled.stdout + rolled.stderr);
    assert.match(rolled.stdout, /1 student\(s\), 1 run\(s\)/);
  }),
);
