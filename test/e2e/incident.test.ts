// Proves lesson 10's incidents on real processes: each planted incident (measure/incident.ts
// --incident <name> --quick) prints exactly expected-output/incident/<name>.txt, where its own
// symptom line differs from a healthy service's; the reference fixes (servers/exercises/lesson-10/fixed/),
// all in one server, answer as a healthy service does and print exactly
// expected-output/fixed/incident.txt; the student's loop: `--mine` copies the planted handler, whose
// answers are right and whose symptom shows; and for every incident, fixes a student might write
// that are fast but wrong fail on the answers line, naming the first wrong answer, timing nothing.
// A seeded incident names nothing before the student does, and the name is checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { INCIDENT_NAMES, type IncidentName } from '../../results/incident/result.ts';
import { seedIncident } from '../../results/incident/naming.ts';
import { assertShapeOutput, expectedShape, failOnWarnings, ROOT, runScript } from '../helpers.ts';

failOnWarnings();

for (const name of INCIDENT_NAMES) {
  test(`incident ${name}: planted, its symptom line shows`, async () => {
    const planted = await runScript('measure/incident.ts', ['--quick', '--shape', '--incident', name]);
    assert.deepEqual(planted.stdout.trim().split('\n'), expectedShape(`incident/${name}`), planted.stderr);
    assert.equal(planted.code, 0, planted.stderr);
  });
}

// Each phase watches one mechanism and each fix replaces one handler, so the six fixes laid over
// each other in one run check each fix's line as six runs would, in a sixth of the time.
test("the six reference fixes, in one server: a healthy service's lines", async () => {
  const fixes = INCIDENT_NAMES.map((name) => `servers/exercises/lesson-10/fixed/${name}.ts`).join(',');
  const fixed = await runScript('measure/incident.ts', ['--quick', '--shape', '--handlers', fixes]);
  assertShapeOutput(fixed.stdout, 'fixed/incident', fixed.stderr);
  assert.equal(fixed.code, 0, fixed.stderr);
});

test('--mine: the unedited copy answers right and fails its symptom line', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-exercises-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { NSL_EXERCISES_DIR: dir };
  const copy = path.join(dir, 'incidents', 'cache.ts');
  const unedited = await runScript('measure/incident.ts', ['--quick', '--shape', '--mine', 'cache'], env);
  assert.ok(existsSync(copy), unedited.stderr);
  assert.match(
    unedited.stderr,
    /copied servers\/exercises\/lesson-10\/cache\.ts to .*cache\.ts: edit it, then run this again/,
  );
  assert.equal(unedited.code, 1, unedited.stderr);
  const lines = unedited.stdout.trim().split('\n');
  assert.equal(lines[0], 'incident  answers  same-as-healthy');
  assert.ok(lines.includes('incident  heap-under-new-pages  grows'), unedited.stdout);
});

const TYPES = path.join(ROOT, 'servers', 'incidents', 'types.ts');
/** A handlers file: the types import, then `body`. */
const handlersFile = (body: string) =>
  `import { PAGE_SIZE, type Handlers, type Library } from '${TYPES}';\nvoid PAGE_SIZE;\n` +
  `export const handlers: Partial<Handlers> = {\n${body}\n};\n`;

