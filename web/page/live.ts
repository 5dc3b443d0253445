/**
 * Live mode in the page: the requests to the page's server (web/live-routes.ts), which runs the
 * real lab, and its once-a-second stream. The token comes from the page's own URL; the stream
 * stays open while the page is, and is the server's sign that somebody is watching (close the tab
 * and the run stops within a few seconds).
 */
import type { LiveSecond, LiveSettings } from './live-settings.ts';
import type { ReplicaView } from './topology.ts';

interface LiveView {
  /** The server's state when the stream (re)connects: a run may be going from another tab. */
  hello(running: boolean, settings: LiveSettings | null): void;
  started(settings: LiveSettings): void;
  second(s: LiveSecond): void;
  ended(reason: string): void;
  /** The stream broke (the server stopped); the browser tries again by itself. */
  lost(): void;
}

/** How long a request to the page's server may take, ms (a start waits for the replicas and the balancer). */
const POST_TIMEOUT_MS = 30_000;

export class LiveClient {
  private readonly token = new URLSearchParams(location.search).get('token') ?? '';
  private readonly source: EventSource;

  constructor(view: LiveView) {
    this.source = new EventSource(`/live/stream?token=${encodeURIComponent(this.token)}`);
    const on = <T>(event: string, f: (data: T) => void) =>
      this.source.addEventListener(event, (e) => f(JSON.parse((e as MessageEvent<string>).data) as T));
    on<{ running: boolean; settings: LiveSettings | null }>('hello', (d) => view.hello(d.running, d.settings));
    on<LiveSettings>('started', (d) => view.started(d));
    on<LiveSecond>('second', (d) => view.second(d));
    on<{ reason: string }>('ended', (d) => view.ended(d.reason));
    this.source.addEventListener('error', () => view.lost());
  }

  /** POSTs `body` as JSON to a /live/ route; resolves with the status and the parsed answer (never rejects on a status). */
  async post(
    route: 'start' | 'act' | 'stop',
    body: unknown,
  ): Promise<{ status: number; body: { error?: string; field?: string } & Record<string, unknown> }> {
    try {
      // Bounded: with many tabs open the browser's few connections per host can all be taken by streams.
      const r = await fetch(`/live/${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-traffic-lab-token': this.token },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
      });
      return { status: r.status, body: await r.json() };
    } catch (err) {
      return {
        status: 0,
        body: { error: `the Traffic Lab server did not answer (${(err as Error).message}); is it still running?` },
      };
    }
  }
}

/** A live second's replicas as the topology picture shows them. */
export function replicaViews(s: LiveSecond): ReplicaView[] {
  return s.replicas.map((r) => ({
    name: r.name,
    state: r.hogged && r.state === 'up' ? 'hogged' : r.state,
    down: r.down,
    queue: r.inFlight,
    served: r.requests,
    utilization: r.utilization,
    loopDelayMs: r.loopDelayMs?.p99 ?? null,
  }));
}
