/**
 * Where Chromium is: $CHROMIUM_PATH, or Debian's and Ubuntu's `chromium` package. The Traffic
 * Lab's benchmark and its browser tests drive it headless with playwright-core.
 */
import { existsSync } from 'node:fs';
import { KitError } from '../lib/errors.ts';

/** The first Chromium binary found, or undefined. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return [env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (p): p is string => !!p && existsSync(p),
  );
}

/** Launches headless Chromium; throws KIT_ERR_BROWSER_MISSING with the way to install it. */
export async function launchChromium() {
  const executablePath = findChromium();
  if (!executablePath)
    throw new KitError(
      'KIT_ERR_BROWSER_MISSING',
      'no Chromium found',
      'Debian/Ubuntu: sudo apt-get install chromium, or set CHROMIUM_PATH to a Chromium binary',
    );
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, args: ['--no-sandbox'] });
}
