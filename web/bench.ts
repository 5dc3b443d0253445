/**
 * How well does the Traffic Lab keep up? `npx tsx web/bench.ts [--part ...]` (or
 * `make traffic-lab-bench`) measures, in headless Chromium on this machine:
 *   engine   the simulator in the browser, simulated req/s on sim/bench.ts's workloads (target: 1 M
 *            for the 3-replica ones);
 *   fps      the page's frame rate in simulation mode, 10 replicas at 5,000 simulated req/s in real
 *            time (target: 30 frames per second or more);
 *   stream   live mode's per-second reading (web/live-stats.ts readStats) against the balancer's
 *            throughput: alternating loads with and without it (target: it costs under 5 %);
 *   memory   a live run of --minutes with an action every 5 s (freeze, thaw, policy switches, a
 *            kill and an add): the page server's RSS and the page's JS heap (after a GC) at minute
 *            1 and at the end, and how fast the page answers (target: flat, and responsive).
 * Every process it starts (the Traffic Lab server, the lab, Chromium) ends with it, Ctrl-C included.
 */
import type { Browser } from 'playwright-core';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { EXIT, KitError } from '../lib/errors.ts';
import { commandMain, runIfMain } from '../lib/entry.ts';
import { Lab } from '../measure/lib/process/lab.ts';
import { runLoad } from '../measure/lib/load/load.ts';
import { readStat, TICKS_PER_S } from '../lib/proc.ts';
import { startBalancer, startReplicas } from '../measure/lib/process/topology.ts';
import { makeTable } from '../results/report/format.ts';
import { launchChromium } from './browser.ts';
import { bundlePage } from './lab-server.ts';
import { readStats } from './live-stats.ts';
import type { EngineSpeed } from './page/bench-engine.ts';
import { assertSignals } from '../lib/platform.ts';
import { fps, memory, startServer } from './bench-page.ts';

const PARTS = ['engine', 'fps', 'stream', 'memory'] as const;

const command = defineCommand({
  usage: 'npx tsx web/bench.ts [--part engine,fps,stream,memory] [--minutes <n>] [--requests <n>]',
  summary:
    "Measures the Traffic Lab in headless Chromium: the in-browser simulator's speed, the page's frame rate, what live mode's per-second stream costs the balancer, and memory over a long live run.",
  flags: {
    part: {
      type: 'string',
      valueName: 'list',
      description: `which measurements, comma-separated: ${PARTS.join(', ')}`,
      default: PARTS.join(','),
    },
    minutes: {
      type: 'string',
      valueName: 'n',
      description: "length of the memory part's live run, 2 to 10 minutes",
      default: '10',
    },
    requests: {
      type: 'string',
      valueName: 'n',
      description: 'simulated requests per engine workload, 100,000 to 10,000,000',
      default: '2000000',
    },
  },
  epilogue:
    'Needs Chromium (Debian/Ubuntu: sudo apt-get install chromium, or CHROMIUM_PATH). Nothing else should run meanwhile: it times a 2-core machine.',
});

/** One row of the benchmark table: the measure, what this machine did, the target. */
export type Row = [string, string, string];

/** The command; throws KIT_ERR_USAGE and KIT_ERR_BROWSER_MISSING. */
export const main = commandMain(command, async (parsed, io) => {
  assertSignals('the Traffic Lab benchmark');
  const parts = String(parsed.flags.part)
    .split(',')
    .map((p) => p.trim());
  const bad = parts.find((p) => !(PARTS as readonly string[]).includes(p));
  if (bad !== undefined) throw new KitError('KIT_ERR_USAGE', `--part takes ${PARTS.join(', ')}; got '${bad}'`);
  const minutes = intFlag('minutes', parsed.flags.minutes as string, 2, 10, 10);
  const requests = intFlag('requests', parsed.flags.requests as string, 100_000, 10_000_000, 2_000_000);
  const lab = new Lab();
  let browser: Browser | undefined;
  const interrupted = (code: number) => () => {
    io.stderr.write('stopping: closing the browser and every server\n');
    void Promise.allSettled([browser?.close(), lab.close()]).then(() => process.exit(code));
  };
  process.once('SIGINT', interrupted(EXIT.sigint));
  process.once('SIGTERM', interrupted(EXIT.sigterm));
  const rows: Row[] = [];
  const say = (line: string) => io.stderr.write(line + '\n');
  try {
    browser = await launchChromium();
    if (parts.includes('engine')) rows.push(...(await engine(browser, requests, say)));
    if (parts.includes('stream')) rows.push(...(await stream(lab, say)));
    if (parts.includes('fps') || parts.includes('memory')) {
      const server = await startServer(lab);
      if (parts.includes('fps')) rows.push(await fps(browser, server.url, say));
      if (parts.includes('memory')) rows.push(...(await memory(browser, server, minutes, say)));
    }
  } finally {
    await Promise.allSettled([browser?.close(), lab.close()]);
  }
  const table = makeTable(['measure', 'this machine', 'target'], ['left', 'right', 'left']);
  table.push(...rows);
  io.stdout.write(`Traffic Lab benchmark (headless Chromium)\n${table.toString()}\n`);
  return 0;
});

