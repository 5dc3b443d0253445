/**
 * The Traffic Lab as its tests meet it: the real server process (its URL and token from its
 * output, every stdout line kept, and the pids of the processes a live run started), and the page
 * in headless Chromium with every console and page error collected.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before } from 'node:test';
import { request } from 'undici';
import { parseReady } from '../lib/ready.ts';
import { ROOT, toolSkip } from './helpers.ts';
import { findChromium, launchChromium } from '../web/browser.ts';

export const CHROMIUM = findChromium();
export const noBrowser = toolSkip(
  'chromium',
  CHROMIUM
    ? false
    : 'no Chromium found (Debian/Ubuntu: apt-get install chromium, or set CHROMIUM_PATH); .ci/run installs it',
);

export interface TrafficLab {
  child: ChildProcess;
  port: number;
  url: string;
  token: string;
  /** Every stdout line so far. */
  lines: string[];
  /** Pids of the servers its live runs started (from its `started <server> pid=N` lines). */
  startedPids(): number[];
  /** Resolves with the first stdout line from line `from` on (already printed or still to come) that matches, or rejects after `ms`. */
  waitForLine(re: RegExp, ms: number, from?: number): Promise<string>;
  /** A request to the server, with its own Host unless `headers` says otherwise. */
  send(
    pathAndQuery: string,
    opts?: { headers?: Record<string, string>; method?: 'GET' | 'POST'; body?: string },
  ): Promise<{ status: number; headers: Record<string, unknown>; body: string }>;
}

/** Starts `web/traffic-lab.ts --port 0` (with `env` added to this process's) and resolves once it has printed its URL. */
async function startTrafficLab(env: Record<string, string> = {}): Promise<TrafficLab> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'web/traffic-lab.ts'), '--port', '0'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env, LAB_LIFELINE: 'stdin' },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const found = await new Promise<{ port: number; url: string; token: string }>((resolve, reject) => {
    let port = 0;
    createInterface({ input: child.stdout! }).on('line', (l) => {
      lines.push(l);
      for (const w of [...waiters]) w();
      port ||= parseReady(l)?.port ?? 0;
      const m = /open (http:\/\/127\.0\.0\.1:\d+\/\?token=([0-9a-f]+))/.exec(l);
      if (m) resolve({ port, url: m[1]!, token: m[2]! });
    });
    child.once('exit', (code) => reject(new Error(`traffic-lab exited (${code}) before printing its URL: ${stderr}`)));
  });
  return {
    child,
    ...found,
    lines,
    startedPids: () => lines.flatMap((l) => /^started \S+ pid=(\d+)/.exec(l)?.[1] ?? []).map(Number),
    waitForLine: (re, ms, from = 0) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.slice(from).find((l) => re.test(l));
          if (!hit) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no line matching ${re} within ${ms} ms; printed:\n${lines.join('\n')}`));
        }, ms);
        waiters.add(check);
        check();
      }),
    send: async (pathAndQuery, opts = {}) => {
      const r = await request(`http://127.0.0.1:${found.port}${pathAndQuery}`, {
        method: opts.method ?? 'GET',
        headers: { host: `127.0.0.1:${found.port}`, ...opts.headers },
        ...(opts.body !== undefined ? { body: opts.body } : {}),
      });
      return { status: r.statusCode, headers: r.headers, body: await r.body.text() };
    },
  };
}

/** Opens the page in headless Chromium; every console error and page error is collected. */
export async function openPage(url: string) {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  return { browser, page, errors };
}

/**
 * One Traffic Lab server for the test file (with `env` added to its environment): started before
 * its first test and handed to `use`, SIGKILLed after its last if a test has not ended it.
 */
export function trafficLabForFile(use: (lab: TrafficLab) => void, env: Record<string, string> = {}): void {
  let lab: TrafficLab | undefined;
  before(async () => {
    lab = await startTrafficLab(env);
    use(lab);
  });
  after(() => {
    if (lab?.child.exitCode === null) lab.child.kill('SIGKILL');
  });
}
