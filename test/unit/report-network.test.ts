// Proves the network report's rules beyond its examples (results/network/examples.ts): a run
// without the kernel's parts (no root) leaves the loss, timeout and hedge lines unjudged and says
// why, in the shape's comments and in the table; the round-trip lines need both ends of part a;
// and the flags are checked before anything runs, each naming its range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { examples } from '../../results/network/examples.ts';
import { notShown } from '../../results/network/hints.ts';
import { roundTrips, shape, type NetworkResult } from '../../results/network/report.ts';
import { render } from '../../results/network/render.ts';
import { CANNOT_SHOW } from '../../results/report/shape.ts';
import { experiment } from '../../measure/network.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** The healthy run as a machine without root measures it: no loss, timeout or hedge rows. */
function withoutKernel(): NetworkResult {
  const r = examples.healthy();
  Object.assign(r, { link: 'proxy', kernelMissing: 'needs root on Linux', loss: [], timeouts: [] });
  delete r.hedge;
  for (const b of r.bandwidth) b.limitedBy = 'proxy';
  return r;
}

test('without root: the loss, timeout and hedge lines are not shown, and the rest still hold', () => {
  const r = withoutKernel();
  const lines = shape(r);
  const kernel = lines.filter((l) => /^network {2}(loss|timeout|hedged)/.test(l));
  assert.equal(kernel.length, 11);
  for (const l of kernel) assert.ok(l.endsWith(CANNOT_SHOW), l);
  const healthy = shape(examples.healthy());
  assert.deepEqual(
    lines.filter((l) => !kernel.includes(l)),
    healthy.filter((l) => !/^network {2}(loss|timeout|hedged)/.test(l)),
  );
  assert.match(notShown(r)[0]!, /^the loss, timeout and hedge rows: needs root on Linux/);
  const table = render(r, false);
  assert.equal(table.match(/not shown: needs root on Linux \(nftables\)/g)?.length, 2);
  assert.match(table, /the proxy's limit/);
  assert.deepEqual(notShown(examples.healthy()), []);
});

test('the round trips a request pays are measured from the lowest and the highest RTT of part a', () => {
  const r = examples.healthy();
  const ka = roundTrips(r, 'keep-alive')!;
  assert.ok(ka > 0.7 && ka < 1.4, String(ka));
  r.rtt = r.rtt.filter((x) => x.rttMs === 0);
  assert.equal(roundTrips(r, 'per-request'), undefined);
  assert.ok(shape(r).includes(`network  rtt  per-request  round-trips  ${CANNOT_SHOW}`));
});

test('the flags: loss 0 to 50 %, latency 0 to 2000 ms, jitter at most the latency, bandwidth above 0', () => {
  const options = (flags: Record<string, string | boolean>) => experiment.options(flags as never);
  for (const [flags, says] of [
    [{ loss: '51' }, /--loss is a number from 0 to 50; got '51'/],
    [{ loss: '-1' }, /--loss is a number from 0 to 50/],
    [{ latency: '2001' }, /--latency is a number from 0 to 2000/],
    [{ latency: '5', jitter: '5.5' }, /--jitter is at most the latency \(5 ms\)/],
    [{ bandwidth: '0' }, /--bandwidth is a number above 0 to 1000/],
    [{ bandwidth: 'fast' }, /--bandwidth is a number above 0 to 1000; got 'fast'/],
  ] as const)
    assert.throws(() => options(flags), { code: 'KIT_ERR_USAGE', message: says }, JSON.stringify(flags));
  const o = options({ latency: '20', jitter: '4', loss: '2', bandwidth: '8' }) as {
    rtts: number[];
    lossPercent: number;
    bytesPerS: number;
  };
  assert.deepEqual(o.rtts, [0, 1, 20]);
  assert.equal(o.lossPercent, 2);
  assert.equal(o.bytesPerS, 1e6);
});
