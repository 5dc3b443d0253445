/**
 * The kit's own load balancer (HTTP, layer 7): picks a replica for every request with one of the
 * policies in core/policies.ts, and forwards it over a keep-alive connection pool (undici).
 * The picking and the failover rules (core/failover.ts) are the lesson; the proxying is undici's.
 *
 *   any path            forwarded to the chosen replica; the answer gets `x-upstream-addr`
 *   GET /__lb/stats     requests, in flight, failures and health per replica; requests retried
 *   POST /__lb/down?upstream=NAME, /__lb/up?upstream=NAME   take a replica out of rotation, or back
 *   POST /__lb/add?upstream=NAME=HOST:PORT   put one more replica (on loopback) into rotation
 *   GET /__lb/stages/ID   with --stages: the balancer's own stages of the request sent with ?sid=ID (lesson 9)
 *   POST /__lb/policy?name=POLICY   switch the policy for the requests that follow (the round-robin
 *                       cursor, the requests in flight and the replicas' health carry over)
 *
 * Failover: a try that cannot connect, is reset before any response byte, or gets no answer within
 * --response-timeout is retried on another replica (up to --retries more tries; only idempotent
 * methods once the request may have reached the replica), and counts against the replica's passive
 * health (--max-fails within --fail-timeout: it rests). Every retried request prints a `retry:` line
 * on stdout; SIGUSR1 prints `retries: total=N`. --access-log <file> appends a line per forwarded
 * request in nginx's format (servers/lib/balancer/access-log.ts): the replicas tried, their statuses and times.
 * Last try failed → 502 JSON (504 for a timeout); no replica available → 503 JSON at once;
 * request body over 1 MiB → 413 (bodies are read whole so that a POST that never reached a
 * replica can be sent to another one; nginx's client_max_body_size is also 1 MiB by default).
 * The state and the choice live in servers/lib/balancer/core.ts, one request's tries in forward.ts.
 * Run alone: `npx tsx servers/balancer.ts --policy least-connections --upstream 127.0.0.1:3010,127.0.0.1:3011`
 */
import http from 'node:http';
import { defineCommand } from '../lib/cli.ts';
import { sendJson } from './lib/serve/http.ts';
import type { UpstreamAdded } from './contracts.ts';
import { failStartup, serve, serverFlags } from './lib/serve/main.ts';
import { BALANCER_POLICIES, isBalancerPolicy } from '../core/policies.ts';
import { Balancer } from './lib/balancer/core.ts';
import { forward } from './lib/balancer/forward.ts';
import { balancerFlags, balancerOptions, twoChoicesSampling } from './lib/balancer/upstreams.ts';
import { ProxyStageRecorder } from './lib/balancer/proxy-stamps.ts';
import { isStageId, STAGE_ID_RULE } from './lib/stages/stamps.ts';

const DEFAULT_PORT = 3020;

const spec = defineCommand({
  usage:
    'npx tsx servers/balancer.ts --upstream <[name=]host:port,...> [--policy <policy>] [--port <n>] [--keepalive on|off] [--retries <n>] [--max-fails <n>] [--fail-timeout <s>] [--connect-timeout <ms>] [--response-timeout <ms>] [--access-log <file>] [--two-choices distinct|with-replacement] [--stages]',
  summary: "The kit's HTTP load balancer for lesson 4. Listens on 127.0.0.1 and prints one ready line.",
  flags: {
    ...balancerFlags(DEFAULT_PORT),
    'two-choices': {
      type: 'string',
      valueName: 'distinct|with-replacement',
      description:
        'power of two choices: sample two distinct replicas, or with replacement (both may be the same one; lesson 4, exercise 1)',
      default: 'distinct',
    },
    stages: {
      type: 'boolean',
      description:
        'stamp the stages of each request sent with ?sid=<id> and answer GET /__lb/stages/<id> with them (lesson 9)',
    },
  },
  epilogue:
    'Stats: curl -s 127.0.0.1:3020/__lb/stats\n' +
    "Take a replica out and back: curl -X POST '127.0.0.1:3020/__lb/down?upstream=app2' (then /__lb/up?upstream=app2)\n" +
    "Switch the policy while it runs: curl -X POST '127.0.0.1:3020/__lb/policy?name=least-connections'",
});

