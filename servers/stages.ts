/**
 * The lesson 9 server: the loan service with every stage of a request's life timestamped
 * (servers/lib/stages/stamps.ts) and sent as a Server-Timing header.
 *
 *   POST /loans                    a loan: body read, one SQLite read, one small pooled scrypt
 *   GET  /books/:id                one SQLite read (open it in a browser to see Server-Timing)
 *   GET  /member/verify-blocking   lesson 3's heavy scrypt on the event loop
 *   GET  /member/verify-pooled     the same scrypt on the thread pool
 *   GET  /catalog/export?mb=N      a large response, written with backpressure (or not)
 *   GET  /catalog/export/running   how many export loops are in progress (a loop that never ends shows)
 *   POST /upload?check=early|late  a body limit, checked before or after reading the body
 *   GET  /stages/:id               the stages of the request sent with ?sid=<id>, as JSON
 *
 * Run alone: `npx tsx servers/stages.ts --port 3000`; it prints one ready line when listening.
 */
import http from 'node:http';
import { assertNodeVersion } from '../lib/errors.ts';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { formatReady } from '../lib/ready.ts';
import { listen, router, sendJson } from './lib/serve/http.ts';
import { exitWithLauncher } from './lib/serve/lifeline.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import {
  formatCost,
  hashOnEventLoop,
  hashOnThreadPool,
  HEAVY_COST,
  heavyCostFrom,
  LIGHT_COST,
} from './lib/cpu/scrypt-cost.ts';
import { openDatabase } from './lib/state/sqlite.ts';
import type { ExportLoop } from './lib/stages/export.ts';
import { importFromStudentFile } from './lib/serve/student-file.ts';
import { continueOrRefuse, DEFAULT_BODY_LIMIT, seedCatalogue, stageRoutes } from './lib/stages/routes.ts';
import { badStageId, STAGE_ID_RULE, StageRecorder, stageNetServer } from './lib/stages/stamps.ts';

const spec = defineCommand({
  usage: 'npx tsx servers/stages.ts [--port <n>] [--cost N=2^16,r=8,p=4] [--body-limit <bytes>]',
  summary:
    'The loan service of lesson 9: it timestamps every stage of each request (accept, first bytes read, ' +
    'headers parsed, handler, finish, close), sends them as a Server-Timing header, and answers ' +
    'GET /stages/<id> with those of the request sent with ?sid=<id>. Listens on 127.0.0.1 and prints one ready line.',
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: '3000' },
    cost: {
      type: 'string',
      valueName: 'N=..,r=..,p=..',
      description: `scrypt cost of /member/verify-* (default ${formatCost(HEAVY_COST)})`,
    },
    'body-limit': {
      type: 'string',
      valueName: 'bytes',
      description: 'the largest body /upload accepts',
      default: String(DEFAULT_BODY_LIMIT),
    },
    export: {
      type: 'string',
      valueName: 'file.ts',
      description:
        "lesson 9's exercise: the export that honours backpressure runs this file's writeExport (TypeScript: compiled with esbuild as the server starts)",
    },
  },
  epilogue: [
    'Try:',
    `  curl -si -X POST '127.0.0.1:3000/loans?sid=a1' -d '{"book":7,"member":"ann"}'   (see its Server-Timing header)`,
    '  curl -s 127.0.0.1:3000/stages/a1',
    '  open http://127.0.0.1:3000/books/7 in a browser: its developer tools show the same stages (Network, Timing)',
    `  head -c 8000000 /dev/zero | curl -si -X POST '127.0.0.1:3000/upload?check=early' --data-binary @-   (413 before the body is sent)`,
  ].join('\n'),
});

async function main(): Promise<void> {
  assertNodeVersion();
  const flags = serverFlags(spec);
  const port = intFlag('port', flags.port, 0, 65535, 3000);
  const limit = intFlag('body-limit', flags['body-limit'], 1, 1024 ** 3, DEFAULT_BODY_LIMIT);
  const heavy = heavyCostFrom(flags.cost);
  const mine =
    flags.export === undefined
      ? undefined
      : await importFromStudentFile<ExportLoop>(flags.export, 'writeExport', 'function');
  const db = openDatabase(':memory:');
  seedCatalogue(db);
  const rec = new StageRecorder();
  const check =
    (pooled: boolean): http.RequestListener =>
    async (req, res) => {
      rec.stamp(req, 'handler-start');
      if (pooled) await hashOnThreadPool('correct horse battery staple', heavy);
      else hashOnEventLoop('correct horse battery staple', heavy);
      rec.stamp(req, 'scrypt');
      rec.stamp(req, 'handler-end');
      const timing = rec.serverTiming(req);
      rec.stamp(req, 'response-headers-written');
      sendJson(
        res,
        200,
        { verified: true, hashedOn: pooled ? 'thread-pool' : 'event-loop' },
        { 'server-timing': timing },
      );
    };
  const routes = router({
    ...stageRoutes(rec, db, LIGHT_COST, limit, mine),
    '/member/verify-blocking': { GET: check(false) },
    '/member/verify-pooled': { GET: check(true) },
  });
  const httpServer = http.createServer((req, res) =>
    badStageId(req.url) ? sendJson(res, 400, { error: `sid: ${STAGE_ID_RULE}` }) : routes(req, res),
  );
  httpServer.on('checkContinue', continueOrRefuse(rec, httpServer, limit));
  const netServer = stageNetServer();
  rec.handOff(netServer, httpServer);
  const bound = await listen(netServer as http.Server, port);
  const stop = () => process.exit(0); // nothing to drain: a lesson server, stopped between runs
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  exitWithLauncher(stop);
  process.stdout.write(formatReady('stages', bound, process.pid) + '\n');
}

main().catch(failStartup);
