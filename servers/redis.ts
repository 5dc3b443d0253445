/**
 * A real Redis server for lesson 7, under the kit's process contract: starts `redis-server` on a
 * loopback port with a temporary working directory and no persistence (no RDB snapshots, no AOF:
 * nothing is written to your home or to /var), prints the kit's ready line once Redis answers (and is the one it started),
 * and on SIGTERM, SIGINT or a lost launcher stops it (SIGTERM: Redis's own clean shutdown) and
 * removes the directory. A missing binary is a clear error naming how to install it.
 * Run alone: `npx tsx servers/redis.ts --port 0`, then `redis-cli -p <port> ping`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { HOST } from '../lib/ready.ts';
import { runDaemon } from './lib/serve/daemon.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import { freePort } from './lib/serve/http.ts';
import { findRedis } from './lib/state/redis-binary.ts';

const spec = defineCommand({
  usage: 'npx tsx servers/redis.ts [--port <n>]',
  summary:
    'Starts a throwaway redis-server on 127.0.0.1 (temporary directory, no persistence) and prints one ready line once it answers.',
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port for Redis, 0 for any free port', default: '0' },
  },
  epilogue:
    'Needs redis-server: Debian/Ubuntu `sudo apt-get install redis-server`, macOS `brew install redis`. Lesson 7 uses SQLite by default and needs no server.',
});

/**
 * Resolves once the Redis at `port` is the one this wrapper started: `INFO server` answers with its
 * process_id (another Redis already on the port would answer PING too). Rejects after `timeoutMs`
 * or when `alive()` turns false.
 */
function answers(port: number, pid: number, timeoutMs: number, alive: () => boolean): Promise<void> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (!alive()) return reject(new Error('redis-server exited'));
      const socket = net.connect({ host: HOST, port });
      let reply = '';
      let done = false;
      const retry = () => {
        if (done) return;
        done = true;
        socket.destroy();
        if (Date.now() > until)
          reject(new Error(`no answer from this redis-server on port ${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 20);
      };
      socket.setTimeout(1000, retry);
      socket.on('error', retry);
      socket.on('connect', () => socket.write('INFO server\r\n'));
      socket.on('data', (d) => {
        reply += d;
        if (reply.includes(`process_id:${pid}\r\n`)) {
          done = true;
          socket.destroy();
          resolve();
        } else if (reply.startsWith('-') || /process_id:\d+\r\n/.test(reply)) retry(); // -LOADING, or another Redis
      });
    };
    attempt();
  });
}

async function main(): Promise<void> {
  const flags = serverFlags(spec);
  const requested = intFlag('port', flags.port, 0, 65535, 0);
  const binary = findRedis();
  const port = requested || (await freePort());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-redis-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const log: string[] = [];
  const keep = (d: Buffer) => {
    log.push(...d.toString().trim().split('\n'));
    log.splice(0, Math.max(0, log.length - 5));
  };
  await runDaemon({
    name: 'redis',
    program: 'redis-server',
    command: binary,
    args: [
      '--port',
      String(port),
      '--bind',
      HOST,
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      '--logfile',
      '',
    ],
    options: { stdio: ['ignore', 'pipe', 'pipe'] },
    port,
    stopSignal: 'SIGTERM', // Redis shuts down cleanly (nothing to save: --save '')
    graceMs: 5000,
    errorCode: 'KIT_ERR_STORE',
    said: () => log.join(' | '),
    quote: (said) => `; it said: ${said}`,
    portTaken: /Address already in use/i,
    answers: (redis) => {
      redis.stdout!.on('data', keep);
      redis.stderr!.on('data', keep);
      return answers(port, redis.pid!, 10_000, () => redis.exitCode === null && redis.signalCode === null);
    },
    onExit: cleanup,
  });
}

main().catch(failStartup);
