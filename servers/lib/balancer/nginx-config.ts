/**
 * Renders servers/nginx/nginx.conf.template for a policy and a set of upstreams (pure: returns
 * the config text), finds the nginx binary and asks its version; servers/nginx.ts writes the
 * config and starts nginx.
 *
 * Policy → nginx balancing method (nginx 1.22, ngx_http_upstream_module):
 *   round-robin           (none: nginx's default is weighted round robin)
 *   least-connections     least_conn
 *   random                random
 *   power-of-two-choices  random two least_conn  (two random servers, the one with fewer connections)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';
import type { BalancerPolicy } from '../../../core/policies.ts';
import type { FailoverOptions } from './upstreams.ts';
import { retryLine } from '../../../core/failover.ts';
import { NGINX_ACCESS_FORMAT } from './access-log.ts';

export const NGINX_METHOD: Record<BalancerPolicy, string> = {
  'round-robin': '',
  'least-connections': 'least_conn;',
  random: 'random;',
  'power-of-two-choices': 'random two least_conn;',
  'ip-hash': 'ip_hash;',
  // Open-source nginx has no `sticky` directive (that is nginx Plus): see stickyCookieBlocks.
  'sticky-cookie': '',
};

/**
 * sticky-cookie in open-source nginx: a map from the `lb` cookie to an upstream group per replica,
 * in which that replica is the server and the others are `backup` (used only when it fails); no
 * cookie → the round-robin group. Each answer sets `lb` to the replica that sent it, read from
 * its x-replica header ($upstream_http_x_replica), so names must match the replicas' own names.
 */
function stickyCookieBlocks(
  upstreams: { name: string; addr: string }[],
  serverParams: string,
  keepalive: string,
): string {
  const map = [
    '    map $cookie_lb $nsl_sticky {',
    '        default replicas;',
    ...upstreams.map((u) => `        ${u.name} sticky_${u.name};`),
    '    }',
  ];
  const groups = upstreams.flatMap((u) => [
    `    upstream sticky_${u.name} {`,
    `        server ${u.addr} ${serverParams};`,
    ...upstreams.filter((o) => o !== u).map((o) => `        server ${o.addr} ${serverParams} backup;`),
    `        ${keepalive}`,
    '    }',
  ]);
  return [...map, ...groups].join('\n');
}

/**
 * Idle upstream connections kept per worker when keep-alive is on, and how long they stay open:
 * 4 s, shorter than Node's 5 s keepAliveTimeout, so nginx never sends on a connection the
 * replica is closing ("upstream prematurely closed connection").
 */
export const NGINX_KEEPALIVE = 'keepalive 64;\n        keepalive_timeout 4s;';

interface NginxConfigInput {
  prefix: string;
  port: number;
  policy: BalancerPolicy;
  /** name=addr pairs; names matter for sticky-cookie only. */
  upstreams: { name: string; addr: string }[];
  keepAlive: boolean;
  /** Written into /__lb/stats, so the launcher can tell this nginx answered. */
  token: string;
  failover: FailoverOptions;
  /** The access log's absolute path (checked by accessLogPath), if any. */
  accessLog?: string;
}

/** Fills the template. Throws if a placeholder is left unfilled (a template/renderer mismatch). */
export function renderNginxConfig(template: string, input: NginxConfigInput): string {
  const f = input.failover;
  const serverParams = `max_fails=${f.maxFails} fail_timeout=${Math.round(f.failTimeoutMs / 1000)}s`;
  const keepalive = input.keepAlive ? NGINX_KEEPALIVE : '# no upstream keep-alive: one connection per request';
  const values: Record<string, string> = {
    prefix: input.prefix,
    port: String(input.port),
    policy: input.policy,
    token: input.token,
    method: NGINX_METHOD[input.policy] || "# round robin: nginx's default method",
    servers: input.upstreams.map((u) => `        server ${u.addr} ${serverParams};`).join('\n'),
    sticky:
      input.policy === 'sticky-cookie'
        ? stickyCookieBlocks(input.upstreams, serverParams, keepalive)
        : '    # (sticky-cookie only: a map from the lb cookie to one upstream group per replica)',
    proxyTarget: input.policy === 'sticky-cookie' ? 'http://$nsl_sticky' : 'http://replicas',
    stickyCookie:
      input.policy === 'sticky-cookie'
        ? 'add_header Set-Cookie "lb=$upstream_http_x_replica; Path=/; HttpOnly; SameSite=Lax" always;'
        : '# (sticky-cookie only: Set-Cookie lb=<replica>)',
    connectTimeout: String(f.connectTimeoutMs),
    responseTimeout: String(f.responseTimeoutMs),
    // proxy_next_upstream_tries counts the first try too; its 0 would mean "no limit".
    nextUpstream:
      f.retries > 0
        ? `proxy_next_upstream error timeout;\n            proxy_next_upstream_tries ${f.retries + 1};`
        : 'proxy_next_upstream off;',
    keepalive,
    accessFormat: NGINX_ACCESS_FORMAT,
    accessLog: input.accessLog
      ? `access_log "${input.accessLog}" nsl_upstreams;`
      : '# (--access-log only: a line per request in nsl_upstreams)',
    upstreamConnection: input.keepAlive ? 'proxy_set_header Connection "";' : 'proxy_set_header Connection close;',
  };
  const text = template.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => values[key] ?? whole);
  const left = /\{\{\w+\}\}/.exec(text);
  if (left) throw new Error(`nginx template placeholder ${left[0]} has no value`);
  return text;
}

