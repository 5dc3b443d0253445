/**
 * A throwaway PostgreSQL for lesson 5, under the kit's process contract: `initdb` makes a cluster
 * in a temporary folder (user `nsl`, trust authentication on loopback only), `postgres` serves it
 * on 127.0.0.1 with durable commits (fsync on: a commit waits for its WAL flush, as in
 * production), and the wrapper prints the kit's ready line once PostgreSQL says it accepts
 * connections. On SIGTERM, SIGINT or a lost launcher it asks for a fast shutdown (SIGINT to the
 * postmaster: clients are disconnected, nothing is kept) and removes the folder.
 *
 * initdb and postgres run as the `postgres` user when started as root, since PostgreSQL refuses
 * to run as root. The server is not held to a CPU quota: lesson 5 tried 0.1 core, and the
 * throttle's stalls, not its capacity, then set the write times.
 * Run alone: `npx tsx servers/postgres.ts --port 0`, then `psql -h 127.0.0.1 -p <port> -U nsl postgres`.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { HOST } from '../lib/ready.ts';
import { runDaemon } from './lib/serve/daemon.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import { freePort } from './lib/serve/http.ts';
import { findPostgres } from './lib/state/postgres-binary.ts';

const spec = defineCommand({
  usage: 'npx tsx servers/postgres.ts [--port <n>]',
  summary:
    'Starts a throwaway PostgreSQL on 127.0.0.1 (a new cluster in a temporary folder, removed afterwards) and prints one ready line once it accepts connections.',
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port for PostgreSQL, 0 for any free port', default: '0' },
  },
  epilogue:
    'Needs PostgreSQL: Debian/Ubuntu `sudo apt-get install postgresql`, macOS `brew install postgresql@16`. The kit uses SQLite by default and needs no server.',
});

/** The database user the replicas connect as. */
const PG_USER = 'nsl';

/** As root, the `postgres` account's uid and gid (from /etc/passwd), which initdb and postgres run as. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((l) => l.split(':'))
    .find((f) => f[0] === 'postgres');
  if (!entry)
    throw new KitError(
      'KIT_ERR_STORE',
      'PostgreSQL will not run as root, and there is no postgres user to run it as',
      'run the kit as a normal user',
    );
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

/** Makes a cluster in `data` (owned by `owner`); throws KIT_ERR_STORE with initdb's words if it fails. */
function initCluster(initdb: string, data: string, owner: { uid: number; gid: number } | undefined): void {
  const r = spawnSync(initdb, ['-D', data, '-U', PG_USER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    encoding: 'utf8',
    ...owner,
  });
  if (r.status !== 0)
    throw new KitError(
      'KIT_ERR_STORE',
      `initdb failed: ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-2).join(' | ')}`,
    );
}

async function main(): Promise<void> {
  const flags = serverFlags(spec);
  const requested = intFlag('port', flags.port, 0, 65535, 0);
  const bins = findPostgres();
  const owner = runAs();
  const port = requested || (await freePort());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-postgres-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.on('exit', cleanup);
  const data = path.join(dir, 'data');
  const sockets = path.join(dir, 'sockets');
  mkdirSync(sockets);
  if (owner) for (const d of [dir, sockets]) chownSync(d, owner.uid, owner.gid);
  initCluster(bins.initdb, data, owner);
  const settings = [
    'listen_addresses=' + HOST,
    'max_connections=60',
    'shared_buffers=32MB',
    'fsync=on',
    'synchronous_commit=on',
    'logging_collector=off',
  ];
  const log: string[] = [];
  await runDaemon({
    name: 'postgres',
    program: 'postgres',
    command: bins.postgres,
    args: ['-D', data, '-p', String(port), '-k', sockets, ...settings.flatMap((s) => ['-c', s])],
    options: { stdio: ['ignore', 'ignore', 'pipe'], ...owner },
    port,
    stopSignal: 'SIGINT', // fast shutdown: disconnect clients, checkpoint, exit
    graceMs: 1500, // within the harness's 2 s grace, so that this process still removes the folder itself
    errorCode: 'KIT_ERR_STORE',
    said: () => log.join(' | '),
    portTaken: /Address already in use|could not bind/i,
    // PostgreSQL says when it accepts connections; the launcher's own deadline covers one that never does.
    answers: (pg) =>
      new Promise((resolve) => {
        pg.stderr!.on('data', (d: Buffer) => {
          for (const l of d.toString().trim().split('\n')) {
            log.push(l);
            if (/ready to accept connections/.test(l)) resolve();
          }
          log.splice(0, Math.max(0, log.length - 5));
        });
      }),
    readyLines: [`url: postgres://${PG_USER}@${HOST}:${port}/postgres`],
  });
}

main().catch(failStartup);
