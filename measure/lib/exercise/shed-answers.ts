/**
 * Lesson 11's answers battery: lesson 11's service with the student's shedder (servers/overload.ts
 * --shedder), beside the same service with none. Below capacity nothing may be refused, and every
 * hash must be the one the service without a shedder gives. In a burst of BURST requests at once
 * (about ten times the work the bound lets wait), every answer must be either that hash or a 503
 * with a Retry-After of whole seconds; some must be refused and some let in. Once the burst is
 * served, a request is let in again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AnswerCheck, FixAnswers } from '../../../results/report/answers.ts';
import { cut } from '../../../results/report/answers.ts';
import { probe, type ProbeResult } from '../load/probe.ts';
import type { ServerProcess } from '../process/launch.ts';
import type { AnswersContext } from './spec.ts';

/** Requests sent at once: 120 × about 9 ms is about 1 s of work, four times the 250 ms bound. */
const BURST = 120;
/** Ids asked one at a time, below capacity: the first, a large one, and a few between. */
const QUIET_IDS = [0, 7, 42, 65_535, 999_999_999];
/** The burst's ids start here, so no answer is one the quiet checks saw. */
const BURST_FROM = 5000;
/** The longest an answer may take: the burst's last request waits for about a second of work. */
const ANSWER_TIMEOUT_MS = 15_000;
/** How often the fix's service is asked whether its line has emptied after the burst, ms. */
const POLL_MS = 50;

type Answer = ProbeResult | string;

const get = (s: ServerProcess, id: number): Promise<Answer> =>
  probe(`${s.url}/hash?id=${id}`, { timeoutMs: ANSWER_TIMEOUT_MS }).catch((err: Error) => `no answer (${err.message})`);

/** An answer in a few words: `200 {"id":7,"key":"…"}`, `503, Retry-After 1`. */
function said(a: Answer): string {
  if (typeof a === 'string') return a;
  const body = typeof a.body === 'string' ? a.body.trim() : JSON.stringify(a.body);
  if (a.status === 503) {
    const ra = a.headers['retry-after'];
    return ra === undefined ? '503, no Retry-After' : `503, Retry-After ${JSON.stringify(ra)}`;
  }
  return `${a.status} ${cut(body, 60)}`;
}

const sameAnswer = (a: Answer, b: Answer) =>
  typeof a !== 'string' &&
  typeof b !== 'string' &&
  a.status === b.status &&
  JSON.stringify(a.body) === JSON.stringify(b.body);

/** A refusal as the exercise asks for it: 503, and Retry-After a whole number of seconds, 1 or more. */
const rightRefusal = (a: Answer) =>
  typeof a !== 'string' && a.status === 503 && /^\s*[1-9]\d*\s*$/.test(String(a.headers['retry-after'] ?? ''));

/** Waits until the fix's service has nothing queued or running (bounded by ANSWER_TIMEOUT_MS). */
async function idle(s: ServerProcess): Promise<void> {
  const until = Date.now() + ANSWER_TIMEOUT_MS;
  while (Date.now() < until) {
    const r = await probe(`${s.url}/__overload/stats`);
    const b = r.body as { queued?: number; accepted?: number; finished?: number };
    if (b.queued === 0 && b.accepted === b.finished) return;
    await sleep(POLL_MS); // polling the service's own count, not waiting for a readiness guess
  }
}

/** Runs lesson 11's battery against the shedder in `ctx.file`. */
export async function shedAnswers(ctx: AnswersContext): Promise<FixAnswers> {
  ctx.progress.step("your shedder's answers: the service with it beside the service with none");
  const [h, y] = await Promise.all([
    ctx.lab.start({ server: 'overload', args: ['--port', '0'] }),
    ctx.lab.start({ server: 'overload', args: ['--port', '0', '--shedder', ctx.file] }),
  ]);
  const checks: AnswerCheck[] = [];
  try {
    for (const id of QUIET_IDS) {
      const [a, b] = await Promise.all([get(h, id), get(y, id)]);
      checks.push({
        request: `GET /hash?id=${id}`,
        healthy: said(a),
        yours: said(b),
        same: sameAnswer(a, b),
      });
    }
    ctx.progress.step(`your shedder's answers: ${BURST} requests at once`);
    const ids = Array.from({ length: BURST }, (_, i) => BURST_FROM + i);
    const [hs, ys] = await Promise.all([
      Promise.all(ids.map((id) => get(h, id))),
      Promise.all(ids.map((id) => get(y, id))),
    ]);
    const wrong = ys.findIndex((b, i) => !sameAnswer(hs[i]!, b) && !rightRefusal(b));
    checks.push({
      request: `${BURST} × GET /hash at once`,
      healthy: 'its hash or 503 + Retry-After',
      yours: wrong < 0 ? 'its hash or 503 + Retry-After' : `id=${ids[wrong]}: ${said(ys[wrong]!)}`,
      same: wrong < 0,
    });
    const refused = ys.filter(rightRefusal).length;
    const accepted = ys.filter((b, i) => sameAnswer(hs[i]!, b)).length;
    checks.push({
      request: `those ${BURST}: refused, let in`,
      healthy: 'some of each',
      yours: refused === 0 ? 'none refused' : accepted === 0 ? 'none let in' : `${refused} refused, ${accepted} let in`,
      same: refused > 0 && accepted > 0,
    });
    await idle(y);
    const [a, b] = await Promise.all([get(h, 77), get(y, 77)]);
    checks.push({
      request: 'GET /hash?id=77 after',
      healthy: said(a),
      yours: said(b),
      same: sameAnswer(a, b),
    });
  } finally {
    await Promise.all([ctx.lab.stop(h), ctx.lab.stop(y)]);
  }
  return { healthyIs: 'the service without a shedder', checks };
}
