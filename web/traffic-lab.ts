/**
 * The Traffic Lab: `npx tsx web/traffic-lab.ts` (or `make traffic-lab`) bundles the page, serves
 * it on 127.0.0.1 and prints one URL with a random token in it. The page runs the simulator in the
 * browser; in live mode (web/live-routes.ts) this server starts the real lab and its bounded load,
 * one run at a time. Ctrl-C (or SIGTERM, or the launcher going away) closes the
 * server and every connection to it.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { formatReady, HOST } from '../lib/ready.ts';
import { listen } from '../servers/lib/serve/http.ts';
import { exitWithLauncher } from '../servers/lib/serve/lifeline.ts';
import { failStartup, serverFlags } from '../servers/lib/serve/main.ts';
import { bundlePage, labListener, pageAssets } from './lab-server.ts';
import { LiveHost } from './live-routes.ts';

const spec = defineCommand({
  usage: 'npx tsx web/traffic-lab.ts [--port <n>]',
  summary:
    'Serves the Traffic Lab page on 127.0.0.1: pick a topology, a balancing policy and a load, then kill, freeze, stop, add ' +
    'or remove replicas while the simulation runs, and watch queues, utilization, throughput, p50/p95/p99 and retries. ' +
    "Live mode does the same to real replicas behind the kit's balancer, with real load (at most 10 minutes, 64 connections, 5,000 req/s). " +
    'Prints the URL to open (it carries a token; keep it to yourself).',
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port on 127.0.0.1, 0 for any free port', default: '0' },
  },
  epilogue: 'Works in a current Chromium, Firefox or Safari; nothing else to install.',
});

async function main(): Promise<void> {
  const flags = serverFlags(spec);
  const wanted = intFlag('port', flags.port, 0, 65_535, 0);
  const token = randomBytes(16).toString('hex');
  let script: string;
  try {
    script = await bundlePage();
  } catch (err) {
    throw new KitError(
      'KIT_ERR_PAGE_BUILD',
      `the page could not be bundled: ${(err as Error).message.split('\n')[0]}`,
      'run npm ci in the kit folder (esbuild bundles the page)',
    );
  }
  let port = wanted;
  const live = new LiveHost((line) => process.stdout.write(line + '\n'));
  const server = http.createServer(labListener(pageAssets(script, token), () => port, token, live));
  port = await listen(server, wanted);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // The live run's processes first: each gets SIGTERM, then SIGKILL after its grace.
    setTimeout(() => process.exit(0), 6000).unref();
    void live
      .close()
      .catch(() => false)
      .then((hadRun) => {
        // Exit once the line is written: a pipe to stdout is asynchronous on macOS.
        process.stdout.write(
          `stopped: ${hadRun ? 'the live run and its processes, then ' : ''}the Traffic Lab server on port ${port}\n`,
          () => {
            server.close(() => process.exit(0));
            server.closeAllConnections();
          },
        );
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  exitWithLauncher(stop);
  process.stdout.write(formatReady('traffic-lab', port, process.pid) + '\n');
  process.stdout.write(`Traffic Lab: open http://${HOST}:${port}/?token=${token}\n(Ctrl-C to stop)\n`);
}

main().catch(failStartup);