/**
 * Where nginx lives when it is not on PATH, below `root` (a test passes a folder of its own):
 * Debian's /usr/sbin (often not on a user's PATH), Homebrew's (Apple silicon and Intel), MacPorts'
 * /opt/local/sbin, and a build from source's /usr/local/nginx/sbin.
 */
export function nginxDirs(root = '/'): string[] {
  return [
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/local/bin',
    '/opt/homebrew/bin',
    '/opt/local/sbin',
    '/usr/local/nginx/sbin',
  ].map((d) => path.join(root, d));
}

/** The nginx binary's path, or throws KIT_ERR_NGINX_MISSING with how to install it. */
export function findNginx(env: NodeJS.ProcessEnv = process.env, extraDirs: readonly string[] = nginxDirs()): string {
  const dirs = [...(env.PATH ?? '').split(path.delimiter).filter(Boolean), ...extraDirs];
  for (const dir of dirs) {
    const candidate = path.join(dir, 'nginx');
    if (existsSync(candidate)) return candidate;
  }
  throw new KitError(
    'KIT_ERR_NGINX_MISSING',
    'nginx was not found (looked on PATH and in /usr/sbin, /usr/local/sbin, /opt/homebrew/bin, /opt/local/sbin)',
    "install it (Debian/Ubuntu: sudo apt-get install nginx; macOS: brew install nginx, or sudo port install nginx) or leave out --lb nginx: the kit's balancer is the default",
  );
}

/**
 * The version nginx prints for `nginx -v` (on stderr: `nginx version: nginx/1.18.0`), or
 * undefined when it prints none within 2 s.
 */
export function nginxVersion(binary: string): string | undefined {
  const r = spawnSync(binary, ['-v'], {
    timeout: 2000,
    killSignal: 'SIGKILL',
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  const text = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return /nginx\/(\d+\.\d+\.\d+)/.exec(text)?.[1];
}

/**
 * Whether nginx of `version` takes `-e <file>`, which sets the error log before the config is
 * read: the switch came in nginx 1.19.5 (nginx CHANGES, 24 Nov 2020). Ubuntu 20.04 and 22.04 and
 * Debian 11 ship 1.18, which answers `invalid option: "e"` and exits. Unknown version: no.
 */
export function acceptsErrorLogSwitch(version: string | undefined): boolean {
  const [major = 0, minor = 0, patch = 0] = (version ?? '').split('.').map(Number);
  return major > 1 || (major === 1 && (minor > 19 || (minor === 19 && patch >= 5)));
}

/** nginx 1.18's complaint, without -e, that it cannot open its compiled-in error log as an ordinary user: harmless. */
const DEFAULT_LOG_ALERT = /could not open error log file/;

/**
 * What to show of nginx's own words when it fails: its last 3 lines on stderr and in the error
 * log, joined with ' | ', leaving out nginx 1.18's harmless alert about its default error log
 * (see acceptsErrorLogSwitch). Pure.
 */
export function nginxErrorLines(stderr: string, errorLog: string): string {
  const lines = `${stderr}\n${errorLog}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !DEFAULT_LOG_ALERT.test(l));
  return [...new Set(lines)].slice(-3).join(' | ');
}

/** Turns one line of the template's nsl_retries log format into a `retry:` line (undefined if malformed). */
export function nginxRetryLine(text: string, names: Map<string, string>): string | undefined {
  const [request, addrs, statuses, times] = text.split('|');
  if (!request || !addrs || !statuses || !times) return undefined;
  const [method, uri] = request.split(' ');
  const a = addrs.split(', ');
  const st = statuses.split(', ');
  const t = times.split(', ');
  const attempts = a.map((addr, i) => ({
    replica: names.get(addr) ?? addr,
    status: Number(st[i]) || 502,
    ms: (Number.parseFloat(t[i] ?? '0') || 0) * 1000,
  }));
  return retryLine(method ?? '?', uri ?? '/', attempts);
}
