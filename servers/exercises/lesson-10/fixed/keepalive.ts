/**
 * The reference fix of incident `keepalive` (../keepalive.ts): the server keeps an idle connection
 * open longer than any balancer in front of it reuses one, so the balancer always closes first.
 * Node's default is 5 s; behind AWS's load balancers (60 s idle) the advice is 65 s.
 */
import type http from 'node:http';
import type { Handlers } from '../../../incidents/types.ts';

export const handlers: Partial<Handlers> = {
  configure(server: http.Server) {
    server.keepAliveTimeout = 65_000;
    // Headers must be allowed longer than a kept-alive connection may sit idle (Node docs).
    server.headersTimeout = 66_000;
  },
};
