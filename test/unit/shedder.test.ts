// Proves lesson 11's shedders as a student reads them: the starting point lets every request in,
// and the reference fix lets a request in while its estimated wait is within the bound and, past
// it, answers 503 with a Retry-After of whole seconds and a JSON body, before the request waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { shed as start } from '../../servers/exercises/lesson-11/shed.ts';
import { shed as fixed } from '../../servers/exercises/lesson-11/fixed/shed.ts';
import type { Load } from '../../servers/lib/cpu/work-queue.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** A response that records what was written to it. */
function fakeResponse() {
  const sent: { status?: number; headers?: http.OutgoingHttpHeaders; body?: string } = {};
  const res = {
    writeHead(status: number, headers: http.OutgoingHttpHeaders) {
      Object.assign(sent, { status, headers });
      return res;
    },
    end(body: string) {
      sent.body = body;
      return res;
    },
  } as unknown as http.ServerResponse;
  return { res, sent };
}

const load = (waitMs: number): Load => ({ queued: 3, running: 1, serviceMs: 10, waitMs, boundMs: 250 });

test('the starting point lets every request in, however long the line', () => {
  const { res, sent } = fakeResponse();
  assert.equal(start(load(10_000), res), false);
  assert.deepEqual(sent, {});
});

test('the reference fix: in within the bound; past it 503, Retry-After in whole seconds, a JSON body', () => {
  const within = fakeResponse();
  assert.equal(fixed(load(250), within.res), false);
  assert.deepEqual(within.sent, {}, 'a request within the bound is not answered by the shedder');
  const past = fakeResponse();
  assert.equal(fixed(load(251), past.res), true);
  assert.equal(past.sent.status, 503);
  assert.match(String(past.sent.headers?.['retry-after']), /^[1-9]\d*$/);
  assert.equal(past.sent.headers?.['content-length'], Buffer.byteLength(past.sent.body!));
  assert.equal(JSON.parse(past.sent.body!).waitMs, 251);
});
