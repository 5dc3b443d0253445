/**
 * The reference fix of incident `shutdown` (../shutdown.ts): after SIGTERM every answer carries
 * `Connection: close`, so a busy kept-alive connection closes after its current request; idle
 * ones are closed at once; and whatever is still open after a deadline is closed too.
 */
import type http from 'node:http';
import type { Handlers } from '../../../incidents/types.ts';

/** How long answers in flight get before their connections are closed, ms. */
const DEADLINE_MS = 2000;

export const handlers: Partial<Handlers> = {
  stopOnSignal(server: http.Server, exit: () => void) {
    let stopping = false;
    server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      if (stopping) res.setHeader('connection', 'close');
    });
    process.once('SIGTERM', () => {
      stopping = true;
      server.close(exit);
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), DEADLINE_MS).unref();
    });
  },
};