/** Fixes that are fast but wrong, by incident, each with the first wrong answer its run must name. */
const CHEATS: Record<IncidentName, { why: string; body: string; wrong: RegExp }[]> = {
  redos: [
    {
      why: 'a linear check, but a search that compares without lower-casing',
      body: "  search(lib: Library, title: string) {\n    if (!/^[\\p{L}\\p{N} .,:;'!?&()-]{1,200}$/u.test(title)) return { error: 'not a title' };\n    return lib.books.filter((b) => b.title.includes(title)).slice(0, PAGE_SIZE);\n  },",
      wrong: /GET \/search\?title=SEÑORA ÑÚÑEZ &: the healthy service 200 \[1 book: #2002\], yours 200 \[\]/,
    },
    {
      why: 'no check of the title at all',
      body: '  search(lib: Library, title: string) {\n    const t = title.toLowerCase();\n    return lib.books.filter((_b, i) => lib.lowerTitles[i]!.includes(t)).slice(0, PAGE_SIZE);\n  },',
      wrong: /title=50% off: the healthy service 200 \{"error":"not a title"\}, yours 200 \[\]/,
    },
  ],
  pool: [
    {
      why: 'the catalog sent as it is, not gzip',
      body: '  exportCatalog: async (lib: Library) => lib.catalogJson,',
      wrong: /GET \/export, gunzipped: the healthy service gunzips to [\d,]+ bytes, yours does not gunzip/,
    },
    {
      why: 'compressed once, with deflate instead of gzip',
      body: "  exportCatalog: (() => {\n    let once: Promise<Buffer> | undefined;\n    return async (lib: Library) => (once ??= import('node:zlib').then((z) => z.deflateSync(lib.catalogJson)));\n  })(),",
      wrong: /GET \/export, gunzipped: .*yours does not gunzip/,
    },
  ],
  keepalive: [
    {
      why: 'idle connections kept past the balancer, and every socket cut after 250 ms without traffic',
      body: '  configure(server) {\n    server.keepAliveTimeout = 65_000;\n    server.timeout = 250;\n  },',
      // Two answers lose their socket to the 250 ms cut. The loans held at SIGTERM always do; the
      // first export does only where compressing 11 MB takes longer than 250 ms (most laptops, not
      // every CI machine), and it is asked first. Either is the same cut, so either line is right.
      wrong:
        /GET \/export, gunzipped: the healthy service gunzips to [\d,]+ bytes, yours no answer|\d loans in flight at SIGTERM: the healthy service \d answered in full, yours 0 answered in full/,
    },
  ],
  shutdown: [
    {
      why: 'exit at once on SIGTERM',
      body: "  stopOnSignal(_server, exit) {\n    process.once('SIGTERM', () => exit());\n  },",
      wrong: /6 loans in flight at SIGTERM: the healthy service 6 answered in full, yours 0 answered in full/,
    },
    {
      why: 'every connection closed at SIGTERM, busy or not',
      body: "  stopOnSignal(server, exit) {\n    process.once('SIGTERM', () => {\n      server.close(exit);\n      server.closeAllConnections();\n    });\n  },",
      wrong: /6 loans in flight at SIGTERM: .*yours 0 answered in full/,
    },
  ],
  cache: [
    {
      why: 'no page at all',
      body: '  books: () => [],',
      wrong: /GET \/books\?page=0: the healthy service 200 \[20 books: #0 … #19\], yours 200 \[\]/,
    },
    {
      why: 'pages kept by session, the wrong key',
      body: "  books: (() => {\n    const pages = new Map<string, unknown>();\n    return (lib: Library, page: number, url: URL) => {\n      const key = url.searchParams.get('session') ?? String(page);\n      if (!pages.has(key)) pages.set(key, lib.books.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE));\n      return pages.get(key);\n    };\n  })(),",
      wrong:
        /GET \/books\?page=8&session=s1: the healthy service 200 \[20 books: #160 … #179\], yours 200 \[20 books: #140 … #159\]/,
    },
  ],
  'sync-read': [
    {
      why: 'the catalog read once, its bytes taken as latin1',
      body: "  books: (() => {\n    let file: Promise<Buffer> | undefined;\n    return async (lib: Library, page: number) => {\n      file ??= import('node:fs/promises').then((f) => f.readFile(lib.catalogFile));\n      const from = page * PAGE_SIZE * lib.recordBytes;\n      return (await file).subarray(from, from + PAGE_SIZE * lib.recordBytes).toString('latin1').split('\\n').filter((l) => l.trim()).map((l) => JSON.parse(l));\n    };\n  })(),",
      wrong:
        /GET \/books\?page=50: the healthy service 200 \[20 books: #1000 … #1019\], yours 200 \[20 books: #1000 … #1019\], other fields/,
    },
    {
      why: 'the catalog read once as text, a page cut out by characters, not bytes',
      body: "  books: (() => {\n    let text: Promise<string> | undefined;\n    return async (lib: Library, page: number) => {\n      text ??= import('node:fs/promises').then((f) => f.readFile(lib.catalogFile, 'utf8'));\n      const from = page * PAGE_SIZE * lib.recordBytes;\n      return (await text).slice(from, from + PAGE_SIZE * lib.recordBytes).split('\\n').filter((l) => l.trim()).map((l) => JSON.parse(l));\n    };\n  })(),",
      wrong: /GET \/books\?page=50: the healthy service 200 \[20 books: #1000 … #1019\], yours 500/,
    },
  ],
};

for (const name of INCIDENT_NAMES) {
  test(`--mine ${name}: fixes that are fast but wrong fail on the answers line`, async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-exercises-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(path.join(dir, 'incidents'));
    for (const cheat of CHEATS[name]) {
      writeFileSync(path.join(dir, 'incidents', `${name}.ts`), handlersFile(cheat.body));
      const r = await runScript('measure/incident.ts', ['--quick', '--shape', '--mine', name], {
        NSL_EXERCISES_DIR: dir,
      });
      assert.equal(r.code, 1, `${cheat.why}: ${r.stdout}${r.stderr}`);
      assert.deepEqual(r.stdout.trim().split('\n'), ['incident  answers  wrong'], `${cheat.why}: ${r.stderr}`);
      const first = r.stderr.split('\n').find((l) => l.startsWith('  First wrong answer: '));
      assert.match(first ?? r.stderr, cheat.wrong, cheat.why);
    }
  });
}

test('a seeded incident: nothing names it before the student does, and the name is checked', async () => {
  assert.equal(seedIncident(5), 'cache', 'seed 5 plants cache');
  const r = await runScript('measure/incident.ts', ['--quick', '--seed', '5', '--name', 'cache']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /Lesson 10 · incident: incident #5 \(which one is for you to say\)/);
  assert.match(r.stdout, /Heaviest functions by self time, new pages: /);
  // No shape lines and no handler file in the profile before the name.
  assert.doesNotMatch(
    r.stdout,
    /Shape, compared with|incident {2}heap-under-new-pages|cache\.ts|incidents\/|lesson-10\//,
    r.stdout,
  );
  assert.match(
    r.stdout,
    /Right: it is cache \(reported in imgproxy\/imgproxy-node#10\): heap-under-new-pages reads grows, where a healthy service's reads flat/,
  );
});
