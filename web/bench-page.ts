/**
 * The Traffic Lab benchmark's page parts (web/bench.ts): the page's frame rate in simulation mode
 * (fps), and memory and responsiveness over a long live run with an action every 5 s (memory),
 * both in headless Chromium against a Traffic Lab server the benchmark starts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Browser, Page } from 'playwright-core';
import { KitError } from '../lib/errors.ts';
import { Lab } from '../measure/lib/process/lab.ts';
import { ROOT } from '../measure/lib/harness/paths.ts';
import { TOKEN_HEADER } from './lab-server.ts';
import type { Row } from './bench.ts';

/** Starts the Traffic Lab server in `lab` and reads its address and token from its ready line. */
export async function startServer(lab: Lab): Promise<{ url: string; token: string; port: number; pid: number }> {
  const proc = await lab.start({
    server: 'traffic-lab',
    script: path.join(ROOT, 'web', 'traffic-lab.ts'),
    args: ['--port', '0'],
  });
  const m = await proc.waitForLine(/open (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]+))/, 10_000);
  return { url: m[1]!, port: Number(m[2]), token: m[3]!, pid: proc.pid };
}

/**
 * Frames drawn per second over `ms`, and the longest gap between two, ms (in the page, by
 * requestAnimationFrame). A string, not a function: tsx's transform would add helpers to a
 * function's source that the page does not have.
 */
function frameRate(page: Page, ms: number): Promise<{ fps: number; maxGapMs: number }> {
  return page.evaluate(`new Promise((resolve) => {
    const span = ${Number(ms)};
    const began = performance.now();
    let frames = 0, last = began, maxGapMs = 0;
    const tick = (t) => {
      frames++;
      maxGapMs = Math.max(maxGapMs, t - last);
      last = t;
      if (t - began < span) requestAnimationFrame(tick);
      else resolve({ fps: (frames * 1000) / (t - began), maxGapMs });
    };
    requestAnimationFrame(tick);
  })`);
}

/** Waits for the run's first answers; throws KIT_ERR_WAIT_TIMEOUT with the page's status when they do not come (a refused setting, say). */
async function waitForAnswers(page: Page): Promise<void> {
  try {
    await page.waitForFunction(
      () =>
        Number(document.getElementById('run-answers')!.textContent) > 0 ||
        document.getElementById('status')!.dataset.state === 'error',
      undefined,
      { timeout: 30_000 },
    );
  } catch {
    /* reported below */
  }
  if (Number(await page.textContent('[data-testid="run-answers"]')) > 0) return;
  throw new KitError('KIT_ERR_WAIT_TIMEOUT', `the page's run did not start: ${await page.textContent('#status')}`);
}

/** A new page of the Traffic Lab at `url`, 1280 × 1000. */
async function openLab(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(url);
  return page;
}

/** The fps part: frames per second over 10 s of a 10-replica simulation at 5,000 req/s in real time. */
export async function fps(browser: Browser, url: string, say: (l: string) => void): Promise<Row> {
  say('fps: simulation mode, 10 replicas, 5,000 req/s, real time, 10 s of frames …');
  const page = await openLab(browser, url);
  await page.fill('input[name=replicas]', '10');
  await page.selectOption('select[name=clients]', 'open');
  await page.fill('input[name=rate]', '5000');
  await page.fill('input[name=durationS]', '60');
  await page.click('#start');
  await waitForAnswers(page);
  const clock = async () => parseFloat((await page.textContent('#clock')) ?? '0');
  const from = await clock();
  const r = await frameRate(page, 10_000);
  const simulatedS = (await clock()) - from;
  const answers = Number(await page.textContent('[data-testid="run-answers"]'));
  await page.click('#stop');
  await page.close();
  return [
    'fps: simulation, 10 replicas, 5,000 req/s, real time',
    `${r.fps.toFixed(1)} frames/s (longest gap ${r.maxGapMs.toFixed(0)} ms; ${simulatedS.toFixed(1)} simulated s in 10 s, ${answers.toLocaleString('en-US')} answers)`,
    '≥ 30',
  ];
}

/** The actions the memory part cycles through, one every 5 s. */
const CYCLE = [
  'freeze',
  'thaw',
  'policy:least-connections',
  'kill',
  'add',
  'policy:power-of-two-choices',
  'policy:round-robin',
] as const;

/** The memory part: server RSS, page heap, answer time and frames at minute 1 and at the end of a live run. */
export async function memory(
  browser: Browser,
  server: { url: string; token: string; port: number; pid: number },
  minutes: number,
  say: (l: string) => void,
): Promise<Row[]> {
  const page = await openLab(browser, server.url);
  const cdp = await page.context().newCDPSession(page);
  await page.selectOption('select[name=mode]', 'live');
  await page.selectOption('select[name=clients]', 'open');
  await page.fill('input[name=rate]', '600');
  await page.fill('input[name=durationS]', String(minutes * 60)); // live mode's most: 600 s
  await page.click('#start');
  await waitForAnswers(page);
  const act = async (body: object) => {
    const r = await fetch(`http://127.0.0.1:${server.port}/live/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TOKEN_HEADER]: server.token },
      body: JSON.stringify(body),
    });
    return r.status;
  };
  const sample = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = (await cdp.send('Runtime.getHeapUsage')).usedSize;
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    const began = performance.now();
    await page.evaluate(`document.getElementById('run-answers').textContent`);
    const answerMs = performance.now() - began;
    const frames = await frameRate(page, 3000);
    return { heap, rss, answerMs, frames };
  };
  const began = performance.now();
  const until = began + minutes * 60_000 - 15_000; // the last sample while the run still goes
  let first: Awaited<ReturnType<typeof sample>> | undefined;
  let step = 0;
  let next = 1;
  const refused: number[] = [];
  while (performance.now() < until) {
    await new Promise((r) => setTimeout(r, 5000));
    const a = CYCLE[step++ % CYCLE.length]!;
    const status = a.startsWith('policy:')
      ? await act({ action: 'policy', policy: a.slice(7) })
      : a === 'add'
        ? await act({ action: 'add' })
        : await act({ action: a, replica: a === 'kill' ? `app${++next}` : 'app1' });
    if (status !== 200) refused.push(status);
    if (!first && performance.now() - began >= 60_000) first = await sample();
    if (step % 12 === 0)
      say(`memory: ${((performance.now() - began) / 60_000).toFixed(1)} of ${minutes} min, ${step} actions`);
  }
  const last = await sample();
  await page.click('#stop');
  await page.close();
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  return [
    [`memory: page server RSS, minute 1 → ${minutes}`, `${mib(first!.rss)} → ${mib(last.rss)}`, 'flat'],
    [`memory: page JS heap after GC, minute 1 → ${minutes}`, `${mib(first!.heap)} → ${mib(last.heap)}`, 'flat'],
    [
      `memory: page answers / frames, minute 1 → ${minutes}`,
      `${first!.answerMs.toFixed(0)} → ${last.answerMs.toFixed(0)} ms / ${first!.frames.fps.toFixed(0)} → ${last.frames.fps.toFixed(0)} fps`,
      'responsive',
    ],
    [
      'memory: actions taken (refused)',
      `${step} (${refused.length}${refused.length ? `: ${[...new Set(refused)].join(', ')}` : ''})`,
      '',
    ],
  ];
}
