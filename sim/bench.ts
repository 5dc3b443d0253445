/**
 * How fast is the simulator? Runs fixed workloads of simulated requests and prints simulated
 * requests per second of wall time, and the heap after each run (flat in the number of requests:
 * nothing is kept per request once it has ended). `npx tsx sim/bench.ts [--requests <n>]`.
 */
import { performance } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { EXIT } from '../lib/errors.ts';
import { commandMain, runIfMain } from '../lib/entry.ts';
import { colorEnabled, makeChalk, makeTable, textThenNumbers } from '../results/report/format.ts';
import { simulate } from './engine.ts';
import { workloads } from './workloads.ts';

const command = defineCommand({
  usage: 'npx tsx sim/bench.ts [--requests <n>]',
  summary:
    'Times the simulator on a few workloads (3 replicas closed loop, M/M/1, 100 replicas with stale load) and prints simulated requests per second of wall time, and the heap after each run.',
  flags: {
    requests: {
      type: 'string',
      valueName: 'n',
      description: 'simulated requests per workload, 10,000 to 50,000,000',
      default: '2000000',
    },
  },
  epilogue: 'For a steadier heap column: node --expose-gc --import tsx sim/bench.ts',
});

/** The command; throws KIT_ERR_USAGE. */
const main = commandMain(command, async (parsed, io) => {
  const n = intFlag('requests', parsed.flags.requests as string, 10_000, 50_000_000, 2_000_000);
  const color = colorEnabled(io.stdout);
  const c = makeChalk(color);
  const gc = (globalThis as { gc?: () => void }).gc;
  const table = makeTable(['workload', 'requests', 'wall', 'simulated req/s', 'heap after'], textThenNumbers(1, 5));
  process.once('SIGINT', () => process.exit(EXIT.sigint));
  process.once('SIGTERM', () => process.exit(EXIT.sigterm));
  for (const w of workloads(n)) {
    io.stderr.write(`${w.name} …\n`);
    await new Promise((resolve) => setTimeout(resolve, 0)); // a signal stops it between workloads
    const began = performance.now();
    const r = simulate(w.config);
    const wallMs = performance.now() - began;
    gc?.();
    table.push([
      w.name,
      r.counts.sent.toLocaleString('en-US'),
      `${(wallMs / 1000).toFixed(2)} s`,
      Math.round((r.counts.sent * 1000) / wallMs).toLocaleString('en-US'),
      `${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`,
    ]);
  }
  io.stdout.write(
    c.bold(`Simulator speed: ${n.toLocaleString('en-US')} requests per workload`) + '\n' + table.toString() + '\n',
  );
  return 0;
});

await runIfMain(import.meta, main);
