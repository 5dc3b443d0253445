/**
 * A node:test reporter that appends each test file's wall time, in seconds, to the file named by
 * NSL_TEST_TIMES, one `<seconds>\t<file>` line per test file (.ci/run prints the ten slowest).
 * It prints nothing itself, so the Makefile gives it stdout beside the spec reporter (a destination
 * file such as /dev/null is fsynced when it closes, which fails there from Node 22 on: EINVAL).
 *
 * The runner queues every file at the start ('test:enqueue') and takes each off the queue when it
 * starts that file's process ('test:dequeue'); a file's time runs from then to its last event, so
 * it includes starting the process, and it holds whether files run one at a time or side by side.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';

export default async function* fileTimes(source) {
  const out = process.env.NSL_TEST_TIMES;
  const files = new Map(); // file -> { started, last }: ms
  for await (const event of source) {
    const file = event.data?.file;
    if (!file || event.type === 'test:enqueue') continue;
    const now = Date.now();
    const seen = files.get(file);
    if (seen) seen.last = now;
    else files.set(file, { started: now, last: now });
  }
  if (out) {
    const lines = [...files].map(
      ([file, t]) => `${((t.last - t.started) / 1000).toFixed(1)}\t${path.relative(process.cwd(), file)}\n`,
    );
    appendFileSync(out, lines.join(''));
  }
  yield '';
}
