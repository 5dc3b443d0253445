/**
 * The incident server (lesson 10): a small library service with one fault planted in it, for a
 * student to diagnose from the kit's measures and then fix. `--incident <name>` plants one of the
 * faults in incidents/ (each file names the real report it comes from); `--handlers <file>` runs
 * handlers from a file of the student's own (exercises/incidents/<name>.ts) or a reference fix
 * (exercises/lesson-10/fixed/), over the healthy ones. The routes are listed once, in --help.
 * Run alone: `npx tsx servers/incident.ts --incident redos --port 3000`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { formatReady } from '../lib/ready.ts';
import { HttpError, listen, readJsonBody, router, sendJson } from './lib/serve/http.ts';
import { exitWithLauncher } from './lib/serve/lifeline.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import { importFromStudentFile } from './lib/serve/student-file.ts';
import { handlers as healthy } from './incidents/healthy.ts';
import { INCIDENTS } from './incidents/index.ts';
import { PAGE_SIZE, type Book, type Handlers, type Library } from './incidents/types.ts';
import { incidentStats } from './incidents/stats.ts';

const command = defineCommand({
  usage: 'npx tsx servers/incident.ts (--incident <name> | --handlers <file.ts>) [--port <n>]',
  summary:
    'A library service with one fault planted in it (lesson 10). Listens on 127.0.0.1 and prints one ready line.',
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port to listen on (0: any free port)', default: '0' },
    incident: {
      type: 'string',
      valueName: 'name',
      description: `the fault to plant: ${Object.keys(INCIDENTS).join(', ')}, or none`,
    },
    handlers: {
      type: 'string',
      valueName: 'file.ts[,file.ts]',
      description:
        'files exporting `handlers` (Partial<Handlers>) that replace the healthy ones, later over earlier: a fix of your own (TypeScript: compiled with esbuild as the server starts)',
    },
  },
  epilogue:
    'Routes:\n' +
    `  GET  /books?page=<n>        one page of ${PAGE_SIZE} books\n` +
    '  GET  /search?title=<text>   books whose title contains the text\n' +
    "  GET  /cover/<id>            a book's cover file, read from disk\n" +
    '  GET  /export                the whole catalog, gzip-compressed\n' +
    '  POST /loan                  a loan of {"book": <n>} (default 0), written to the "database" (5 ms)\n' +
    '  GET  /__incident/stats      heap (after a collection with ?gc=1), GC time, event-loop utilization and delay',
});

/** Books in the catalog; with a summary each, the catalog file is about 14 MB. */
const BOOKS = 40_000;
/** Bytes per line of the catalog file: every book's JSON fits, padded with spaces. */
const RECORD_BYTES = 360;
/** Cover files on disk; book n has cover n % COVERS. */
const COVERS = 200;
/** How long the "database" takes to write a loan, ms. */
const LOAN_WRITE_MS = 5;

const WORDS = ['river', 'stone', 'winter', 'garden', 'city', 'letters', 'night', 'glass', 'harbor', 'light', 'north'];

/**
 * Titles as readers type them, among the made-up ones: letters beyond ASCII, punctuation and a
 * question mark, in scripts whose letters take two and three bytes in UTF-8. A fix's answers are
 * checked with searches for them (measure/lib/exercise/incident-answers.ts).
 */
const NAMED_TITLES: Readonly<Record<number, string>> = {
  1001: "Où sont les neiges d'antan?",
  2002: 'Señora Ñúñez & the Lighthouse',
  3003: 'Kraków: Letters, 1939-1945',
  4004: 'Die Straße (zweiter Band)',
  5005: 'Why Do Rivers Run North?',
  6006: 'Ханна и сад',
  7007: '東京の夜',
  8008: 'ΑΘΗΝΑ: Ιστορίες',
};

/** The catalog: made up, the same on every start; each book's summary pads its record. */
function makeBooks(): Book[] {
  return Array.from({ length: BOOKS }, (_, id) => ({
    id,
    title: NAMED_TITLES[id] ?? `The ${WORDS[id % WORDS.length]} of ${WORDS[(id * 7) % WORDS.length]} ${id}`,
    author: `Author ${id % 997}`,
    year: 1900 + (id % 125),
    summary: Array.from({ length: 30 }, (_, k) => WORDS[(id + k * 3) % WORDS.length]).join(' '),
  }));
}

/** Writes the catalog file and the covers into a fresh temporary folder, removed when the process exits. */
function makeLibrary(): Library {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-incident-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const books = makeBooks();
  const catalogFile = path.join(dir, 'catalog.dat');
  // Padded in bytes, not characters: a title's letters beyond ASCII take two or three bytes each.
  const record = (b: Book) => {
    const json = JSON.stringify(b);
    return json + ' '.repeat(RECORD_BYTES - 1 - Buffer.byteLength(json)) + '\n';
  };
  writeFileSync(catalogFile, books.map(record).join(''));
  const coversDir = path.join(dir, 'covers');
  mkdirSync(coversDir);
  for (let i = 0; i < COVERS; i++) writeFileSync(path.join(coversDir, `${i}.txt`), `cover ${i}\n`.repeat(200));
  const lowerTitles = books.map((b) => b.title.toLowerCase());
  return {
    catalogFile,
    recordBytes: RECORD_BYTES,
    books,
    lowerTitles,
    catalogJson: Buffer.from(JSON.stringify(books)),
    coversDir,
  };
}

