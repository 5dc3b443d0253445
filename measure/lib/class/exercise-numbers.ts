/**
 * Exercises done by hand whose answer is a number (`make check-exercise LESSON=1 N=2 ANSWER=330`):
 * the number asked for, and the range a right answer falls in. Each range is the arithmetic the
 * lesson teaches, widened to what this kit's reference machine measured (instructors/lesson-<n>.md
 * gives both); the quantities are chosen to depend on the mechanism, not on a machine's speed.
 */
export interface NumberAnswer {
  lesson: number;
  n: number;
  title: string;
  /** The number asked for, as a question. */
  ask: string;
  unit: string;
  low: number;
  high: number;
  /** Where the range comes from, one sentence. */
  why: string;
}

export const NUMBER_ANSWERS: readonly NumberAnswer[] = [
  {
    lesson: 1,
    n: 2,
    title: 'Predict before you measure',
    ask: "Little's law's mean latency for /work?ms=10 at 32 connections",
    unit: 'ms',
    low: 300,
    high: 350,
    why: "N / throughput = 32 / (1000 / 10.5 ms) ≈ 335 ms; autocannon's Avg measured 311–331 ms",
  },
  {
    lesson: 1,
    n: 3,
    title: 'A mixed route',
    ask: 'the connections at which a route that waits 5 ms and then computes 1 ms saturates its core',
    unit: 'connections',
    low: 5,
    high: 8,
    why: "the round trip over the CPU part: (5 + 1) / 1 ≈ 6, and the sweep's knee rule puts it at its step of 8",
  },
  {
    lesson: 1,
    n: 4,
    title: 'The first answers',
    ask: 'the longest wait of 32 new connections to /work?ms=5, from N²/2',
    unit: 'ms',
    low: 2300,
    high: 3000,
    why: '32 × 31 / 2 = 496 requests of about 5.4 ms (1000 / 184 req/s) ≈ 2,680 ms; a freshly started replica measured 2,511–2,737 ms',
  },
  {
    lesson: 2,
    n: 1,
    title: 'Count the sockets',
    ask: "the new upstream connections a second a proxy that closes first can sustain to one upstream address, with Linux's default port range and a 60 s TIME_WAIT",
    unit: 'connections/s',
    low: 440,
    high: 500,
    why: '28,232 ports (32768–60999) / 60 s ≈ 470 a second',
  },
  {
    lesson: 3,
    n: 1,
    title: 'Pool size',
    ask: "with UV_THREADPOOL_SIZE=2 and three pooled verifications at once, the third one's time as a multiple of the first one's",
    unit: '×',
    low: 1.7,
    high: 2.3,
    why: 'two threads take the first two; the third waits for one of them, then runs as long: 2×; measured 1.84–1.88 s against 0.92–0.99 s',
  },
  {
    lesson: 3,
    n: 3,
    title: 'Keep-alive',
    ask: 'how many different workers (pids) the six requests of one curl, over one kept-alive connection, reach',
    unit: 'workers',
    low: 1,
    high: 1,
    why: 'node:cluster hands out connections, not requests: one connection stays on the worker that accepted it',
  },
  {
    lesson: 4,
    n: 8,
    title: 'Where the queues explode',
    ask: 'the open-loop rate (3 replicas, 1 ms service time) at which the queues stop draining',
    unit: 'req/s',
    low: 2800,
    high: 3200,
    why: "three replicas of 1,000 req/s each serve 3,000 req/s; the model's queues grew from there",
  },
  {
    lesson: 5,
    n: 3,
    title: 'Find the knee by hand',
    ask: 'the replicas that would keep the SQLite writer lock busy all the time, from the 1-replica row',
    unit: 'replicas',
    low: 2,
    high: 4,
    why: '1 / (writes per second × lock held per write) = 1 / (20.8 × 16.3 ms) ≈ 2.9 here',
  },
  {
    lesson: 5,
    n: 4,
    title: 'One capped replica alone',
    ask: 'the requests a second one replica held to 0.2 core serves on /work?ms=5',
    unit: 'req/s',
    low: 30,
    high: 42,
    why: '0.2 core × 1000 ms / 5 ms = 40 req/s, a little less with the HTTP work around each request (measured 34.0–35.4)',
  },
  {
    lesson: 6,
    n: 4,
    title: "Read nginx's log",
    ask: "with app2 frozen, the first try's time in a line with two addresses (its $upstream_response_time, in ms)",
    unit: 'ms',
    low: 1450,
    high: 1600,
    why: 'the response timeout the exercise gives nginx (--response-timeout 1500, proxy_read_timeout); measured 1,501–1,502 ms',
  },
  {
    lesson: 7,
    n: 3,
    title: 'Hashing with a fallback',
    ask: 'the share of members whose replica changes when pickByKey goes from 5 replicas to 6 (a sixth added), in %',
    unit: '%',
    low: 78,
    high: 88,
    why: 'hash % 5 and hash % 6 agree for 1 key in 6, so about 5 in 6 (83 %) move; measured 82.9 % over 10,000 names',
  },
  {
    lesson: 12,
    n: 2,
    title: 'Count the round trips',
    ask: 'the time 100 requests take one after another, each on a new connection, to a replica 20 ms of round trip away',
    unit: 's',
    low: 3.8,
    high: 4.6,
    why: '100 × 2 round trips (the handshake, then the request) × 20 ms = 4 s, and keep-alive 2 s; part a measured 1.96 round trips a request, plus about 2 ms of its own',
  },
];

/** The number answer of exercise `n` of lesson `lesson`, if it has one. */
export function findNumberAnswer(lesson: number, n: number): NumberAnswer | undefined {
  return NUMBER_ANSWERS.find((a) => a.lesson === lesson && a.n === n);
}
