/**
 * Live mode's routes on the Traffic Lab server (after its Host, Origin and token checks):
 *
 *   POST /live/start   JSON LiveSettings → 200 { settings }; 400 naming the bad field; 409 while a
 *                      run is going (one at a time: two labs would fight over the same cores)
 *   POST /live/act     JSON LiveAction → 200; 400 naming the bad field; 409 with no run, or an
 *                      action the run cannot do now (a dead replica)
 *   POST /live/stop    ends the run, if any → 200 { stopped }
 *   GET  /live/stream  Server-Sent Events: `second` (a LiveSecond, once a second), `started`, `ended`
 *
 * POSTs must be application/json, which a cross-site form cannot send without a preflight. The
 * stream is the page's heartbeat: a run with no page listening for HEARTBEAT_MS is stopped, so
 * closing the tab ends the load within a few seconds.
 */
import type http from 'node:http';
import { HttpError, readJsonBody, sendJson } from '../servers/lib/serve/http.ts';
import { LiveConflict, LiveRun } from './live-run.ts';
import { parseLiveAction, parseLiveSettings, type LiveSecond } from './page/live-settings.ts';
import { kitPlatform, needsWslMessage, WSL_HINT } from '../lib/platform.ts';

/** A live run with no page streaming it for this long is stopped, ms. */
const HEARTBEAT_MS = 3000;
const BODY_LIMIT = 4096;

export class LiveHost {
  private run: LiveRun | undefined;
  private starting = false;
  private readonly streams = new Set<http.ServerResponse>();
  private lastListened = 0;
  private readonly watchdog: NodeJS.Timeout;
  private closed = false;
  private endReason: string | undefined;
  private stopWhenStarted = false;
  private startingDone: Promise<void> = Promise.resolve();

  constructor(private readonly log: (line: string) => void = () => {}) {
    this.watchdog = setInterval(() => {
      if (this.streams.size > 0) this.lastListened = Date.now();
      else if (this.run && Date.now() - this.lastListened > HEARTBEAT_MS)
        void this.end('no page is watching it (the tab was closed)').catch(() => undefined);
    }, 500);
    this.watchdog.unref();
  }

  /** Handles `url` when it is a /live/ route; false otherwise. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL): boolean {
    const route = `${req.method} ${url.pathname}`;
    const handlers: Record<string, () => Promise<void> | void> = {
      'POST /live/start': () => this.start(req, res),
      'POST /live/act': () => this.act(req, res),
      'POST /live/stop': async () => sendJson(res, 200, { stopped: await this.end('stopped from the page') }),
      'GET /live/stream': () => this.stream(req, res),
    };
    const h = handlers[route];
    if (!h) {
      if (!url.pathname.startsWith('/live/')) return false;
      sendJson(res, 404, { error: `no route ${route}`, routes: Object.keys(handlers) });
      return true;
    }
    Promise.resolve()
      .then(h)
      .catch((err) => {
        if (res.headersSent) return res.destroy();
        if (err instanceof HttpError) sendJson(res, err.status, { error: err.message });
        else if (err instanceof LiveConflict) sendJson(res, 409, { error: err.message });
        else sendJson(res, 500, { error: (err as Error).message });
      });
    return true;
  }

  private async body(req: http.IncomingMessage): Promise<unknown> {
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
      throw new HttpError(415, 'send the body as application/json');
    return readJsonBody(req, BODY_LIMIT);
  }

  private async start(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const parsed = parseLiveSettings(await this.body(req));
    if (!parsed.ok) return sendJson(res, 400, { error: parsed.message, field: parsed.field });
    // Native Windows: no live run (lib/platform.ts); the simulation mode works there.
    if (kitPlatform() === 'win32')
      return sendJson(res, 501, { error: `${needsWslMessage('a live run')}; ${WSL_HINT}` });
    if (this.run || this.starting) {
      const why =
        this.endReason && this.run
          ? 'the last live run is still ending; try again in a moment'
          : 'a live run is already going: stop it first (another tab may have started it)';
      return sendJson(res, 409, { error: why });
    }
    if (this.closed) return sendJson(res, 503, { error: 'the Traffic Lab server is stopping' });
    this.starting = true;
    this.stopWhenStarted = false;
    let started: () => void = () => {};
    this.startingDone = new Promise((r) => (started = r));
    try {
      const run = await LiveRun.start(parsed.settings, (s) => this.broadcast('second', s), this.log);
      if (this.closed || this.stopWhenStarted) {
        await run.stop();
        return sendJson(res, 409, {
          error: this.closed
            ? 'the Traffic Lab server is stopping'
            : 'stopped before it began: Stop was pressed while the lab was starting',
        });
      }
      this.run = run;
      this.endReason = undefined;
      // An error while it stops must not take the server down; its processes end either way (the Lab).
      run.ended.catch((err) => this.log(`live run: ${(err as Error).message}`));
      this.lastListened = Date.now();
      this.log(
        `live run started: ${parsed.settings.replicas} replicas, ${parsed.settings.policy}, ${parsed.settings.connections} connections, ${parsed.settings.durationS} s`,
      );
      void run.ended.then(() => {
        this.endReason ??= 'finished: the load ran its length';
        if (this.run === run) this.run = undefined;
        const reason = this.endReason!;
        this.endReason = undefined;
        // Only now may a new run start: this line and the `ended` event say so.
        this.log(`live run ended: ${reason}; every process it started is stopped`);
        this.broadcast('ended', { reason });
      });
      this.broadcast('started', parsed.settings);
      sendJson(res, 200, { settings: parsed.settings });
    } finally {
      this.starting = false;
      started();
    }
  }

  private async act(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const parsed = parseLiveAction(await this.body(req));
    if (!parsed.ok) return sendJson(res, 400, { error: parsed.message, field: parsed.field });
    if (!this.run) throw new LiveConflict('no live run is going: start one first');
    sendJson(res, 200, await this.run.act(parsed.action));
  }

  private stream(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.write(
      `event: hello\ndata: ${JSON.stringify({ running: Boolean(this.run), settings: this.run?.settings ?? null })}\n\n`,
    );
    this.streams.add(res);
    req.on('close', () => this.streams.delete(res));
  }

  private broadcast(event: 'second' | 'started' | 'ended', data: LiveSecond | object): void {
    const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const res of this.streams) if (!res.writableEnded) res.write(text);
  }

  /** Stops the run, if any (one still starting stops as soon as it has started); true when there was one. */
  private async end(why: string): Promise<boolean> {
    if (this.starting) {
      this.stopWhenStarted = true;
      return true;
    }
    const run = this.run;
    if (!run) return false;
    this.endReason = why;
    this.log(`live run ending: ${why}`);
    await run.stop();
    return true;
  }

  /** Stops any run and closes every stream (the server is stopping); true when a run was stopped. */
  async close(): Promise<boolean> {
    this.closed = true;
    clearInterval(this.watchdog);
    const wasStarting = this.starting;
    await this.startingDone; // a run still starting is stopped by start() itself, seeing closed
    const ended = await this.end('the server is stopping');
    for (const res of this.streams) res.end();
    this.streams.clear();
    return wasStarting || ended;
  }
}
