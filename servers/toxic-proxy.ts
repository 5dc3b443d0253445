/**
 * Lesson 12's link: the toxic TCP proxy (lib/network/toxic-proxy.ts) as a server of its own, in
 * front of one upstream on its own loopback. As root on Linux the harness starts it inside the
 * replica's network namespace, listening on the namespace's address, so a client's connections
 * cross the veth link where nftables drops and tbf limits; elsewhere it listens on 127.0.0.1.
 *
 * Its toxics are set over the IPC channel the harness opens: `{ toxics: ProxyToxics }` is answered
 * `{ toxicsSet: true }`, or `{ toxicsError: '<why>' }` for a toxic out of range. Without a channel
 * (started by hand) they come from the flags alone.
 *
 * Run alone: `npx tsx servers/toxic-proxy.ts --upstream-port 3010 --latency 5 --port 0`.
 */
import { assertNodeVersion, KitError } from '../lib/errors.ts';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { formatReady, NAMESPACE_HOST } from '../lib/ready.ts';
import { exitWithLauncher } from './lib/serve/lifeline.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import { ToxicProxy, type ProxyToxics } from './lib/network/toxic-proxy.ts';

const spec = defineCommand({
  usage: 'npx tsx servers/toxic-proxy.ts --upstream-port <n> [--port <n>] [--listen <address>] [--latency <ms>]',
  summary:
    "Lesson 12's network in user space: a TCP proxy in front of 127.0.0.1:<upstream-port> that adds latency to what it passes (after Shopify's toxiproxy). Prints one ready line.",
  flags: {
    'upstream-port': { type: 'string', valueName: 'n', description: 'the port of the server it stands in front of' },
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: '0' },
    listen: {
      type: 'string',
      valueName: 'address',
      description: '127.0.0.1, or inside a kit namespace its own address (10.<200–249>.<n>.2)',
      default: '127.0.0.1',
    },
    latency: {
      type: 'string',
      valueName: 'ms',
      description: 'latency added each way, 0 to 2000 ms (default 0)',
    },
  },
});

async function main(): Promise<void> {
  assertNodeVersion();
  const flags = serverFlags(spec);
  if (flags['upstream-port'] === undefined)
    throw new KitError('KIT_ERR_USAGE', '--upstream-port is required: the port of the server to stand in front of');
  const upstreamPort = intFlag('upstream-port', flags['upstream-port'], 1, 65535, 0);
  const port = intFlag('port', flags.port, 0, 65535, 0);
  const host = flags.listen ?? '127.0.0.1';
  if (host !== '127.0.0.1' && !NAMESPACE_HOST.test(host))
    throw new KitError(
      'KIT_ERR_USAGE',
      `--listen is 127.0.0.1 or a kit namespace's address (10.<200–249>.<n>.2); got '${host}'`,
    );
  const latencyMs = intFlag('latency', flags.latency, 0, 2000, 0);
  const initial: ProxyToxics = latencyMs ? { upstream: { latencyMs }, downstream: { latencyMs } } : {};
  const proxy = new ToxicProxy({ host: '127.0.0.1', port: upstreamPort }, initial);
  const bound = await proxy.listen(port, host);
  process.on('message', (msg: { toxics?: ProxyToxics }) => {
    if (!msg || typeof msg !== 'object' || !('toxics' in msg)) return;
    try {
      proxy.set(msg.toxics ?? {});
      process.send?.({ toxicsSet: true });
    } catch (err) {
      process.send?.({ toxicsError: (err as Error).message });
    }
  });
  const stop = () => process.exit(0); // nothing to drain: the connections through it end with it
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  exitWithLauncher(stop);
  process.once('disconnect', stop);
  process.stdout.write(formatReady('toxic-proxy', bound, process.pid, host) + '\n');
}

main().catch(failStartup);
