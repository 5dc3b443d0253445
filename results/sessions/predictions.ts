/** The sessions experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, ratio, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import type { PhaseCount, SessionsResult } from './report.ts';

const lostPct = (p: PhaseCount | undefined) => {
  const share = ratio(p?.lost, p?.requests);
  return share === undefined ? undefined : 100 * share;
};

/** Sessions lost (401) before and after the kill, % of GET /me; the busiest replica's share under ip-hash, %. */
export function measures(r: SessionsResult): Measure[] {
  const run = (name: string) => r.runs.find((x) => x.name === name);
  const ipHash = Object.values(run('memory-ip-hash')?.perReplica ?? {});
  const total = ipHash.reduce((a, b) => a + b, 0);
  return [
    ...measure(
      'memory-round-robin-lost-before-kill',
      'sessions in replica memory behind round robin: GET /me that found no session, before any kill',
      '%',
      lostPct(run('memory-round-robin')?.before),
      { line: 'memory-round-robin  before-kill' },
    ),
    ...measure(
      'ip-hash-busiest-share',
      "ip-hash: the busiest replica's share of the requests",
      '%',
      total > 0 ? (100 * Math.max(...ipHash)) / total : undefined,
      { line: 'memory-ip-hash  spread' },
    ),
    ...measure(
      'sticky-cookie-lost-after-kill',
      'sticky cookie: GET /me that found no session after one replica was killed',
      '%',
      lostPct(run('memory-sticky-cookie')?.after),
      { line: 'memory-sticky-cookie  after-kill' },
    ),
    ...measure(
      'token-lost-after-kill',
      'signed tokens behind round robin: GET /me refused after one replica was killed',
      '%',
      lostPct(run('token-round-robin')?.after),
      { line: 'token-round-robin  after-kill' },
    ),
  ];
}

const WHERE = 'lessons/07-shared-state.md, Experiment 1';

export const predictions: Question[] = [
  {
    id: 'round-robin-memory',
    ask: 'Each replica keeps its sessions in its own memory; round robin spreads the requests over 3 replicas. Before anything is killed, what share of logged-in GET /me calls answer 401 (no session)?',
    measure: 'memory-round-robin-lost-before-kill',
    choices: [
      { label: 'none (under 1 %)', to: 1 },
      { label: 'some, under half', from: 1, to: 50 },
      { label: 'most, about two in three', from: 50, to: 90 },
      { label: 'nearly all (90 % or more)', from: 90 },
    ],
    explain:
      'A session lives only on the replica that answered the login; round robin sends the next request elsewhere two times in three.',
    lesson: WHERE,
  },
  {
    id: 'ip-hash-spread',
    ask: "ip-hash picks the replica from the client's address. The clients all run on this machine. What share of the requests does the busiest of the 3 replicas answer?",
    measure: 'ip-hash-busiest-share',
    choices: [
      { label: 'about a third (under 50 %)', to: 50 },
      { label: 'more than half, not all', from: 50, to: 99 },
      { label: 'all of them (99 % or more)', from: 99 },
    ],
    explain:
      'ip_hash keys on the first three octets of the IPv4 address: every client on 127.0.0.1 is one key, so one replica takes everything.',
    lesson: WHERE,
  },
  {
    id: 'sticky-after-kill',
    ask: 'Sticky cookies keep each member on its replica. Then one of the 3 replicas is killed. What share of GET /me calls answer 401 afterwards?',
    measure: 'sticky-cookie-lost-after-kill',
    choices: [
      { label: 'none (under 1 %)', to: 1 },
      { label: "the killed replica's members, about a third or fewer", from: 1, to: 60 },
      { label: 'most or all (60 % or more)', from: 60 },
    ],
    explain:
      'Stickiness does not copy a session: the members whose replica died are sent to another one, which never saw their login.',
    lesson: WHERE,
  },
  {
    id: 'token-after-kill',
    ask: 'A signed token carries the session itself, and no replica stores anything. After one replica is killed, what share of GET /me calls are refused?',
    measure: 'token-lost-after-kill',
    choices: [
      { label: 'none (under 1 %)', to: 1 },
      { label: 'some or all (1 % or more)', from: 1 },
    ],
    explain:
      'The session travels with every request, and any replica that knows the signing key can check it: the replicas that are left accept every token the killed one issued.',
    lesson: WHERE,
  },
];
