// Proves the stages experiment's shape rules, tables and measures on fixed results: a healthy run
// matches expected-output/stages.txt, and every line fails on a result that breaks it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareShape, CANNOT_SHOW } from '../../results/report/shape.ts';
import { shape } from '../../results/stages/shape.ts';
import { render, typical, waterfall } from '../../results/stages/render.ts';
import { measures, notShown, predictions } from '../../results/stages/predictions.ts';
import { group, part, type StagedRequest, type StagesResult } from '../../results/stages/report.ts';
import { FRESH, kept, staged, stagesResult } from '../fixtures/stages.ts';
import { expectedShape, failOnWarnings } from '../helpers.ts';

failOnWarnings();
const expected = expectedShape('stages');

/** The expected lines a result breaks. */
function broken(r: StagesResult): string[] {
  return compareShape(expected, shape(r))
    .lines.filter((l) => l.status === 'failed' || l.status === 'missing')
    .map((l) => l.expected!);
}
function req(r: StagesResult, p: Parameters<typeof part>[1], g: string, i = 0): StagedRequest {
  return group(part(r, p), g)!.requests[i]!;
}
function stamp(q: StagedRequest, stage: string) {
  return q.stamps.find((s) => s.stage === stage)!;
}
function drop(q: StagedRequest, ...stages: string[]): void {
  q.stamps = q.stamps.filter((s) => !stages.includes(s.stage));
}

test('a healthy result prints exactly the expected shape', () => {
  assert.deepEqual(shape(stagesResult()), expected);
});

test('keep-alive: a fresh request that reused a connection, or a kept one that connected, breaks its line', () => {
  let r = stagesResult();
  drop(req(r, 'keep-alive', 'fresh', 2), 'connect', 'accept');
  assert.deepEqual(broken(r), ['fresh  connect  every-request']);
  r = stagesResult();
  req(r, 'keep-alive', 'fresh', 4).connectionAfter = 'kept';
  assert.deepEqual(broken(r), ['fresh  connection-after  closed']);
  r = stagesResult();
  group(part(r, 'keep-alive'), 'keep-alive')!.requests = group(part(r, 'keep-alive'), 'fresh')!.requests.map((q) => ({
    ...q,
    connectionAfter: 'kept',
  }));
  assert.deepEqual(broken(r), ['keep-alive  connect  first-request-only']);
  r = stagesResult();
  req(r, 'keep-alive', 'keep-alive', 1).connectionAfter = 'closed';
  assert.deepEqual(broken(r), ['keep-alive  connection-after  kept']);
});

test('proxy: an upstream connect before the request, a connection per request, or hops like direct break their lines', () => {
  let r = stagesResult();
  stamp(req(r, 'proxy', 'builtin'), 'accept').atUs -= 1_000; // before the client wrote: not opened for this request
  req(r, 'proxy', 'builtin').stamps.sort((a, b) => a.atUs - b.atUs);
  assert.deepEqual(broken(r), ['builtin  upstream-connect  after-request-written']);
  r = stagesResult();
  for (const q of group(part(r, 'proxy'), 'nginx')!.requests) q.stamps = staged(q.label, FRESH).stamps; // upstream keep-alive off
  assert.deepEqual(broken(r), ['nginx  upstream-connect  after-request-written', 'nginx  upstream-connection  reused']);
  r = stagesResult();
  group(part(r, 'proxy'), 'builtin')!.requests = group(part(r, 'proxy'), 'direct')!.requests;
  assert.ok(broken(r).includes('builtin  proxy-hops  above-direct'));
});

test("proxy: the kit's balancer's own stages in the order cause and effect demand; none, or one out of order, breaks the line", () => {
  let r = stagesResult();
  for (const q of group(part(r, 'proxy'), 'builtin')!.requests) q.stamps = q.stamps.filter((s) => s.side !== 'proxy'); // the request went around it
  assert.deepEqual(broken(r), ['builtin  proxy-stages  in-causal-order']);
  assert.ok(shape(r).includes('builtin  proxy-stages  not-recorded'));
  r = stagesResult();
  stamp(req(r, 'proxy', 'builtin', 2), 'upstream-request-written').atUs += 5_000; // after the server had parsed it: impossible
  assert.deepEqual(broken(r), ['builtin  proxy-stages  in-causal-order']);
});

