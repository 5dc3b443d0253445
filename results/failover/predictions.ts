/** The failover experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { AFTER_VS_BEFORE, clientErrors, throughputAround } from './report.ts';
import type { FailoverResult, FaultRun } from './result.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';

/** Client errors after a kill (retries on, then off); a frozen replica's slow requests against the response timeout; POSTs stored twice. */
export function measures(r: FailoverResult): Measure[] {
  const run = (name: string): FaultRun | undefined => r.runs.find((x) => x.name === name);
  const errors = (name: string) => {
    const x = run(name);
    return x ? clientErrors(x) : undefined;
  };
  const frozen = run('sigstop');
  const stopped = run('sigterm');
  const around = stopped ? throughputAround(stopped) : undefined;
  return [
    ...measure(
      'sigterm-throughput-after-vs-before',
      'a replica stopped with SIGTERM: answers per second after the stop over those before it',
      '×',
      around ? ratio(around.after, around.before) : undefined,
      {
        line: 'sigterm  throughput-after-vs-before',
        threshold: AFTER_VS_BEFORE.high,
      },
    ),
    ...measure(
      'sigkill-client-errors',
      'a replica SIGKILLed under load, retries on: requests that failed at the client',
      'requests',
      errors('sigkill'),
      { line: 'sigkill  client-errors' },
    ),
    // No slow request at all (none waited the threshold) reads as 0: nothing waited for the timeout.
    ...measure(
      'sigstop-slow-vs-response-timeout',
      "a replica frozen (SIGSTOP): the slow requests' median latency over the response timeout (0: none was slow)",
      '×',
      frozen ? (frozen.slow.count > 0 ? ratio(frozen.slow.medianMs, r.settings.responseTimeoutMs) : 0) : undefined,
      { line: 'sigstop  slow-latency-vs-response-timeout' },
    ),
    ...measure(
      'without-retries-client-errors',
      'a replica SIGKILLed under load, --retries 0: requests that failed at the client',
      'requests',
      errors('sigkill-without-retries'),
      { line: 'sigkill-without-retries  client-errors' },
    ),
    ...measure(
      'post-stored-twice',
      'POSTs during a kill: POSTs whose user was stored twice',
      'requests',
      run('post-during-kill')?.post?.storedTwice,
      { line: 'post-during-kill  users-stored-twice' },
    ),
  ];
}

const WHERE = 'lessons/06-failure.md, Experiment 1';

export const predictions: Question[] = [
  {
    id: 'kill-errors',
    ask: 'One of 3 replicas is SIGKILLed while 8 connections keep the balancer busy (it retries a failed GET on another replica, its default). How many requests fail at the client?',
    measure: 'sigkill-client-errors',
    choices: [
      { label: 'none', to: 0.5 },
      { label: 'a few (1 to 10)', from: 0.5, to: 10.5 },
      { label: 'many (more than 10)', from: 10.5 },
    ],
    explain:
      "The kill resets the dead replica's connections at once; the balancer sees the reset, and sends those GETs again to a live replica before the client notices.",
    lesson: WHERE,
  },
  {
    id: 'freeze-wait',
    ask: "A replica is frozen instead (SIGSTOP): alive, connections accepted, nothing answered. The balancer's response timeout is 1.5 s by default. How long do the requests sent to it take?",
    measure: 'sigstop-slow-vs-response-timeout',
    choices: [
      { label: 'not much longer than usual: none waits a second', to: 0.5 },
      { label: 'about the response timeout, then a retry', from: 0.5, to: 2 },
      { label: 'much longer: until the replica is thawed', from: 2 },
    ],
    explain:
      'Nothing tells the balancer that a frozen process is gone: only its response timeout ends the wait, and then it retries elsewhere.',
    lesson: WHERE,
  },
  {
    id: 'kill-without-retries',
    ask: "The same kill with the balancer's retries off (--retries 0). How many requests fail at the client?",
    measure: 'without-retries-client-errors',
    choices: [
      { label: 'none', to: 0.5 },
      { label: 'some', from: 0.5 },
    ],
    explain:
      "The requests in flight on the killed replica's connections are lost with it; without a retry each one reaches its client as a 502.",
    lesson: WHERE,
  },
  {
    id: 'post-twice',
    ask: 'POST /users requests are running when a replica is killed. How many users end up stored twice?',
    measure: 'post-stored-twice',
    choices: [
      { label: 'none', to: 0.5 },
      { label: 'some', from: 0.5 },
    ],
    explain:
      'The balancer retries a POST only when it could not connect; one that was sent may have been stored, so sending it again could store it twice.',
    lesson: WHERE,
  },
];
