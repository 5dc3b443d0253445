// Proves lesson 10's incidents on real processes: each planted incident (measure/incident.ts
// --incident <name> --quick) prints exactly expected-output/incident/<name>.txt, where its own
// symptom line differs from a healthy service's; the reference fixes (servers/exercises/lesson-10/fixed/),
// all in one server, print exactly expected-output/incident.txt; and the student's loop: `--mine`
// copies the planted handler, fails on the unedited copy, and holds once the copy holds the fix.
// A seeded incident names nothing before the student does, and the name is checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { INCIDENT_NAMES } from '../../results/incident/result.ts';
import { seedIncident } from '../../results/incident/naming.ts';
import { assertShapeOutput, expectedShape, failOnWarnings, ROOT, runScript } from '../helpers.ts';

failOnWarnings();

for (const name of INCIDENT_NAMES) {
  test(`incident ${name}: planted, its symptom line shows`, async () => {
    const planted = await runScript('measure/incident.ts', ['--quick', '--shape', '--incident', name]);
    assert.deepEqual(planted.stdout.trim().split('\n'), expectedShape(`incident/${name}`), planted.stderr);
    assert.equal(planted.code, 0, planted.stderr);
  });
}

// Each phase watches one mechanism and each fix replaces one handler, so the six fixes laid over
// each other in one run check each fix's line as six runs would, in a sixth of the time.
test("the six reference fixes, in one server: a healthy service's lines", async () => {
  const fixes = INCIDENT_NAMES.map((name) => `servers/exercises/lesson-10/fixed/${name}.ts`).join(',');
  const fixed = await runScript('measure/incident.ts', ['--quick', '--shape', '--handlers', fixes]);
  assertShapeOutput(fixed.stdout, 'incident', fixed.stderr);
  assert.equal(fixed.code, 0, fixed.stderr);
});

test('--mine: the unedited copy fails its symptom line, the copy with the fix holds', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-exercises-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { NSL_EXERCISES_DIR: dir };
  const copy = path.join(dir, 'incidents', 'cache.ts');
  const unedited = await runScript('measure/incident.ts', ['--quick', '--shape', '--mine', 'cache'], env);
  assert.ok(existsSync(copy), unedited.stderr);
  assert.match(unedited.stderr, /copied the planted handler to .*cache\.ts: edit it, then run this again/);
  assert.equal(unedited.code, 1, unedited.stderr);
  assert.ok(unedited.stdout.includes('incident  heap-under-new-pages  grows'), unedited.stdout);
  // The student's edit: the reference fix, with its import pointing back at the kit as the copy's does.
  const fix = readFileSync(path.join(ROOT, 'servers/exercises/lesson-10/fixed/cache.ts'), 'utf8');
  const types = /from '([^']*types\.ts)'/.exec(readFileSync(copy, 'utf8'))![1]!;
  writeFileSync(copy, fix.replace("from '../types.ts'", `from '${types}'`));
  const fixed = await runScript('measure/incident.ts', ['--quick', '--shape', '--mine', 'cache'], env);
  assertShapeOutput(fixed.stdout, 'incident', fixed.stderr);
  assert.equal(fixed.code, 0, fixed.stderr);
});

test('a seeded incident: nothing names it before the student does, and the name is checked', async () => {
  assert.equal(seedIncident(5), 'cache', 'seed 5 plants cache');
  const r = await runScript('measure/incident.ts', ['--quick', '--seed', '5', '--name', 'cache']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /Lesson 10 · incident: incident #5 \(which one is for you to say\)/);
  assert.match(r.stdout, /Heaviest functions by self time, new pages: /);
  // No shape lines and no handler file in the profile before the name.
  assert.doesNotMatch(
    r.stdout,
    /Shape, compared with|incident {2}heap-under-new-pages|cache\.ts|incidents\/|lesson-10\//,
    r.stdout,
  );
  assert.match(
    r.stdout,
    /Right: it is cache \(reported in imgproxy\/imgproxy-node#10\): heap-under-new-pages reads grows, where a healthy service's reads flat/,
  );
});
