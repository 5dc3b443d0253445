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
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
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
  check(selector: string): Promise<void>;
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
const onPath = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim() || undefined;

/** Firefox: $FIREFOX_PATH, Debian's firefox-esr or a firefox on the PATH. */
export const FIREFOX = firstExisting([process.env.FIREFOX_PATH, '/usr/bin/firefox-esr', '/usr/bin/firefox']);
export const noFirefox = FIREFOX ? false : 'no Firefox found (Debian/Ubuntu: apt-get install firefox-esr, or set FIREFOX_PATH); .ci/run installs it';

/** WebKitGTK's WebDriver and the MiniBrowser it drives (Debian: the webkit2gtk-driver package). */
const WEBKIT_DRIVER = firstExisting([process.env.WEBKIT_WEBDRIVER_PATH, '/usr/bin/WebKitWebDriver']);
const MINIBROWSER = (() => {
  for (const lib of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']) {
    if (!existsSync(lib)) continue;
    for (const dir of readdirSync(lib).filter((d) => d.startsWith('webkit2gtk-')).sort().reverse()) {
      if (existsSync(path.join(lib, dir, 'MiniBrowser'))) return path.join(lib, dir, 'MiniBrowser');
    }
  }
  return undefined;
})();
/** With no display (CI, a server), WebKitGTK needs a virtual one. */
const XVFB_RUN = process.env.DISPLAY ? undefined : onPath('xvfb-run');
export const noWebKit =
  !WEBKIT_DRIVER || !MINIBROWSER
    ? 'no WebKitGTK WebDriver found (Debian/Ubuntu: apt-get install webkit2gtk-driver xvfb); .ci/run installs it'
    : !process.env.DISPLAY && !XVFB_RUN
      ? 'no display and no xvfb-run for WebKitGTK (Debian/Ubuntu: apt-get install xvfb)'
      : false;

/** Opens `url` in headless Firefox. */
export async function openFirefox(url: string): Promise<PageDriver> {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX!, headless: true });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1000 });
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e instanceof Error ? e.message : String(e)));
  await page.goto(url);
  return {
    name: `Firefox ${(await browser.version()).replace(/^firefox\//, '')}`,
    select: async (s, v) => void (await page.select(s, v)),
    fill: async (s, v) => {
      await page.$eval(s, (el) => ((el as HTMLInputElement).value = ''));
      await page.type(s, v);
    },
    check: async (s) => {
      if (!(await page.$eval(s, (el) => (el as HTMLInputElement).checked))) await page.click(s);
    },
    click: (s) => page.click(s),
    text: (s) => page.$eval(s, (el) => el.textContent ?? ''),
    waitFor: async (check, arg, ms) =>
      void (await page.waitForFunction(check, { timeout: ms }, arg).catch(() => Promise.reject(new Error(`Firefox: not true within ${ms} ms: ${check} (${arg})`)))),
    errors: async () => [...errors],
    screenshot: async (file) => void (await page.screenshot({ path: file as `${string}.png`, fullPage: true })),
    close: () => browser.close(),
  };
}

/** A free port on 127.0.0.1 for WebKitWebDriver, which takes a port number and not 0. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Starts WebKitWebDriver (under xvfb-run without a display) in its own process group; resolves when its /status says ready. */
async function startWebKitDriver(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const argv = [WEBKIT_DRIVER!, `--port=${port}`, '--host=127.0.0.1'];
  const [cmd, ...args] = XVFB_RUN ? [XVFB_RUN, '-a', ...argv] : argv;
  // LANG=C.UTF-8, the default of Debian's and Docker's images: WebKitGTK 2.50 then reports
  // navigator.language as "C", which the pages must survive (web/page/locale.ts). Fixed here so
  // that every machine tests that case.
  const env: NodeJS.ProcessEnv = { ...process.env, LANG: 'C.UTF-8' };
  delete env.LC_ALL;
  const child = spawn(cmd!, args, { stdio: 'ignore', detached: true, env });
  const url = `http://127.0.0.1:${port}`;
  // WebDriver's own readiness signal is GET /status answering {ready: true}; bounded at 15 s.
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`WebKitWebDriver exited (${child.exitCode}) before it was ready`);
    const ready = await fetch(`${url}/status`)
      .then((r) => r.json() as Promise<{ value?: { ready?: boolean } }>)
      .then((b) => b.value?.ready === true, () => false);
    if (ready) return { child, url };
    await new Promise((r) => setTimeout(r, 100));
  }
  killGroup(child);
  throw new Error('WebKitWebDriver was not ready within 15 s');
}

/** True while any process of the group `pgid` exists. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILLs a detached child's whole process group (xvfb-run, Xvfb, the driver, MiniBrowser and its web processes). */
function killGroup(child: ChildProcess): void {
  if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGKILL');
}

/** Ends the driver's process group: SIGTERM, then SIGKILL after 3 s; rejects if any of it is still there after 5 s. */
async function endGroup(child: ChildProcess): Promise<void> {
  const pgid = child.pid!;
  if (groupAlive(pgid)) process.kill(-pgid, 'SIGTERM');
  const deadline = Date.now() + 5000;
  for (let killed = false; groupAlive(pgid); await new Promise((r) => setTimeout(r, 50))) {
    if (!killed && Date.now() > deadline - 2000) {
      killGroup(child);
      killed = true;
    }
    if (Date.now() > deadline) throw new Error(`WebKitGTK's processes (group ${pgid}) still alive 5 s after SIGTERM`);
  }
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
      .withCapabilities({ browserName: 'MiniBrowser', 'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] } })
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
      check: async (s) => {
        const el = await find(s);
        if (!(await el.isSelected())) await el.click();
      },
      click: async (s) => (await find(s)).click(),
      text: async (s) => String(await driver.executeScript(`return document.querySelector(arguments[0]).textContent`, s)),
      waitFor: async (check, arg, ms) => {
        await driver.wait(async () => Boolean(await driver.executeScript(check, arg)), ms, `WebKitGTK: not true within ${ms} ms: ${check} (${arg})`);
      },
      errors: async () => ((await driver.executeScript('return window.__labErrors')) as string[] | null) ?? ['the error hook is gone: the page reloaded'],
      screenshot: async (file) => {
        const { writeFile } = await import('node:fs/promises');
        await writeFile(file, Buffer.from(await driver.takeScreenshot(), 'base64'));
      },
      close: async () => {
        await driver.quit().catch(() => undefined);
        await endGroup(driverProcess.child);
      },
    };
  } catch (e) {
    killGroup(driverProcess.child);
    throw e;
  }
}
