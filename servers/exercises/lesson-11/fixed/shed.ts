/**
 * The reference fix of lesson 11's exercise (servers/exercises/lesson-11/shed.ts), and the shedder
 * the lesson's own shedding rows run: a request that would wait longer than the run's bound (load.boundMs: 250 ms, half the lesson's
 * client timeout of 500 ms, unless --bound says otherwise) is refused
 * at once with 503 and Retry-After, so the work the service accepts is work it can still finish
 * while its client waits. The bound reads the queue, not the event loop's delay: this service's
 * loop stays free while its queue grows (servers/lib/cpu/work-queue.ts).
 * instructors/lesson-11.md shows it; test/e2e/lesson-11.test.ts runs it.
 */
import type http from 'node:http';
import type { Load } from '../../../lib/cpu/work-queue.ts';

/** What a refused client is told to wait before it tries again, s (Retry-After is whole seconds, RFC 9110 §10.2.3). */
const RETRY_AFTER_S = 1;

export function shed(load: Load, res: http.ServerResponse): boolean {
  if (load.waitMs <= load.boundMs) return false;
  const body = JSON.stringify({ error: 'busy: try again later', waitMs: Math.round(load.waitMs) }) + '\n';
  res.writeHead(503, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'retry-after': String(RETRY_AFTER_S),
  });
  res.end(body);
  return true;
}
