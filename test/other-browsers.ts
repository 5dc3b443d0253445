/**
 * The Traffic Lab page in the two engines besides Chromium that students use: Gecko (Firefox,
 * driven by puppeteer-core over WebDriver BiDi) and WebKit (Safari's engine; WebKitGTK's
 * MiniBrowser driven by selenium-webdriver through WebKitGTK's own WebKitWebDriver, under Xvfb
 * when there is no display). Safari itself runs only on macOS; WebKitGTK shares its engine
 * (WebCore and JavaScriptCore), which is what the page depends on.
 *
 * Both are wrapped in one small interface, so a browser test is written once and run in each.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { groupAlive, signalGroup, terminateGroup, waitUntilGone } from '../lib/terminate.ts';
import { existsSync, readdirSync } from 'node:fs';
import { freePort } from '../servers/lib/serve/http.ts';
import { toolSkip } from './helpers.ts';
import path from 'node:path';

/**
 * A check run in the page with one string argument. It travels as source text, so it must use
 * nothing from the test's scope; it is passed to the driver as a function, never as a string that
 * the page would have to eval (the page's CSP forbids eval, and Firefox reports each refusal).
 */
export type PageCheck = (arg: string) => unknown;

/** What a test does with a page, in any of the engines. Selectors are CSS. */
export interface PageDriver {
  readonly name: string;
  select(selector: string, value: string): Promise<void>;
  fill(selector: string, value: string): Promise<void>;
  /** Ticks a checkbox, or unticks it with `on` false. */
  check(selector: string, on?: boolean): Promise<void>;
  click(selector: string): Promise<void>;
  text(selector: string): Promise<string>;
  /** Resolves once `check(arg)` is truthy in the page; rejects after `ms`, naming the check. */
  waitFor(check: PageCheck, arg: string, ms: number): Promise<void>;
  /** Console errors, uncaught errors and unhandled rejections so far. */
  errors(): Promise<string[]>;
  screenshot(file: string): Promise<void>;
  close(): Promise<void>;
}

const firstExisting = (paths: (string | undefined)[]) => paths.find((p): p is string => !!p && existsSync(p));
const onPath = (cmd: string) =>
  spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim() || undefined;

/** Firefox: $FIREFOX_PATH, Debian's firefox-esr or a firefox on the PATH. */
const FIREFOX = firstExisting([process.env.FIREFOX_PATH, '/usr/bin/firefox-esr', '/usr/bin/firefox']);
export const noFirefox = toolSkip(
  'firefox-esr',
  FIREFOX
    ? false
    : 'no Firefox found (Debian: apt-get install firefox-esr; Ubuntu: the firefox package; or set FIREFOX_PATH); .ci/run installs it where apt-get can',
);

/** WebKitGTK's WebDriver and the MiniBrowser it drives (Debian: the webkit2gtk-driver package). */
const WEBKIT_DRIVER = firstExisting([process.env.WEBKIT_WEBDRIVER_PATH, '/usr/bin/WebKitWebDriver']);
const MINIBROWSER = (() => {
  for (const lib of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']) {
    if (!existsSync(lib)) continue;
    for (const dir of readdirSync(lib)
      .filter((d) => d.startsWith('webkit2gtk-'))
      .sort()
      .reverse()) {
      if (existsSync(path.join(lib, dir, 'MiniBrowser'))) return path.join(lib, dir, 'MiniBrowser');
    }
  }
  return undefined;
})();
/** With no display (CI, a server), WebKitGTK needs a virtual one. */
const XVFB_RUN = process.env.DISPLAY ? undefined : onPath('xvfb-run');
export const noWebKit = toolSkip(
  'WebKitWebDriver',
  !WEBKIT_DRIVER || !MINIBROWSER
    ? 'no WebKitGTK WebDriver found (Debian/Ubuntu: apt-get install webkit2gtk-driver xvfb); .ci/run installs it'
    : !process.env.DISPLAY && !XVFB_RUN
      ? 'no display and no xvfb-run for WebKitGTK (Debian/Ubuntu: apt-get install xvfb)'
      : false,
);

/** Opens `url` in headless Firefox. */
export async function openFirefox(url: string): Promise<PageDriver> {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX!, headless: true });
  const errors: string[] = [];
  const opened = async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 1000 });
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e instanceof Error ? e.message : String(e)));
    await page.goto(url);
    return { page, version: await browser.version() };
  };
  const { page, version } = await opened().catch(async (e) => {
    await browser.close().catch(() => undefined);
    throw e;
  });
  return {
    name: `Firefox ${version.replace(/^firefox\//, '')}`,
    select: async (s, v) => void (await page.select(s, v)),
    fill: async (s, v) => {
      await page.$eval(s, (el) => ((el as HTMLInputElement).value = ''));
      await page.type(s, v);
    },
    check: async (s, on = true) => {
      if ((await page.$eval(s, (el) => (el as HTMLInputElement).checked)) !== on) await page.click(s);
    },
    click: (s) => page.click(s),
    text: (s) => page.$eval(s, (el) => el.textContent ?? ''),
    waitFor: async (check, arg, ms) =>
      void (await page
        .waitForFunction(check, { timeout: ms }, arg)
        .catch(() => Promise.reject(new Error(`Firefox: not true within ${ms} ms: ${check} (${arg})`)))),
    errors: async () => [...errors],
    screenshot: async (file) => void (await page.screenshot({ path: file as `${string}.png`, fullPage: true })),
    close: () => browser.close(),
  };
}

