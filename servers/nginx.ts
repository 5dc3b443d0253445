/**
 * Real nginx as the lesson 4 balancer, under the kit's process contract: renders the config
 * template into a temporary prefix, starts `nginx -p DIR -c DIR/nginx.conf` in the foreground as
 * the current user, prints the kit's ready line once nginx accepts connections, and on SIGTERM,
 * SIGINT or a lost launcher stops it with SIGQUIT (nginx's graceful shutdown) and removes the
 * prefix. nginx's master and worker are this process's children, in its process group.
 */
import type { ChildProcess } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineCommand } from '../lib/cli.ts';
import { HOST } from '../lib/ready.ts';
import { runDaemon } from './lib/serve/daemon.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import { freePort } from './lib/serve/http.ts';
import {
  acceptsErrorLogSwitch,
  findNginx,
  nginxErrorLines,
  nginxRetryLine,
  nginxVersion,
  renderNginxConfig,
} from './lib/balancer/nginx-config.ts';
import { balancerFlags, balancerOptions } from './lib/balancer/upstreams.ts';

const DEFAULT_PORT = 3021;

const spec = defineCommand({
  usage:
    'npx tsx servers/nginx.ts --upstream <host:port,...> [--policy <policy>] [--port <n>] [--keepalive on|off] [--retries <n>] [--max-fails <n>] [--fail-timeout <s>] [--connect-timeout <ms>] [--response-timeout <ms>] [--access-log <file>] [--print-config]',
  summary:
    "Starts real nginx as the load balancer for lesson 4, from the kit's template, in a temporary prefix. Prints one ready line once nginx answers.",
  flags: {
    ...balancerFlags(DEFAULT_PORT),
    'print-config': { type: 'boolean', description: 'print the rendered nginx.conf and exit' },
  },
  epilogue:
    "Needs nginx: Debian/Ubuntu `sudo apt-get install nginx`, macOS `brew install nginx`. Without it, use the kit's balancer (the default).",
});

const TEMPLATE = fileURLToPath(new URL('./nginx/nginx.conf.template', import.meta.url));
/**
 * Resolves once this nginx answers: GET /__lb/stats returns the token written into its config
 * (so another program on the port cannot pass for it). Rejects if nginx exits or after `timeoutMs`.
 */
function answers(port: number, token: string, nginx: ChildProcess, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const retry = () => {
      if (Date.now() > until) reject(new Error(`nginx did not answer on port ${port} within ${timeoutMs} ms`));
      else setTimeout(attempt, 20);
    };
    const attempt = () => {
      if (nginx.exitCode !== null || nginx.signalCode !== null) return reject(new Error('nginx exited'));
      const req = http.get({ host: HOST, port, path: '/__lb/stats', agent: false, timeout: 1000 }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => (body.includes(token) ? resolve() : retry()));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', retry);
    };
    attempt();
  });
}

async function main(): Promise<void> {
  const flags = serverFlags(spec);
  const options = balancerOptions(flags, DEFAULT_PORT);
  const { policy, port: requested } = options;
  const upstreams = options.upstreams;
  const prefix = mkdtempSync(path.join(os.tmpdir(), 'nsl-nginx-'));
  const cleanup = () => rmSync(prefix, { recursive: true, force: true });
  try {
    const port = requested || (await freePort());
    const token = randomUUID();
    const config = renderNginxConfig(readFileSync(TEMPLATE, 'utf8'), {
      prefix,
      port,
      policy,
      upstreams,
      keepAlive: options.keepAlive,
      token,
      failover: options,
      ...(options.accessLog ? { accessLog: options.accessLog } : {}),
    });
    if (flags['print-config']) {
      cleanup();
      process.stdout.write(config);
      return;
    }
    const binary = findNginx();
    for (const dir of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
      mkdirSync(path.join(prefix, 'tmp', dir), { recursive: true });
    // Run as root (CI), nginx's worker switches to an unprivileged user, which must reach the prefix.
    if (process.getuid?.() === 0) {
      chmodSync(prefix, 0o755);
      for (const dir of ['tmp', 'tmp/client_body', 'tmp/proxy', 'tmp/fastcgi', 'tmp/uwsgi', 'tmp/scgi'])
        chmodSync(path.join(prefix, dir), 0o777);
    }
    writeFileSync(path.join(prefix, 'nginx.conf'), config);
    const names = new Map(options.upstreams.map((u) => [u.addr, u.name]));
    await start(binary, prefix, port, token, cleanup, names);
  } catch (err) {
    cleanup();
    throw err;
  }
}

/** Keeps the last `bytes` of what `stream` writes; the returned function reads them. */
function keepTail(stream: NodeJS.ReadableStream, bytes: number): () => string {
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (d: string) => (text = (text + d).slice(-bytes)));
  return () => text;
}

