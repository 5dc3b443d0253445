// Proves that sparse traffic over upstream keep-alive gives no 502 and no retry, through the kit's
// balancer and through nginx: a request every 6 s, past the replica's 5 s idle timeout, for 12 s,
// so each balancer must have let its idle upstream connection go before the replica closed it.
// It waits 12 s by design, like an experiment, so it is in the end-to-end tier;
// test/integration/failover-servers.test.ts has the other failover checks.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Lab } from '../../measure/lib/process/lab.ts';
import { retriesOf, startBalancer, startReplicas } from '../../measure/lib/process/topology.ts';
import { failOnWarnings, balancersToTest } from '../helpers.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

const BALANCERS = balancersToTest();

/** The status of a GET on a connection of its own (the client side never reuses one). */
function statusOf(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
  });
}

test(
  "sparse traffic over upstream keep-alive (a request every 6 s, past the replica's 5 s idle timeout, for 12 s) gives no 502 and no retry",
  { timeout: 60_000 },
  async () => {
    const replicas = await startReplicas(lab, 2);
    const balancers = await Promise.all(
      BALANCERS.filter((b) => !b.skip).map((b) => startBalancer(lab, b.kind, 'round-robin', replicas)),
    );
    for (let i = 0; i < 3; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 6000)); // the spacing under test, not a readiness wait
      for (const lb of balancers) assert.equal(await statusOf(`${lb.url}/fast`), 200, `request ${i}`);
    }
    for (const lb of balancers)
      assert.equal((await retriesOf(lb)).total, 0, 'no request met a connection the replica had closed');
  },
);
