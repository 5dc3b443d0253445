// The virtual users' connections, counted by a real server on loopback: one per iteration by
// default (what lets node:cluster give a new worker its share), one per user for the whole run
// with keepAlive (lesson 8, exercise 3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { router, listen } from '../../servers/lib/serve/http.ts';
import { workloadRoutes } from '../../servers/lib/cluster/workload-routes.ts';
import { startUsers } from '../../measure/lib/load/users.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** Runs 3 users for 1.5 s (think 100 ms) against the lesson-8 routes; how many connections and iterations. */
async function run(keepAlive: boolean): Promise<{ connections: number; iterations: number; errors: number }> {
  const server = http.createServer(router(workloadRoutes('test-secret', { N: 2 ** 10, r: 8, p: 1 })));
  let connections = 0;
  server.on('connection', () => connections++);
  const port = await listen(server, 0);
  try {
    const users = startUsers({ url: `http://127.0.0.1:${port}`, users: 3, durationS: 1.5, thinkMs: 100, keepAlive });
    const r = await users.result;
    return { connections, iterations: r.iterations, errors: r.errors };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('by default every iteration opens its own connection; with keepAlive each user keeps one', async () => {
  const fresh = await run(false);
  assert.equal(fresh.errors, 0);
  assert.ok(fresh.iterations > 6, `enough iterations to tell: ${fresh.iterations}`);
  assert.equal(fresh.connections, fresh.iterations, 'one connection per iteration');
  const kept = await run(true);
  assert.equal(kept.errors, 0);
  assert.ok(kept.iterations > 6, `enough iterations to tell: ${kept.iterations}`);
  assert.equal(kept.connections, 3, 'one connection per user');
});
