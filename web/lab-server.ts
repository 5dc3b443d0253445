/**
 * The Traffic Lab's HTTP server: serves the page (bundled from web/page with esbuild when the
 * server starts) on 127.0.0.1 only, and treats every request as possibly hostile:
 *   - Host must name this server (127.0.0.1 or localhost, this port): a DNS-rebinding page whose
 *     name resolves to 127.0.0.1 sends its own name and gets 403;
 *   - Origin, when a browser sends one, must be this server's: another site's page gets 403;
 *   - every route needs the random token printed in the URL (as Jupyter's does), as ?token= or
 *     the x-traffic-lab-token header.
 * The page's own security headers forbid framing and scripts from anywhere else.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT } from '../measure/lib/harness/paths.ts';
import { sendJson } from '../servers/lib/serve/http.ts';
import type { LiveHost } from './live-routes.ts';

export const TOKEN_HEADER = 'x-traffic-lab-token';
const PAGE = path.join(ROOT, 'web', 'page');

/** Why a request is refused (403), or undefined when it may go on. */
function refusal(
  req: { host?: string; origin?: string; token?: string },
  port: number,
  token: string,
): string | undefined {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (!req.host || !hosts.includes(req.host.toLowerCase()))
    return `Host must be ${hosts.join(' or ')}; got ${JSON.stringify(req.host ?? null)}`;
  if (req.origin !== undefined && !hosts.map((h) => `http://${h}`).includes(req.origin.toLowerCase()))
    return `Origin ${JSON.stringify(req.origin)} is not this page's`;
  if (!req.token || !sameSecret(req.token, token))
    return 'the token is missing or wrong: open the URL the server printed';
  return undefined;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The page's script: web/page/app.ts and what it imports (the simulator, uPlot), one ES module;
 * or another entry in web/page (web/bench.ts bundles bench-engine.ts as a classic script).
 */
export async function bundlePage(entry = 'app.ts', format: 'esm' | 'iife' = 'esm'): Promise<string> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    entryPoints: [path.join(PAGE, entry)],
    bundle: true,
    format,
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
    // The page needs only build(). The package's browser bundle also carries its log encoding,
    // which probes for zlib with eval() when it loads: the page's CSP refuses that, and Firefox
    // reports each refusal as a console error. The path is absolute because esbuild resolves an
    // alias from the working directory, which need not be the kit's.
    alias: { 'hdr-histogram-js': createRequire(import.meta.url).resolve('hdr-histogram-js/dist/HistogramBuilder.js') },
  });
  return out.outputFiles[0]!.text;
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The assets, read once: path → [content type, body]. */
export function pageAssets(script: string, token: string): Map<string, [string, string]> {
  const uplotCss = createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css');
  return new Map([
    [
      '/',
      ['text/html; charset=utf-8', readFileSync(path.join(PAGE, 'index.html'), 'utf8').replaceAll('__TOKEN__', token)],
    ],
    ['/app.js', ['text/javascript; charset=utf-8', script]],
    ['/page.css', ['text/css; charset=utf-8', readFileSync(path.join(PAGE, 'page.css'), 'utf8')]],
    ['/uplot.css', ['text/css; charset=utf-8', readFileSync(uplotCss, 'utf8')]],
  ]);
}

/** The request listener: the checks above, then live mode's routes (web/live-routes.ts), then the assets (GET or HEAD only). */
export function labListener(
  assets: Map<string, [string, string]>,
  port: () => number,
  token: string,
  live?: LiveHost,
): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const refused = refusal(
      {
        host: req.headers.host,
        origin: req.headers.origin,
        token: url.searchParams.get('token') ?? header(req, TOKEN_HEADER),
      },
      port(),
      token,
    );
    if (refused) return sendJson(res, 403, { error: 'forbidden', reason: refused });
    if (live?.handle(req, res, url)) return;
    const asset = assets.get(url.pathname);
    if (!asset) return sendJson(res, 404, { error: 'not found', path: url.pathname });
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return sendJson(res, 405, { error: 'method not allowed', allowed: ['GET', 'HEAD'] }, { allow: 'GET, HEAD' });
    const [type, body] = asset;
    res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...SECURITY_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
