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

test('ready once the program answers; SIGTERM stops it with its own signal and the server exits 0', async () => {
  const lab = new Lab();
  try {
    const s = await lab.start({ server: 'stand-in', script, env: { MODE: 'ready' } });
    assert.equal(await s.stop(5000), 'graceful');
    assert.equal((await s.exited).code, 0);
    assert.ok(s.lines.includes('program exited'), s.lines.join(' | '));
  } finally {
    await lab.close();
  }
});

test('a program that ignores its stop signal is SIGKILLed after the grace period, and the server still exits 0', async () => {
  const lab = new Lab();
  try {
    const s = await lab.start({ server: 'stand-in', script, env: { MODE: 'stubborn', GRACE_MS: '200' } });
    assert.equal(await s.stop(5000), 'graceful', 'the server itself exits once its program is gone');
    assert.ok(s.lines.includes('program exited'), s.lines.join(' | '));
  } finally {
    await lab.close();
  }
});

test('a taken port is KIT_ERR_PORT_IN_USE; another exit quotes the program; exit code 3', async () => {
  const taken = await runScript(FIXTURE, [], { MODE: 'taken' });
  assert.equal(taken.code, 3);
  assert.match(taken.stderr, /KIT_ERR_PORT_IN_USE/);
  const crash = await runScript(FIXTURE, [], { MODE: 'crash' });
  assert.equal(crash.code, 3);
  assert.match(crash.stderr, /KIT_ERR_STORE: stand-in exited \(code 4\): something broke/);
});

test('a program that never answers is stopped and the start fails with the reason', async () => {
  const r = await runScript(FIXTURE, [], { MODE: 'silent' });
  assert.equal(r.code, 3);
  assert.match(r.stderr, /KIT_ERR_STORE: stand-in did not start: no answer within 200 ms/);
  assert.match(r.stdout, /program exited/, 'the program was stopped before the server exited');
  const pid = Number(/program pid=(\d+)/.exec(r.stdout)?.[1]);
  assert.ok(pid > 0, r.stdout);
  assert.equal(pidAlive(pid), false);
});