/** Process groups of the WebKit drivers still running: SIGKILLed if the test process exits first (a timeout, Ctrl-C). */
const liveGroups = new Set<number>();
process.on('exit', () => {
  for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
});

/** Ends a driver's process group (xvfb-run, Xvfb, the driver, MiniBrowser and its web processes): SIGTERM, SIGKILL after 2 s. */
async function endGroup(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  await terminateGroup(child.pid!, exited);
  liveGroups.delete(child.pid!);
  if (!(await waitUntilGone(() => groupAlive(child.pid!), 3000)))
    throw new Error(`WebKitGTK's processes (group ${child.pid}) still alive after SIGKILL`);
}

/** Starts WebKitWebDriver (under xvfb-run without a display) in its own process group; resolves when its /status says ready. */
async function startWebKitDriver(): Promise<{ url: string; end: () => Promise<void> }> {
  const port = await freePort(); // WebKitWebDriver takes a port number, not 0
  const argv = [WEBKIT_DRIVER!, `--port=${port}`, '--host=127.0.0.1'];
  const [cmd, ...args] = XVFB_RUN ? [XVFB_RUN, '-a', ...argv] : argv;
  // LANG=C.UTF-8, the default of Debian's and Docker's images: WebKitGTK 2.50 then reports
  // navigator.language as "C", which the pages must survive (web/page/locale.ts). Fixed here so
  // that every machine tests that case.
  const env: NodeJS.ProcessEnv = { ...process.env, LANG: 'C.UTF-8' };
  delete env.LC_ALL;
  const child = spawn(cmd!, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const failed = new Promise<never>((_, reject) =>
    child.once('error', (e) => reject(new Error(`cannot start ${cmd}: ${e.message}`))),
  );
  if (child.pid) liveGroups.add(child.pid);
  const end = () => (child.pid ? endGroup(child, exited) : Promise.resolve());
  const url = `http://127.0.0.1:${port}`;
  // WebDriver's own readiness signal is GET /status answering {ready: true}; bounded at 15 s.
  const ready = async () => {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null)
        throw new Error(
          `WebKitWebDriver exited (${child.exitCode}) before it was ready: ${stderr.trim() || 'no output'}`,
        );
      const up = await fetch(`${url}/status`)
        .then((r) => r.json() as Promise<{ value?: { ready?: boolean } }>)
        .then(
          (b) => b.value?.ready === true,
          () => false,
        );
      if (up) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`WebKitWebDriver was not ready within 15 s: ${stderr.trim() || 'no output'}`);
  };
  try {
    await Promise.race([ready(), failed]);
  } catch (e) {
    await end().catch(() => undefined);
    throw e;
  }
  return { url, end };
}

const ERROR_HOOK = `
  window.__labErrors = [];
  addEventListener('error', (e) => window.__labErrors.push(e.message));
  addEventListener('unhandledrejection', (e) => window.__labErrors.push(String(e.reason)));
  const original = console.error.bind(console);
  console.error = (...a) => { window.__labErrors.push(a.map(String).join(' ')); original(...a); };`;

/**
 * Opens `url` in WebKitGTK's MiniBrowser. WebDriver classic has no console log, so the page's
 * errors are collected by a hook installed after load: an error while the page loads shows
 * instead as the page never reaching its ready status (the tests wait for it).
 */
export async function openWebKit(url: string): Promise<PageDriver> {
  const { Builder, By } = await import('selenium-webdriver');
  const { Select } = await import('selenium-webdriver/lib/select.js');
  const driverProcess = await startWebKitDriver();
  try {
    const driver = await new Builder()
      .usingServer(driverProcess.url)
      .withCapabilities({
        browserName: 'MiniBrowser',
        'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
      })
      .build();
    await driver.manage().window().setRect({ width: 1280, height: 1000 });
    await driver.get(url);
    await driver.executeScript(ERROR_HOOK);
    const caps = await driver.getCapabilities();
    const find = (s: string) => driver.findElement(By.css(s));
    return {
      name: `WebKitGTK ${caps.getBrowserVersion()}`,
      select: async (s, v) => new Select(await find(s)).selectByValue(v),
      fill: async (s, v) => {
        const el = await find(s);
        await el.clear();
        await el.sendKeys(v);
      },
      check: async (s, on = true) => {
        const el = await find(s);
        if ((await el.isSelected()) !== on) await el.click();
      },
      click: async (s) => (await find(s)).click(),
      text: async (s) =>
        String(await driver.executeScript(`return document.querySelector(arguments[0]).textContent`, s)),
      waitFor: async (check, arg, ms) => {
        await driver.wait(
          async () => Boolean(await driver.executeScript(check, arg)),
          ms,
          `WebKitGTK: not true within ${ms} ms: ${check} (${arg})`,
        );
      },
      errors: async () =>
        ((await driver.executeScript('return window.__labErrors')) as string[] | null) ?? [
          'the error hook is gone: the page reloaded',
        ],
      screenshot: async (file) => {
        const { writeFile } = await import('node:fs/promises');
        await writeFile(file, Buffer.from(await driver.takeScreenshot(), 'base64'));
      },
      close: async () => {
        await driver.quit().catch(() => undefined);
        await driverProcess.end();
      },
    };
  } catch (e) {
    await driverProcess.end().catch(() => undefined);
    throw e;
  }
}
