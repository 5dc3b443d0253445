// Proves that both balancers give up on a vanished address (a replica that takes no connection,
// SIGUSR2) after their connect timeout, on time: not the response timeout, not undici's coarse
// timer; they log the try as 504 and retry elsewhere. It times tries of hundreds of ms, so it is
// in the end-to-end tier; the fault itself is checked in test/integration/vanish.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseAccessLine } from '../../servers/lib/balancer/access-log.ts';
import { Lab } from '../../measure/lib/process/lab.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { retriesOf, startBalancer, startReplicas } from '../../measure/lib/process/topology.ts';
import { failOnWarnings, balancersToTest } from '../helpers.ts';
import { vanish } from '../fixtures/vanish.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

const BALANCERS = balancersToTest();

for (const { kind, skip } of BALANCERS) {
  test(
    `${kind}: a try on a vanished address ends at the connect timeout (504), not the response timeout, and is retried`,
    { skip, timeout: 30_000 },
    async () => {
      const replicas = await startReplicas(lab, 2, [], ['--backlog', '1']);
      const file = path.join(lab.tempDir('vanish-test'), 'access.log');
      // A connect timeout under one second (undici's own timer would be up to half a second late
      // there) and a response timeout far from it, so the try's time says which one ended it.
      const lb = await startBalancer(lab, kind, 'round-robin', replicas, 0, true, [
        '--connect-timeout',
        '400',
        '--response-timeout',
        '3000',
        '--access-log',
        file,
      ]);
      const gone = replicas[1]!;
      await vanish(gone);
      try {
        const times: number[] = [];
        for (let i = 0; i < 4; i++) {
          const t0 = performance.now();
          assert.equal((await probe(`${lb.url}/fast`)).status, 200);
          times.push(performance.now() - t0);
        }
        await retriesOf(lb);
        const retried = readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map(parseAccessLine)
          .filter((e) => e && e.tries.length === 2);
        assert.ok(retried.length >= 1, `a retried request (times ${times.map((t) => t.toFixed(0)).join(', ')} ms)`);
        for (const e of retried) {
          assert.equal(e!.tries[0]!.addr, gone.addr);
          assert.equal(e!.tries[0]!.status, 504);
          const first = e!.tries[0]!.timeS! * 1000;
          assert.ok(first >= 380 && first < 600, `first try ${first} ms, the connect timeout is 400`);
          assert.equal(e!.status, 200);
        }
      } finally {
        gone.proc.signal('SIGCONT');
        await lab.stop(lb);
        await Promise.all(replicas.map((r) => lab.stop(r.proc)));
      }
    },
  );
}
