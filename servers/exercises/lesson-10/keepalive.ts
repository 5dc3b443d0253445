/**
 * Incident `keepalive`: the server closes a kept-alive connection after 1 s without a request,
 * sooner than the balancer in front of it (4 s for the kit's and its nginx configuration; 60 s for
 * AWS's load balancers) stops reusing it. Now and then the balancer sends a request on a
 * connection at the moment the server closes it, and the client gets a 502 or a reset: rarely, and
 * only after a pause in the traffic.
 * Reported: nodejs/node#27363 (sporadic 502s and resets behind a load balancer from
 * keepAliveTimeout).
 */
import type http from 'node:http';
import type { Handlers } from '../../incidents/types.ts';

export const handlers: Partial<Handlers> = {
  configure(server: http.Server) {
    // Free idle sockets sooner.
    server.keepAliveTimeout = 1000;
  },
};