/** The simulator's workloads inside a blank page (no CSP there), bundled as a classic script. */
async function engine(browser: Browser, n: number, say: (l: string) => void): Promise<Row[]> {
  say(`engine: ${n.toLocaleString('en-US')} simulated requests per workload, in the browser …`);
  const page = await browser.newPage();
  await page.addScriptTag({ content: await bundlePage('bench-engine.ts', 'iife') });
  const speeds = (await page.evaluate(`kitBenchEngine(${Number(n)})`)) as EngineSpeed[];
  await page.close();
  return speeds.map((s) => [
    `engine: ${s.name}`,
    `${(s.perS / 1e6).toFixed(2)} M simulated req/s`,
    s.name.startsWith('3 replicas') ? '≥ 1 M' : '',
  ]);
}

/**
 * What the stream's reading costs the balancer, two ways: its CPU (one reading's balancer CPU,
 * over 300 readings, against one forwarded request's, over a 4 s load: the share of the
 * balancer's throughput one reading a second takes), and throughput with and without the reading
 * in pairs of 3 s loads whose order alternates (their spread shows the machine's own noise).
 */
async function stream(lab: Lab, say: (l: string) => void): Promise<Row[]> {
  const PAIRS = 10;
  const replicas = await startReplicas(lab, 3);
  const lb = await startBalancer(lab, 'builtin', 'round-robin', replicas);
  const cpuMs = () => ((readStat(lb.pid)?.ownTicks ?? 0) * 1000) / TICKS_PER_S;
  const load = async (reading: boolean, durationS = 3) => {
    const timer = reading
      ? setInterval(
          () =>
            void readStats(
              lb.url,
              replicas.map((r) => r.url),
            ),
          1000,
        )
      : undefined;
    try {
      return await runLoad({ url: `${lb.url}/work?ms=1`, connections: 6, durationS });
    } finally {
      clearInterval(timer);
    }
  };
  say('stream: CPU of 300 readings, then of a 4 s load …');
  await load(false, 2); // warm: the first run pays for the JIT and the connection pools
  let before = cpuMs();
  for (let i = 0; i < 300; i++)
    await readStats(
      lb.url,
      replicas.map((r) => r.url),
    );
  const perReadingMs = (cpuMs() - before) / 300;
  before = cpuMs();
  const base = await load(false, 4);
  const perRequestMs = (cpuMs() - before) / base.counts.completed;
  const share = perReadingMs / (perRequestMs * base.throughput);
  const ratios: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    say(`stream: throughput pair ${i + 1} of ${PAIRS} …`);
    const first = i % 2 === 0;
    const a = (await load(first)).throughput;
    const b = (await load(!first)).throughput;
    ratios.push(first ? a / b : b / a);
  }
  for (const p of [lb, ...replicas.map((r) => r.proc)]) await lab.stop(p);
  ratios.sort((x, y) => x - y);
  const median = (ratios[PAIRS / 2 - 1]! + ratios[PAIRS / 2]!) / 2;
  const pct = (x: number) => `${(x * 100).toFixed(x < 0.01 ? 3 : 1)} %`;
  return [
    [
      'stream: balancer CPU of one reading a second, as a share of its throughput',
      `${pct(share)} (a reading ${perReadingMs.toFixed(2)} ms of CPU, a request ${perRequestMs.toFixed(3)} ms, ${Math.round(base.throughput)} req/s)`,
      '< 5 %',
    ],
    [
      `stream: throughput with the reading against without (median of ${PAIRS} pairs; the spread of the pairs is this machine's run-to-run noise)`,
      `${pct(1 - median)} lower (pairs ${pct(1 - ratios[PAIRS - 1]!)} to ${pct(1 - ratios[0]!)})`,
      '< 5 %',
    ],
  ];
}

await runIfMain(import.meta, main);
