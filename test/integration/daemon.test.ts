// Proves servers/lib/serve/daemon.ts, which runs nginx, redis-server and PostgreSQL for the kit, with a
// stand-in program: the ready line once it answers; a stop in two steps (its own signal, then
// SIGKILL after the grace period); a taken port named as such; any other exit quoted in the
// program's words; and a start that never answers stopped, not left running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Lab } from '../../measure/lib/process/lab.ts';
import { pidAlive } from '../../lib/terminate.ts';
import { failOnWarnings, ROOT, runScript } from '../helpers.ts';

failOnWarnings();
const FIXTURE = 'test/fixtures/daemon-stand-in.ts';
const script = path.join(ROOT, FIXTURE);

test('ready once the program answers; SIGTERM stops it with its own signal, or with SIGKILL after the grace period if it ignores that; the server exits 0 either way', async () => {
  const lab = new Lab();
  try {
    // Started side by side: each is its own process group, stopped by the lab if a check fails.
    const [ready, stubborn] = await Promise.all([
      lab.start({ server: 'stand-in', script, env: { MODE: 'ready' } }),
      lab.start({ server: 'stand-in', script, env: { MODE: 'stubborn', GRACE_MS: '200' } }),
    ]);
    assert.equal(await ready.stop(5000), 'graceful');
    assert.equal((await ready.exited).code, 0);
    assert.ok(ready.lines.includes('program exited'), ready.lines.join(' | '));
    assert.equal(await stubborn.stop(5000), 'graceful', 'the server itself exits once its program is gone');
    assert.equal((await stubborn.exited).code, 0);
    assert.ok(stubborn.lines.includes('program exited'), stubborn.lines.join(' | '));
  } finally {
    await lab.close();
  }
});

// The three runs start nothing that outlives them, so they are started side by side.
test('a taken port is KIT_ERR_PORT_IN_USE; another exit quotes the program; a start that never answers stops the program; exit code 3', async () => {
  const [taken, crash, silent] = await Promise.all(
    ['taken', 'crash', 'silent'].map((MODE) => runScript(FIXTURE, [], { MODE })),
  );
  assert.equal(taken!.code, 3);
  assert.match(taken!.stderr, /KIT_ERR_PORT_IN_USE/);
  assert.equal(crash!.code, 3);
  assert.match(crash!.stderr, /KIT_ERR_STORE: stand-in exited \(code 4\): something broke/);
  assert.equal(silent!.code, 3);
  assert.match(silent!.stderr, /KIT_ERR_STORE: stand-in did not start: no answer within 200 ms/);
  assert.match(silent!.stdout, /program exited/, 'the program was stopped before the server exited');
  const pid = Number(/program pid=(\d+)/.exec(silent!.stdout)?.[1]);
  assert.ok(pid > 0, silent!.stdout);
  assert.equal(pidAlive(pid), false);
});
