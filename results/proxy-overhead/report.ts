/**
 * Result, table and shape of the `proxy-overhead` experiment (lesson 2): GET /fast directly and
 * through each proxy with upstream keep-alive on and off. Pure.
 */
import {
  fmtMs,
  fmtRate,
  machineCaption,
  makeChalk,
  makeTable,
  textThenNumbers,
  type MachineInfo,
} from '../report/format.ts';
import { CANNOT_SHOW, line } from '../report/shape.ts';

export interface ProxyConfig {
  proxy: 'direct' | 'builtin' | 'nginx';
  /** Upstream keep-alive (meaningless for direct). */
  keepAlive: boolean;
}

export interface ProxyRun {
  config: ProxyConfig;
  /** req/s with the throughput connections. */
  throughput: number;
  /** ms, with one connection. */
  p50: number;
  p99: number;
  /** Requests completed in both loads. */
  requests: number;
  /** Connections the replica accepted during both loads. */
  upstreamConnections: number;
  /** CPU the replica used per request during both loads, µs (its own process.cpuUsage). */
  replicaCpuUsPerRequest: number;
  errors: number;
}

export interface ProxyOverheadResult {
  machine: MachineInfo;
  stepS: number;
  route: string;
  connections: { latency: number; throughput: number };
  runs: ProxyRun[];
  /** Why nginx was left out, when it was. */
  nginxMissing?: string;
}

/**
 * With keep-alive, the p50 a proxy adds at one connection stays within this many times the direct
 * p50 (an order of magnitude): the hop is one more process reading, parsing and writing on
 * loopback, and it costs what that process's CPU costs on this machine. An absolute limit does not
 * travel: the kit's balancer added 0.3 ms where the replica spent 45-68 µs per request, and
 * 0.4-1.3 ms on a virtual machine where it spent 104-174 µs: 3.1-6.6× the direct p50 there over
 * 40 --quick runs (Node 20 and 22); nginx, 0.3-1.1×. A hop whose small writes wait on a delayed
 * ACK (Nagle's algorithm; Linux delays an ACK by 40 ms or more) adds tens of ms.
 */
export const ADDED_P50_FACTOR = 10;
/** "Few" upstream connections: at most this share of the requests. */
const FEW_SHARE = 0.02;
/** "One per request": at least this share of the requests. */
const ONE_PER_REQUEST_SHARE = 0.95;
/** Without keep-alive, throughput must drop below this share of keep-alive's, p50 rise above 1/that. */
export const CLEARLY_WORSE = 0.85;
/**
 * Without keep-alive the replica accepts, sets up and closes a connection per request: its CPU per
 * request must be at least this many times keep-alive's. Measured here: 130-230 µs against 45-68 µs
 * (2.4-3.5x) through either proxy. nginx's own connect on loopback costs about 0.1 ms of latency,
 * inside the noise of a p50, so the p50 line is the kit's balancer's only: a Node client pays far
 * more to open a connection (0.8 against 0.4 ms at p50 here).
 */
export const CPU_FACTOR = 1.5;

/** The run of `proxy` (with keep-alive on or off; `direct` has one), if the result has it. */
export const find = (r: ProxyOverheadResult, proxy: ProxyConfig['proxy'], keepAlive = true) =>
  r.runs.find((x) => x.config.proxy === proxy && (proxy === 'direct' || x.config.keepAlive === keepAlive));