/** The healthy handlers with the planted (`--incident`) or the file's (`--handlers`) over them. */
async function chooseHandlers(incident: string | undefined, file: string | undefined): Promise<Handlers> {
  if ((incident === undefined) === (file === undefined))
    throw new KitError('KIT_ERR_USAGE', 'give one of --incident <name> and --handlers <file.ts>');
  if (file !== undefined) {
    // Several files, comma-separated, are laid over the healthy handlers in order.
    let handlers: Handlers = healthy;
    for (const f of file.split(',').filter(Boolean))
      handlers = { ...handlers, ...(await importFromStudentFile<Partial<Handlers>>(f, 'handlers', 'object')) };
    return handlers;
  }
  if (incident === 'none') return healthy;
  const planted = INCIDENTS[incident!];
  if (!planted)
    throw new KitError(
      'KIT_ERR_USAGE',
      `no incident '${incident}'; the incidents are ${Object.keys(INCIDENTS).join(', ')}`,
    );
  return { ...healthy, ...planted };
}

async function main(): Promise<void> {
  const flags = serverFlags(command);
  const port = intFlag('port', flags.port, 0, 65535, 0);
  const h = await chooseHandlers(flags.incident, flags.handlers);
  const lib = makeLibrary();
  const stats = incidentStats();
  const page = (url: URL) => {
    const raw = url.searchParams.get('page') ?? '0';
    if (!/^\d{1,4}$/.test(raw) || Number(raw) * PAGE_SIZE >= BOOKS)
      throw new HttpError(400, `page must be a whole number from 0 to ${BOOKS / PAGE_SIZE - 1}`);
    return Number(raw);
  };
  const server = http.createServer(
    router({
      '/books': { GET: async (_req, res, url) => sendJson(res, 200, await h.books(lib, page(url), url)) },
      '/search': {
        GET: async (_req, res, url) => {
          const title = url.searchParams.get('title');
          if (!title) throw new HttpError(400, 'title is required');
          sendJson(res, 200, await h.search(lib, title));
        },
      },
      '/cover/:id': {
        GET: async (_req, res, _url, params) => {
          if (!/^\d{1,5}$/.test(params.id!)) throw new HttpError(400, 'id must be a book number');
          const began = performance.now();
          const body = await readFile(path.join(lib.coversDir, `${Number(params.id) % COVERS}.txt`));
          // How long the read took in here, ms: the thread pool's queue included, the client's own loop not.
          const readMs = (performance.now() - began).toFixed(3);
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length, 'x-read-ms': readMs });
          res.end(body);
        },
      },
      '/export': {
        GET: async (_req, res) => {
          const body = await h.exportCatalog(lib);
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-encoding': 'gzip',
            'content-length': body.length,
          });
          res.end(body);
        },
      },
      '/loan': {
        POST: async (req, res) => {
          const body = (await readJsonBody(req, 1024, true)) as { book?: unknown } | null | undefined;
          const book = body && typeof body === 'object' && body.book !== undefined ? body.book : 0;
          if (!Number.isInteger(book) || (book as number) < 0 || (book as number) >= BOOKS)
            throw new HttpError(400, `book must be a whole number from 0 to ${BOOKS - 1}`);
          const title = lib.books[book as number]!.title;
          setTimeout(() => sendJson(res, 201, { book, title, due: 'in 21 days' }), LOAN_WRITE_MS);
        },
      },
      '/__incident/stats': { GET: (_req, res, url) => sendJson(res, 200, stats.read(url.searchParams.has('gc'))) },
    }),
  );
  h.configure(server);
  // Said before the handlers' own SIGTERM listener runs (listeners run in order, in one turn): a
  // check of the stop knows from this line that the signal has reached the service. With no
  // listener of the handlers', the signal is sent again unheard, so the process dies of it as
  // Node's default would have it.
  const said = () => {
    process.stdout.write('stopping: SIGTERM\n');
    if (process.listenerCount('SIGTERM') > 1) return;
    process.off('SIGTERM', said);
    process.kill(process.pid, 'SIGTERM');
  };
  process.on('SIGTERM', said);
  h.stopOnSignal(server, () => process.exit(0));
  process.once('SIGINT', () => process.exit(0));
  exitWithLauncher(() => process.exit(0));
  const bound = await listen(server, port); // 127.0.0.1 only
  process.stdout.write(formatReady('incident', bound, process.pid) + '\n');
}

main().catch(failStartup);
