// The class roll-up of the kit's own runs: `make test-all` points NSL_CLASS_DIR at one folder, and
// every end-to-end run of both tiers saves its --json there (test/helpers.ts classSave), as a
// "student" named for the balancer it went through, with lesson 5's capacity run at a 0 ms commit,
// whose three database lines fail by design. The Makefile runs this file after every other one;
// without such a folder (make test-e2e alone) it is skipped, saying why.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../measure/rollup.ts';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { EXERCISE_SPECS, handlersCheck } from '../../measure/lib/exercise/specs.ts';
import { toolVersions } from '../../measure/lib/machine/machine.ts';
import { failOnWarnings, runMainInProcess } from '../helpers.ts';

failOnWarnings();
const out = mkdtempSync(path.join(os.tmpdir(), 'nsl-class-rollup-'));
after(() => rmSync(out, { recursive: true, force: true }));

const classDir = process.env.NSL_CLASS_DIR;
const classFiles = () =>
  classDir && existsSync(classDir)
    ? readdirSync(classDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json'))
    : [];
const noClass =
  classFiles().length === 0
    ? 'no class folder: make test-all sets NSL_CLASS_DIR, and the runs of both tiers fill it'
    : false;

test(
  "the class folder of this make test-all's real runs: every lesson, no file skipped, and the one designed ✗ with its cause",
  { skip: noClass, timeout: 60_000 },
  async () => {
    const files = classFiles();
    const r = await runMainInProcess(main, [classDir!, '--html', path.join(out, 'class.html')]);
    assert.match(
      r.stdout,
      new RegExp(`\\d+ student\\(s\\), ${files.length} run\\(s\\), 0 file\\(s\\) skipped`),
      r.stdout,
    );
    const experiments = new Set(files.map((f) => path.basename(f, '.json')));
    for (const lesson of LESSONS)
      assert.ok(
        lesson.experiments.some((e) => experiments.has(e)),
        `lesson ${lesson.id} has a run in the class folder`,
      );
    // A fix's run (lesson 10's fast-tier run is the reference fix of cache) is tabled under its exercise's command.
    const commands = new Map([...EXERCISE_SPECS, handlersCheck('').spec].map((s) => [s.id, s.command]));
    const tables = new Set(
      files.map((f) => {
        const doc = JSON.parse(readFileSync(path.join(classDir!, f), 'utf8')) as {
          experiment: string;
          exercise?: { id: string };
        };
        return doc.exercise ? commands.get(doc.exercise.id)! : doc.experiment;
      }),
    );
    for (const e of tables) assert.match(r.stdout, new RegExp(`^${e}$`, 'm'), `a table for ${e}`);
    // Every student's machine row names nginx's and Redis's versions as this machine has them.
    const tools = await toolVersions();
    for (const row of r.stdout.split('\n').filter((l) => /^│ (lb-|commit-)/.test(l))) {
      for (const v of [tools.nginx ?? 'missing', tools.redis ?? 'missing'])
        assert.ok(row.includes(v), `${row} names ${v}`);
    }
    const failed = [...r.stdout.matchAll(/^ {2}(\S+) · (\S+): (.+?) \(this run:/gm)].map(
      (m) => `${m[1]} · ${m[2]}: ${m[3]}`,
    );
    const designed = files.some((f) => f.startsWith('commit-ms-0'))
      ? [
          'user-scenario  5-replicas-vs-3  flat',
          'user-scenario  database-at-5-replicas  full',
          'user-scenario  replicas-cpu-at-5  below-cap',
        ].map((l) => `commit-ms-0 · capped-scale-out: ${l}`)
      : [];
    assert.deepEqual(failed.sort(), designed.sort(), 'only the 0 ms commit run fails, and exactly its three lines');
    assert.equal(r.code, designed.length ? 1 : 0);
    if (designed.length)
      assert.equal((r.stdout.match(/likely cause: /g) ?? []).length, 3, 'each ✗ with its likely cause');
  },
);