/** Starts nginx in `prefix`, wires its shutdown, and prints the ready line once it accepts connections. */
async function start(
  binary: string,
  prefix: string,
  port: number,
  token: string,
  cleanup: () => void,
  names: Map<string, string>,
): Promise<void> {
  // -e sets the error log before the config is read, so nothing touches /var/log. nginx 1.18
  // (Ubuntu 22.04, Debian 11) has no -e: it opens its compiled-in error log first, and as an
  // ordinary user says on stderr that it cannot, then goes on with the config's error_log.
  const errorSwitch = acceptsErrorLogSwitch(nginxVersion(binary)) ? ['-e', path.join(prefix, 'error.log')] : [];
  let stderr = () => '';
  const errorLog = () => {
    let log = '';
    try {
      log = readFileSync(path.join(prefix, 'error.log'), 'utf8');
    } catch {
      // not written yet: nginx failed before it read its config
    }
    return nginxErrorLines(stderr(), log);
  };
  const retries = tailRetries(path.join(prefix, 'retries.log'), names);
  process.on('SIGUSR1', () => retries.flush(true));
  await runDaemon({
    name: 'nginx',
    program: 'nginx',
    command: binary,
    args: ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), ...errorSwitch],
    options: { stdio: ['ignore', 'ignore', 'pipe'] },
    port,
    stopSignal: 'SIGQUIT', // graceful: finish in-flight requests, then exit
    graceMs: 5000,
    errorCode: 'KIT_ERR_NGINX_FAILED',
    said: errorLog,
    quote: (lines) => `; ${lines ? `nginx said: ${lines}` : 'nginx printed nothing on stderr or in its error log'}`,
    portTaken: /Address already in use/,
    answers: (nginx) => {
      stderr = keepTail(nginx.stderr!, 4096);
      return answers(port, token, nginx, 10_000);
    },
    onExit: () => {
      retries.flush(false);
      clearInterval(retries.timer);
      cleanup();
    },
  });
}

/**
 * Follows nginx's retries log (one line per request tried on more than one replica, see the
 * template) and prints each as the kit's `retry:` line, naming replicas as --upstream did.
 * Polls every 100 ms; flush(true) reads what is there at once and prints `retries: total=N`.
 */
function tailRetries(
  file: string,
  names: Map<string, string>,
): { flush(withTotal: boolean): void; timer: NodeJS.Timeout } {
  let offset = 0;
  let total = 0;
  let partial = '';
  const flush = (withTotal: boolean) => {
    let text = '';
    try {
      const fd = openSync(file, 'r');
      try {
        const buf = Buffer.alloc(64 * 1024);
        for (let n; (n = readSync(fd, buf, 0, buf.length, offset)) > 0; offset += n) text += buf.toString('utf8', 0, n);
      } finally {
        closeSync(fd);
      }
    } catch {
      // no retries yet: nginx creates the log on its first line
    }
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      const line = nginxRetryLine(l, names);
      if (!line) continue;
      total++;
      process.stdout.write(line + '\n');
    }
    if (withTotal) process.stdout.write(`retries: total=${total}\n`);
  };
  const timer = setInterval(() => flush(false), 100);
  timer.unref();
  return { flush, timer };
}

main().catch(failStartup);
