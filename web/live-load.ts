/**
 * The load of a Traffic Lab live run: with a rate, an open loop (the kit's generator,
 * measure/lib/load/open-loop.ts, timed from each request's intended send time); without one, a
 * closed loop (autocannon, whose one run lasts at most 120 s, so a longer live run is several back
 * to back). Either way it is stoppable, and a request that got no answer counts as failed.
 */
import { sustainLoad } from '../measure/lib/load/load.ts';
import { runOpenLoop } from '../measure/lib/load/open-loop.ts';
import type { SustainedLoad } from './live-stats.ts';

interface LiveLoadOptions {
  url: string;
  /** req/s of the open loop; 0: a closed loop. */
  rate: number;
  durationS: number;
  connections: number;
  /** A request unanswered this long fails, s. */
  timeoutS: number;
  /** Each answer's latency, ms, and status; `undefined` for a request that got no answer. */
  onAnswer: (ms: number, status: number | undefined) => void;
}

/** Starts the live run's load; stop() ends it early (an open loop abandons what is in flight). */
export function startLiveLoad(o: LiveLoadOptions): SustainedLoad {
  const { url, rate, durationS, connections, timeoutS, onAnswer } = o;
  if (rate <= 0) return sustainLoad({ url, connections, durationS: 120, timeoutS, onAnswer }, durationS);
  const abort = new AbortController();
  const done = runOpenLoop({
    url,
    rate,
    durationS,
    connections,
    timeoutS,
    signal: abort.signal,
    onAnswer: (ms, status) => onAnswer(ms, status),
    onFailure: (ms) => onAnswer(ms, undefined),
  }).then(
    () => {},
    () => {},
  );
  return {
    done,
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}
