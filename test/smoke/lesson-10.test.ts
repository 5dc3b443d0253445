// Lesson 10's run in the fast tier, on real processes: incident #5 (a seed, so the incident is not
// named) in --quick mode with --predict, named by the student as `cache`. The table shows the
// measures and nothing that names the incident (no shape lines, no handler file in the profile),
// every prediction is settled by a measure, the name is checked, and the exit code says the shape held. Every other incident, each reference
// fix and the student's copy are run in test/e2e/incident.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seedIncident } from '../../results/incident/naming.ts';
import { failOnWarnings, predictFor, runScript } from '../helpers.ts';

failOnWarnings();

test('lesson 10: incident --quick --seed 5 --name cache --predict: measured, holds, named right', async (t) => {
  assert.equal(seedIncident(5), 'cache', 'seed 5 plants cache');
  const predict = await predictFor(t, 'incident');
  const r = await runScript('measure/incident.ts', ['--quick', '--seed', '5', '--name', 'cache', ...predict.args]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /Lesson 10 · incident: incident #5 \(which one is for you to say\)/);
  // Before the name, nothing names the incident: no shape lines, no handler file in the profile.
  assert.doesNotMatch(
    r.stdout,
    /Shape, compared with|incident {2}heap-under-new-pages|cache\.ts|incidents\//,
    r.stdout,
  );
  assert.match(r.stdout, /Heaviest functions by self time, new pages: /);
  assert.match(r.stdout, new RegExp(`Your predictions: \\d+ of ${predict.questions} right`));
  assert.doesNotMatch(r.stdout, /not in this run/);
  assert.match(
    r.stdout,
    /Right: it is cache \(reported in imgproxy\/imgproxy-node#10\): heap-under-new-pages reads grows, where a healthy service's reads flat/,
  );
});
