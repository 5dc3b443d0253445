// make check-exercise: each exercise check passes on a result that shows the exercise's finding and
// fails on one that does not; each names the command its lesson text gives; bad or word-answered
// exercises are usage errors before anything runs; and a real run of lesson 3's exercise 2 checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../measure/check-exercise.ts';
import { EXERCISES, findExercise, lessonExercises } from '../measure/lib/exercises.ts';
import { failOnWarnings, runMainInProcess } from './helpers.ts';

failOnWarnings();

const cluster = (workers: number, byPid: Record<string, number>, keptOn: string[], landed = [4, 4, 4, 4]) => ({
  workers,
  fresh: { requests: landed.reduce((a, b) => a + b, 0), byPid: Object.fromEntries(landed.map((n, i) => [`p${i}`, n])) },
  counters: { total: Object.values(byPid).reduce((a, b) => a + b, 0), byPid },
  keepAlive: { requests: 30, byPid: Object.fromEntries(keptOn.map((p) => [p, 30 / keptOn.length])), reusedSocket: 29 },
});
const degraded = (two: number, least: number, twoChoices?: string) => ({
  ...(twoChoices ? { twoChoices } : {}),
  policies: [
    { policy: 'round-robin', p95: 160 },
    { policy: 'least-connections', p95: least },
    { policy: 'power-of-two-choices', p95: two },
  ],
});
const failover = (timeout: number, medianMs: number, count = 8) => ({ settings: { responseTimeoutMs: timeout }, runs: [{ name: 'sigstop', slow: { count, medianMs, maxMs: medianMs } }] });

test('each check holds on a result with the finding and fails on one without it', () => {
  const cases: [string, unknown, unknown][] = [
    ['3.2', cluster(4, { a: 10, b: 12, c: 9, d: 11 }, ['a']), cluster(4, { a: 42 }, ['a', 'b'])],
    ['4.1', degraded(155, 1.4, 'with-replacement'), degraded(0.8, 1.1, 'with-replacement')],
    ['4.6', failover(5000, 5100), failover(5000, 1600)],
  ];
  assert.deepEqual(cases.map((c) => c[0]).sort(), EXERCISES.map((e) => `${e.lesson}.${e.n}`).sort(), 'every check has its cases');
  for (const [id, shows, lacks] of cases) {
    const [lesson, n] = id.split('.').map(Number) as [number, number];
    const e = findExercise(lesson, n)!;
    assert.equal(e.check(shows).held, true, `${id} holds: ${e.check(shows).saw.join('; ')}`);
    assert.equal(e.check(lacks).held, false, `${id} fails: ${e.check(lacks).saw.join('; ')}`);
  }
  assert.equal(findExercise(3, 2)!.check(cluster(4, { a: 10, b: 12 }, ['a'], [6, 2, 4, 4])).held, false, 'fresh connections not 4 on every worker');
  assert.equal(findExercise(4, 1)!.check(degraded(155, 1.4)).held, false, 'a run without --two-choices is not the exercise');
  assert.equal(findExercise(4, 6)!.check(failover(5000, 0, 0)).held, false, 'no slow request at all');
});

test('each check runs the command its exercise text gives', () => {
  for (const e of EXERCISES) {
    const item = lessonExercises(e.lesson).get(e.n);
    assert.equal(item?.title, e.title, `lesson ${e.lesson} has exercise ${e.n}, "${e.title}"`);
    assert.ok(item!.text.replace(/\s+/g, ' ').includes(`measure/${e.experiment}.ts ${e.args.join(' ')}`), `exercise ${e.lesson}.${e.n} gives: ${e.experiment} ${e.args.join(' ')}`);
  }
});

test('usage errors before anything runs: no flags, an exercise past the last, one answered in words', async () => {
  for (const [args, message] of [
    [[], /--lesson and --exercise are both needed/],
    [['--lesson', '4', '--exercise', '99'], /lesson 4 has \d+ exercises/],
    [['--lesson', '4', '--exercise', '2'], /exercise 4\.2 has no run to check.*instructors\/lesson-4\.md/],
    [['--lesson', '0', '--exercise', '1'], /--lesson must be from 1/],
  ] as const) {
    const r = await runMainInProcess(main, [...args]);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr + r.stdout, /started /);
  }
});

test('a real run: lesson 3, exercise 2 (cluster --workers 4) shows its finding', async () => {
  const r = await runMainInProcess(main, ['--lesson', '3', '--exercise', '2', '--quick']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /running: npx tsx measure\/cluster\.ts --workers 4 --quick --json/);
  assert.match(r.stdout, /4 workers; 16 loans on fresh connections landed 4\/4\/4\/4/);
  assert.match(r.stdout, /✓ the run shows it/);
});