test('proxy: without nginx its lines are not shown, and the run says why', () => {
  const r = stagesResult();
  const p = part(r, 'proxy')!;
  p.groups = p.groups.filter((g) => g.name !== 'nginx');
  p.missing = { nginx: 'nginx was not found' };
  const cmp = compareShape(expected, shape(r));
  assert.equal(cmp.holds, true);
  assert.deepEqual(
    cmp.lines.filter((l) => l.status === 'not-shown').map((l) => l.expected),
    ['nginx  upstream-connect  after-request-written', 'nginx  upstream-connection  reused'],
  );
  assert.deepEqual(notShown(r), ['nginx: nginx was not found']);
});

test('blocked: a light request parsed during the heavy scrypt, or waiting in its handler, breaks the blocking lines', () => {
  let r = stagesResult();
  group(part(r, 'blocked'), 'blocking')!.requests[1] = staged('light', kept(181), 3_050_000); // as if scrypt were pooled
  assert.deepEqual(broken(r), [
    'blocking  light-parsed  after-heavy-scrypt',
    'blocking  light-waited-in  server-headers-parsed',
  ]);
  r = stagesResult();
  group(part(r, 'blocked'), 'pooled')!.requests[1] = staged('light', kept(500_000), 4_050_000); // parsed after the heavy one
  assert.deepEqual(broken(r), ['pooled  light-parsed  before-heavy-scrypt']);
});

test('slow-reader: short waits for drain, a handler that ends early or late, or a queue of the wrong size break their lines', () => {
  let r = stagesResult();
  req(r, 'slow-reader', 'backpressure').extra.drainWaitUs = 20_000; // a reader as fast as the writer
  assert.deepEqual(broken(r), ['backpressure  waited-for-drain  most-of-the-time']);
  r = stagesResult();
  stamp(req(r, 'slow-reader', 'backpressure'), 'handler-end').atUs -= 300_000; // it stopped waiting for drain
  assert.deepEqual(broken(r), ['backpressure  handler-ends  at-finish']);
  r = stagesResult();
  req(r, 'slow-reader', 'backpressure').extra.queuedMaxBytes = 32 * 1024 ** 2;
  assert.deepEqual(broken(r), ['backpressure  queued  a-few-chunks']);
  r = stagesResult();
  stamp(req(r, 'slow-reader', 'ignoring-backpressure'), 'handler-end').atUs += 320_000; // a producer as slow as the reader
  req(r, 'slow-reader', 'ignoring-backpressure').extra.queuedMaxBytes = 3 * 1024 ** 2; // so the queue stays short
  assert.deepEqual(broken(r), [
    'ignoring-backpressure  handler-ends  long-before-finish',
    'ignoring-backpressure  queued  most-of-the-body',
  ]);
});

test('body-limit: a body sent or read before an early 413, a late check that stopped early, or equal costs break their lines', () => {
  let r = stagesResult();
  Object.assign(req(r, 'body-limit', 'early').extra, { bodyBytesSent: 1024 ** 2, socketBytesRead: 1024 ** 2 + 160 });
  req(r, 'body-limit', 'early').status = 201;
  assert.deepEqual(broken(r), ['early  status  413', 'early  body-sent  none', 'early  server-read  headers-only']);
  r = stagesResult();
  req(r, 'body-limit', 'late').extra.socketBytesRead = 2 * 1024 ** 2 + 160; // it stopped reading at 2 MiB
  req(r, 'body-limit', 'late').status = 201;
  assert.deepEqual(broken(r), ['late  status  413', 'late  server-read  whole-body']);
  r = stagesResult();
  stamp(req(r, 'body-limit', 'late'), 'response-headers-written').atUs =
    stamp(req(r, 'body-limit', 'late'), 'headers-parsed').atUs + 900;
  assert.deepEqual(broken(r), ['late-vs-early  server-time-to-413  much-longer']);
});