/** Answers the /__lb/ admin routes; false when `req` is not one of them (it is forwarded). */
function admin(b: Balancer, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const url = req.url ?? '';
  const switchTo = /^\/__lb\/policy\?name=([\w.-]*)$/.exec(url);
  if (switchTo && req.method === 'POST') {
    const name = switchTo[1]!;
    if (!isBalancerPolicy(name)) {
      sendJson(res, 400, { error: `unknown policy '${name}'`, field: 'name', allowed: BALANCER_POLICIES });
    } else {
      b.setPolicy(name);
      sendJson(res, 200, { policy: b.policy });
    }
    return true;
  }
  const upDown = /^\/__lb\/(up|down)\?upstream=([\w.-]+)$/.exec(url);
  if (upDown && req.method === 'POST') {
    // Take a replica out of (or back into) rotation by hand, as before maintenance.
    const up = b.upstreams.find((u) => u.name === upDown[2]);
    if (!up) {
      sendJson(res, 404, { error: `no upstream named '${upDown[2]}'`, upstreams: b.upstreams.map((u) => u.name) });
    } else {
      up.down = upDown[1] === 'down';
      sendJson(res, 200, { upstream: up.name, available: !up.down });
    }
    return true;
  }
  const add = /^\/__lb\/add\?upstream=([^&]+)$/.exec(url);
  if (add && req.method === 'POST') {
    try {
      const up = b.add(decodeURIComponent(add[1]!));
      sendJson(res, 200, {
        upstream: up.name,
        addr: up.addr,
        upstreams: b.upstreams.map((u) => u.name),
      } satisfies UpstreamAdded);
    } catch (err) {
      sendJson(res, 400, { error: (err as Error).message, field: 'upstream' });
    }
    return true;
  }
  if (url === '/__lb/stats' && req.method === 'GET') {
    sendJson(res, 200, b.stats());
    return true;
  }
  return false;
}

/** GET /__lb/stages/<id>: the balancer's own stages of the request sent with ?sid=<id> (--stages). */
function stagesRoute(
  rec: ProxyStageRecorder | undefined,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): boolean {
  const m = /^\/__lb\/stages\/([^/?]*)$/.exec(req.url ?? '');
  if (!m || req.method !== 'GET') return false;
  if (!rec) sendJson(res, 404, { error: 'this balancer records no stages: start it with --stages' });
  else if (!isStageId(m[1]!)) sendJson(res, 400, { error: `id: ${STAGE_ID_RULE}` });
  else {
    void rec
      .stages(m[1]!, 2000)
      .then((events) =>
        events
          ? sendJson(res, 200, { id: m[1], events })
          : sendJson(res, 404, { error: `id: no finished request sent with ?sid=${m[1]} (within 2 s)` }),
      );
  }
  return true;
}

function main(): void {
  const flags = serverFlags(spec);
  const options = { ...balancerOptions(flags, DEFAULT_PORT), twoChoices: twoChoicesSampling(flags['two-choices']) };
  const b = new Balancer(options);
  let rec: ProxyStageRecorder | undefined;
  const server = http.createServer((req, res) => {
    if (!admin(b, req, res) && !stagesRoute(rec, req, res)) void forward(b, req, res);
  });
  if (flags.stages) rec = new ProxyStageRecorder(server);
  // The access log is written before the total, so a reader that waits for the total has it whole.
  process.on('SIGUSR1', () => {
    b.accessLog?.flush();
    process.stdout.write(`retries: total=${b.retried}\n`);
  });
  serve('balancer', server, options.port, { onStop: () => b.close() }).catch(failStartup);
}

try {
  main();
} catch (err) {
  failStartup(err);
}
