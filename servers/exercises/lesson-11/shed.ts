/**
 * Lesson 11's exercise, as the student starts it: the overload service's shedder, which lets every
 * request in. `npx tsx measure/overload.ts --mine` copies this file to exercises/lesson-11/shed.ts
 * (once) and runs the service with the copy (servers/overload.ts --shedder). Change the copy so
 * that, past a bound, a request is refused at once, before it waits: answer it 503 with a
 * Retry-After header, and return true. A request you let in must still get its hash.
 */
import type http from 'node:http';
import type { Load } from '../../lib/cpu/work-queue.ts';

/**
 * Called for every request to /hash as it arrives, before it joins the queue. To refuse it, answer
 * `res` yourself and return true; return false to let it wait for its turn. `load` says how long
 * the queue is, how long a request arriving now would wait (waitMs, ms), and the longest wait the
 * run asks you to let a request in for (boundMs, ms).
 */
export function shed(load: Load, res: http.ServerResponse): boolean {
  void load;
  void res;
  return false;
}