export function shape(r: ProxyOverheadResult): string[] {
  const direct = find(r, 'direct');
  const out: string[] = [];
  for (const proxy of ['builtin', 'nginx'] as const) {
    const on = find(r, proxy, true);
    const off = find(r, proxy, false);
    const v = (ok: boolean | undefined, yes: string, no: string) => (ok === undefined ? CANNOT_SHOW : ok ? yes : no);
    const missing = !on || !off || !direct;
    out.push(
      line(
        'proxy-overhead',
        proxy,
        'keepalive-on',
        'added-p50',
        v(
          missing ? undefined : on!.p50 - direct!.p50 < ADDED_P50_FACTOR * direct!.p50,
          'under-10x-direct',
          'over-10x-direct',
        ),
      ),
    );
    out.push(
      line(
        'proxy-overhead',
        proxy,
        'keepalive-on',
        'upstream-connections',
        v(missing ? undefined : on!.upstreamConnections <= FEW_SHARE * on!.requests, 'few', 'many'),
      ),
    );
    out.push(
      line(
        'proxy-overhead',
        proxy,
        'keepalive-off',
        'upstream-connections',
        v(
          missing ? undefined : off!.upstreamConnections >= ONE_PER_REQUEST_SHARE * off!.requests,
          'one-per-request',
          'fewer',
        ),
      ),
    );
    out.push(
      line(
        'proxy-overhead',
        proxy,
        'keepalive-off-vs-on',
        'throughput',
        v(missing ? undefined : off!.throughput < CLEARLY_WORSE * on!.throughput, 'lower', 'not-lower'),
      ),
    );
    if (proxy === 'builtin')
      out.push(
        line(
          'proxy-overhead',
          proxy,
          'keepalive-off-vs-on',
          'p50',
          v(missing ? undefined : off!.p50 * CLEARLY_WORSE > on!.p50, 'higher', 'not-higher'),
        ),
      );
    out.push(
      line(
        'proxy-overhead',
        proxy,
        'keepalive-off-vs-on',
        'replica-cpu-per-request',
        v(
          missing ? undefined : off!.replicaCpuUsPerRequest >= CPU_FACTOR * on!.replicaCpuUsPerRequest,
          'higher',
          'not-higher',
        ),
      ),
    );
  }
  out.push(line('proxy-overhead', 'errors', r.runs.every((x) => x.errors === 0) ? 'none' : 'some'));
  return out;
}

export const hints: Record<string, string> = {
  'proxy-overhead  builtin  keepalive-on':
    "a proxy that reuses its upstream connections adds one hop on loopback: a process's read, parse and write, a few times the direct p50; far more means it waits for something (a timer, Nagle and delayed ACK)",
  'proxy-overhead  nginx  keepalive-on':
    'before 1.29.7, nginx reuses upstream connections only with `keepalive` in the upstream block, proxy_http_version 1.1 and an empty Connection header',
  'proxy-overhead  builtin  keepalive-off':
    'without keep-alive every request opens (and closes) a TCP connection to the replica',
  'proxy-overhead  nginx  keepalive-off':
    'without keep-alive every request opens (and closes) a TCP connection to the replica',
  'proxy-overhead  builtin  keepalive-off-vs-on':
    'a new connection per request costs a handshake and, on the replica, an accept, a new socket and a close: more CPU per request, less throughput; did --keepalive off really close each connection (see upstream connections)?',
  'proxy-overhead  nginx  keepalive-off-vs-on':
    'a new connection per request costs the replica an accept, a new socket and a close: more CPU per request, less throughput; did the keep-alive off config send Connection: close?',
  'proxy-overhead  errors':
    'a request failed: with keep-alive off, a machine short of ephemeral ports (TIME_WAIT) can refuse connections',
};

export function notShown(r: ProxyOverheadResult): string[] {
  return r.nginxMissing ? [`nginx was not measured: ${r.nginxMissing}`] : [];
}

const LABEL = (c: ProxyConfig) =>
  c.proxy === 'direct'
    ? 'direct to the replica'
    : `${c.proxy === 'builtin' ? 'kit balancer' : 'nginx'}, keep-alive ${c.keepAlive ? 'on' : 'off'}`;

export function render(r: ProxyOverheadResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const direct = find(r, 'direct');
  const table = makeTable(
    [
      'path',
      `req/s (${r.connections.throughput} conns)`,
      `p50 (${r.connections.latency} conn)`,
      `p99 (${r.connections.latency} conn)`,
      'added p50',
      'requests',
      'upstream connections',
      'per request',
      'replica CPU\nper request',
    ],
    textThenNumbers(1, 9),
  );
  for (const x of r.runs) {
    const added = direct && x !== direct ? x.p50 - direct.p50 : undefined;
    table.push([
      LABEL(x.config),
      fmtRate(x.throughput),
      fmtMs(x.p50),
      fmtMs(x.p99),
      added === undefined ? '—' : `${added >= 0 ? '+' : ''}${fmtMs(added)}`,
      x.requests.toLocaleString('en-US'),
      x.upstreamConnections.toLocaleString('en-US'),
      x.requests ? (x.upstreamConnections / x.requests).toFixed(3) : '—',
      `${Math.round(x.replicaCpuUsPerRequest)} µs`,
    ]);
  }
  return [
    c.bold(`Lesson 2 · what a proxy costs: GET ${r.route}`),
    c.dim(`${r.stepS} s per load · ${caption}`),
    table.toString(),
    c.dim(
      "upstream connections: connections the replica accepted during both loads (direct: the load generator's own); replica CPU: its user + system time over both loads, per request",
    ),
  ].join('\n');
}
