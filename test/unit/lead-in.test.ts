// A load's lead-in left out of its result (measure/lib/load/lead-in.ts): the timeline starts after it,
// renumbered from 0; the counts and the throughput are the measured part's; the latency is the
// settled part's, which starts where the lead-in ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withoutLeadIn } from '../../measure/lib/load/lead-in.ts';
import type { LoadResult } from '../../measure/lib/load/load-types.ts';
import type { TimelineSecond } from '../../results/report/timeline.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

const sec = (second: number, completed: number, non2xx = 0): TimelineSecond => ({
  second,
  completed,
  ok2xx: completed - non2xx,
  non2xx,
  errors: 0,
  p99: 5,
  max: 9,
});
const latency = (p99: number): LoadResult['latency'] => ({ count: 1000, mean: 1, p50: 1, p95: 3, p99, max: p99 * 2 });

test("the lead-in's seconds, counts and latencies are left out; the rest is renumbered from 0", () => {
  const r: LoadResult = {
    connections: 8,
    durationS: 7,
    throughput: 1000,
    counts: { sent: 7010, completed: 7000, ok2xx: 6990, non2xx: 10, errors: 0, timeouts: 0 },
    latency: latency(40),
    generatorCpu: 0.3,
    timeline: [sec(0, 200), sec(1, 800), sec(2, 1000, 4), sec(3, 1500), sec(4, 1500, 6), sec(5, 1000), sec(6, 1000)],
    settled: { completed: 6000, durationS: 5, throughput: 1200, latency: latency(8) },
  };
  const out = withoutLeadIn(r, 2);
  assert.deepEqual(
    out.timeline!.map((s) => [s.second, s.completed]),
    [
      [0, 1000],
      [1, 1500],
      [2, 1500],
      [3, 1000],
      [4, 1000],
    ],
  );
  assert.deepEqual(out.counts, { sent: 7010, completed: 6000, ok2xx: 5990, non2xx: 10, errors: 0, timeouts: 0 });
  assert.equal(out.durationS, 5);
  assert.equal(out.throughput, 1200);
  assert.equal(out.latency.p99, 8, "the settled part's latency, not the cold start's");
  const noLead = withoutLeadIn({ ...r, timeline: [sec(0, 200, 2), ...r.timeline!.slice(1)] }, 1);
  assert.equal(noLead.counts.non2xx, 8, "a failure in the lead-in is not the measured part's");
});
