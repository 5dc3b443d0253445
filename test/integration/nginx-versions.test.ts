// Proves that the kit's nginx balancer starts on nginx 1.18, which Ubuntu 20.04 and 22.04, Debian
// 11 and WSL2's default Ubuntu ship, and which refuses the -e switch (1.19.5 and newer take it);
// and that a failed start quotes nginx's own words. Played here by a stand-in `nginx` first on
// PATH: it says it is 1.18.0 and refuses -e as 1.18 does, and otherwise runs the real nginx (the
// first test skips without one) or fails with a config error of its own.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Lab } from '../../measure/lib/process/lab.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { startReplicas } from '../../measure/lib/process/topology.ts';
import {
  acceptsErrorLogSwitch,
  findNginx,
  nginxErrorLines,
  nginxVersion,
} from '../../servers/lib/balancer/nginx-config.ts';
import { failOnWarnings, skipUnless } from '../helpers.ts';
import type { Whoami } from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

/** What nginx 1.18.0 answers to -e (src/core/nginx.c, ngx_get_options). */
const REFUSAL = `for a in "$@"; do if [ "$a" = "-e" ]; then echo 'nginx: invalid option: "e"' >&2; exit 1; fi; done`;

/** A folder holding an executable `nginx` shell script with `body` after the 1.18 refusal of -e and -v's answer. */
function standIn(body: string): string {
  const dir = lab.tempDir('nginx-118');
  const file = path.join(dir, 'nginx');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      REFUSAL,
      `if [ "$1" = "-v" ]; then echo 'nginx version: nginx/1.18.0' >&2; exit 0; fi`,
      body,
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return dir;
}

const onPath = (dir: string) => ({ PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` });

test('only nginx 1.19.5 and newer are given -e; the version is read from nginx -v', () => {
  for (const v of ['1.19.5', '1.19.10', '1.22.1', '1.28.0', '2.0.0']) assert.equal(acceptsErrorLogSwitch(v), true, v);
  for (const v of ['1.18.0', '1.19.4', '1.14.2', undefined]) assert.equal(acceptsErrorLogSwitch(v), false, String(v));
  assert.equal(nginxVersion(path.join(standIn('exit 1'), 'nginx')), '1.18.0');
});

test(
  "nginx 1.18 (refuses -e): the kit's nginx balancer starts and forwards",
  { skip: skipUnless('nginx') },
  async () => {
    const real = findNginx();
    const [replica] = await startReplicas(lab, 1);
    const dir = standIn(`exec "${real}" "$@"`);
    const nginx = await lab.start({
      server: 'nginx',
      args: ['--port', '0', '--upstream', replica!.addr],
      env: onPath(dir),
    });
    const r = await probe<Whoami>(`${nginx.url}/whoami`);
    assert.equal(r.status, 200);
    assert.equal(r.body.replica, 'app1');
    await lab.stop(nginx);
  },
);

test('a failed start quotes what nginx said, not an empty error log', async () => {
  const dir = standIn(`echo 'nginx: [emerg] unknown directive "stand_in" in /x/nginx.conf:1' >&2; exit 1`);
  await assert.rejects(
    lab.start({ server: 'nginx', args: ['--port', '0', '--upstream', '127.0.0.1:1'], env: onPath(dir) }),
    (err: Error) => {
      assert.match(err.message, /nginx exited \(code 1\); nginx said: nginx: \[emerg\] unknown directive "stand_in"/);
      return true;
    },
  );
});

test("nginx 1.18's alert about its compiled-in error log is left out of what nginx said", () => {
  const alert =
    'nginx: [alert] could not open error log file: open() "/var/log/nginx/error.log" failed (13: Permission denied)';
  assert.equal(
    nginxErrorLines(`${alert}\n`, '2026/12/05 [emerg] 1#1: bind() failed\n'),
    '2026/12/05 [emerg] 1#1: bind() failed',
  );
  assert.equal(nginxErrorLines(`${alert}\n`, ''), '');
  assert.equal(nginxErrorLines('a\nb\n', 'c\nd\n'), 'b | c | d');
});
