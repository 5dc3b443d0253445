// Every planted incident has a reference fix that replaces exactly the handlers the incident
// plants, and the kit's list of names, the server's list and the naming tables agree; a seeded
// run's profile names no planted file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INCIDENTS } from '../../servers/incidents/index.ts';
import { INCIDENT_NAMES } from '../../results/incident/result.ts';
import { nameVerdict, seedIncident, SYMPTOMS } from '../../results/incident/naming.ts';
import { handlers as redos } from '../../servers/exercises/lesson-10/fixed/redos.ts';
import { handlers as pool } from '../../servers/exercises/lesson-10/fixed/pool.ts';
import { handlers as keepalive } from '../../servers/exercises/lesson-10/fixed/keepalive.ts';
import { handlers as shutdown } from '../../servers/exercises/lesson-10/fixed/shutdown.ts';
import { handlers as cache } from '../../servers/exercises/lesson-10/fixed/cache.ts';
import { handlers as syncRead } from '../../servers/exercises/lesson-10/fixed/sync-read.ts';
import { examples } from '../../results/incident/examples.ts';
import { render } from '../../results/incident/report.ts';
import { expectedShape } from '../helpers.ts';

const FIXES = { redos, pool, keepalive, shutdown, cache, 'sync-read': syncRead };

test('the server plants the incidents the kit names, each with a fix of the same handlers', () => {
  assert.deepEqual(Object.keys(INCIDENTS), [...INCIDENT_NAMES]);
  assert.deepEqual(Object.keys(FIXES), [...INCIDENT_NAMES]);
  for (const name of INCIDENT_NAMES)
    assert.deepEqual(Object.keys(FIXES[name]).sort(), Object.keys(INCIDENTS[name]!).sort(), name);
});

test("each incident's expected lines differ from a healthy service's in its own symptom line only", () => {
  const healthy = expectedShape('incident');
  for (const name of INCIDENT_NAMES) {
    const planted = expectedShape(`incident/${name}`);
    const differ = planted.filter((l, i) => l !== healthy[i]);
    assert.deepEqual(differ, [`incident  ${SYMPTOMS[name].line}  ${SYMPTOMS[name].symptom}`], name);
  }
});

test('a seed picks every incident, and naming is judged from the run', () => {
  const seen = new Set(Array.from({ length: 60 }, (_, i) => seedIncident(i + 1)));
  assert.deepEqual([...seen].sort(), [...INCIDENT_NAMES].sort());
  const lines = expectedShape('incident/pool');
  assert.equal(nameVerdict('pool', 'pool', lines).right, true);
  const wrong = nameVerdict('pool', 'cache', lines);
  assert.equal(wrong.right, false);
  assert.match(wrong.text, /heap-under-new-pages read grows, and here it reads flat/);
});

test("a seeded run's profile names no planted file: the service's handlers, by line", () => {
  const r = examples.healthy();
  r.subject = { planted: 'redos', seed: 6 };
  r.profiles = [
    {
      phase: '/search',
      top: [
        { functionName: 'search', where: '/home/ann/kit/servers/exercises/lesson-10/redos.ts:16', share: 0.26 },
        { functionName: 'sendJson', where: 'servers/lib/serve/http.ts:47', share: 0.01 },
      ],
    },
  ];
  const text = render(r, false);
  assert.match(
    text,
    /search \(the service's handlers, line 16\) 26 %; sendJson \(servers\/lib\/serve\/http\.ts:47\) 1 %/,
  );
  assert.doesNotMatch(text, /lesson-10|redos\.ts/);
  // Named on the command line, the same run may say where.
  r.subject = { planted: 'redos' };
  assert.match(render(r, false), /search \(\/home\/ann\/kit\/servers\/exercises\/lesson-10\/redos\.ts:16\)/);
});
