/**
 * Incident `shutdown`: on SIGTERM the server calls server.close() and exits when it completes.
 * close() stops new connections and closes the idle ones, but a client that keeps its connection
 * busy keeps getting answers on it, so close() never completes while it sends, and the process
 * is killed at the end of its grace period (Kubernetes' 30 s, a test's few seconds).
 * Reported: nodejs/node#2642 (kept-alive connections are not closed by server.close()).
 */
import type http from 'node:http';
import type { Handlers } from '../../incidents/types.ts';

export const handlers: Partial<Handlers> = {
  stopOnSignal(server: http.Server, exit: () => void) {
    process.once('SIGTERM', () => server.close(exit));
  },
};