test('body-limit: one early upload held up by a pause (a garbage collection) does not decide; two do', () => {
  const r = stagesResult();
  const pause = (i: number) => {
    const q = req(r, 'body-limit', 'early', i);
    for (const s of q.stamps)
      if (
        s.stage !== 'request-start' &&
        s.stage !== 'accept' &&
        s.stage !== 'connect' &&
        s.stage !== 'request-written' &&
        s.stage !== 'first-bytes-read' &&
        s.stage !== 'headers-parsed'
      )
        s.atUs += 30_000;
  };
  pause(0);
  assert.deepEqual(broken(r), []);
  pause(2);
  assert.deepEqual(broken(r), ['late-vs-early  server-time-to-413  much-longer']);
});

test('blocked: a light request sent after the heavy one ended shows nothing, and says so', () => {
  const r = stagesResult();
  group(part(r, 'blocked'), 'blocking')!.requests[1] = staged('light', kept(181), 3_500_000); // a small --cost: the heavy one is over
  assert.deepEqual(broken(r), [
    'blocking  light-parsed  after-heavy-scrypt',
    'blocking  light-waited-in  server-headers-parsed',
  ]);
  assert.ok(shape(r).includes('blocking  light-parsed  sent-after-heavy-ended'));
});

test('a part left out with --part prints its keys as not shown, and says so', () => {
  const r = stagesResult();
  r.parts = r.parts.filter((p) => p.part === 'blocked');
  const lines = shape(r);
  assert.equal(lines.length, expected.length);
  assert.ok(
    lines.filter((l) => !l.startsWith('blocking') && !l.startsWith('pooled')).every((l) => l.endsWith(CANNOT_SHOW)),
  );
  assert.equal(compareShape(expected, lines).holds, true);
  assert.deepEqual(notShown(r), ['not run (--part): keep-alive, proxy, slow-reader, body-limit']);
});

test('waterfall: each stretch carries the letter of the stage that ends it, over the whole request', () => {
  const q = staged('x', [
    ['client', 'request-start', 0],
    ['client', 'request-written', 100],
    ['server', 'headers-parsed', 900],
    ['client', 'last-byte', 1_000],
  ]);
  assert.equal(waterfall(q, 10), 'wppppppppl');
  assert.equal(waterfall(staged('one', [['client', 'request-start', 0]]), 5), '     ');
});

test('the table shows the typical request: the median of those after the first', () => {
  const g = {
    name: 'g',
    requests: [1, 5, 3, 4].map((t, i) =>
      staged(`r${i + 1}`, [
        ['client', 'request-start', 0],
        ['client', 'last-byte', t],
      ]),
    ),
  };
  assert.equal(typical(g)?.label, 'r4', 'the median of the requests after the first');
});

test('render: a table per part and a waterfall per request, without colour codes when colour is off', () => {
  const out = render(stagesResult(), false);
  for (const p of ['keep-alive', 'proxy', 'blocked', 'slow-reader', 'body-limit'])
    assert.match(out, new RegExp(`^${p}: `, 'm'));
  assert.match(out, /at µs/);
  assert.match(
    out,
    /│ s headers-parsed +│ +422,391 │ +422,184 │/,
    'the blocked light request waited before its headers were parsed',
  );
  assert.equal((out.match(/^ {2}\S.* \|[a-z1]{48}\| [\d,]+ µs$/gm) ?? []).length, 5 + 5 + 15 + 4 + 2 + 4);
  assert.doesNotMatch(out, /\x1b\[/);
});

test("measures: each --predict question is answered by a measure, and the healthy answers are the lesson's", () => {
  const m = new Map(measures(stagesResult()).map((x) => [x.id, x.value]));
  for (const q of predictions) assert.ok(m.has(q.measure), q.measure);
  assert.ok(m.get('builtin-hops-vs-direct')! >= 2 && m.get('builtin-hops-vs-direct')! < 10);
  assert.ok(m.get('blocking-light-wait-share')! > 0.9 && m.get('pooled-light-wait-share')! < 0.01);
  assert.equal(m.get('ignoring-queued-share'), 100);
  assert.ok(m.get('late-vs-early-server-time-to-413')! > 5);
  assert.equal(m.get('keep-alive-requests-connecting'), 1);
});
