// Proves the lesson 9 server on a real process: every stage of a loan in order on one clock, a
// kept connection's later requests without accept, Server-Timing in the header and in a real
// Chromium, an early body limit refused before the body is sent and a late one after reading it,
// the export's queue with and without backpressure, and a 400 naming the field for bad input.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Lab } from '../../measure/lib/process/lab.ts';
import type { ServerProcess } from '../../measure/lib/process/launch.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { upload } from '../../measure/lib/load/raw-upload.ts';
import { SERVER_STAGES, type ServerRecord } from '../../servers/lib/stages/stamps.ts';
import { launchChromium } from '../../web/browser.ts';
import { CHROMIUM, noBrowser } from '../traffic-lab-helpers.ts';
import { failOnWarnings } from '../helpers.ts';
import type { ErrorBody, ProxyStages } from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
let server: ServerProcess;
const LOAN = { book: 7, member: 'ann' };

before(async () => {
  server = await lab.start({
    server: 'stages',
    args: ['--port', '0', '--cost', 'N=2^12,r=8,p=1', '--body-limit', '65536'],
  });
});
after(() => lab.close());

const record = async (sid: string) => (await probe<ServerRecord>(`${server.url}/stages/${sid}`)).body;

test('a loan on its own connection: every server stage once, in the lifecycle order, from accept to close', async () => {
  const r = await probe(`${server.url}/loans?sid=fresh-1`, {
    method: 'POST',
    json: LOAN,
    headers: { connection: 'close' },
  });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body, { loan: { book: 7, title: 'Book 7', member: 'ann' } });
  const rec = await record('fresh-1');
  assert.deepEqual(
    rec.events.map((e) => e.stage),
    [...SERVER_STAGES],
  );
  const at = rec.events.map((e) => e.atUs);
  assert.deepEqual(
    at,
    [...at].sort((a, b) => a - b),
    'one clock: the stamps never go back',
  );
  assert.equal(rec.connectionAfter, 'closed');
  assert.equal(rec.requestOnConnection, 1);
});

test('on a kept-alive connection the second request has no accept and no first-bytes-read, and the connection is kept', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await probe(`${server.url}/loans?sid=kept-1`, { method: 'POST', json: LOAN, agent });
    const second = await probe(`${server.url}/loans?sid=kept-2`, { method: 'POST', json: LOAN, agent });
    assert.equal(second.reusedSocket, true);
  } finally {
    agent.destroy();
  }
  const [one, two] = [await record('kept-1'), await record('kept-2')];
  assert.equal(one.events[0]!.stage, 'accept');
  assert.equal(two.events[0]!.stage, 'headers-parsed');
  assert.equal(two.connection, one.connection);
  assert.equal(two.requestOnConnection, 2);
  assert.equal(two.connectionAfter, 'kept');
});

test('Server-Timing holds the stages before the headers, each as the ms since the one before', async () => {
  const r = await probe(`${server.url}/loans?sid=timing-1`, { method: 'POST', json: LOAN });
  const metrics = String(r.headers['server-timing'])
    .split(', ')
    .map((m) => /^([\w-]+);dur=(\d+\.\d{3})$/.exec(m));
  assert.ok(metrics.every(Boolean), String(r.headers['server-timing']));
  assert.deepEqual(
    metrics.map((m) => m![1]),
    ['first-bytes-read', 'headers-parsed', 'handler-start', 'body-read', 'sqlite-read', 'scrypt', 'handler-end'],
  );
  const rec = await record('timing-1');
  const scrypt =
    rec.events.find((e) => e.stage === 'scrypt')!.atUs - rec.events.find((e) => e.stage === 'sqlite-read')!.atUs;
  assert.equal(Number(metrics[5]![2]), Number((scrypt / 1000).toFixed(3)));
});

test('a request without ?sid= is recorded too (Server-Timing on every answer), and an unknown id is a 404 naming the field', async () => {
  const r = await probe(`${server.url}/books/3`);
  assert.equal(r.status, 200);
  assert.match(String(r.headers['server-timing']), /sqlite-read;dur=/);
  const missing = await probe<ErrorBody>(`${server.url}/stages/no-such-id`);
  assert.equal(missing.status, 404);
  assert.match(missing.body.error, /^id: /);
});

test('bad input is answered 400 naming the field, and the server goes on serving', async () => {
  const cases: [string, string, unknown, string][] = [
    ['/loans', 'POST', { book: 0, member: 'ann' }, 'book'],
    ['/loans', 'POST', { book: 3 }, 'member'],
    ['/loans', 'POST', { book: '7', member: 'ann' }, 'book'],
    ['/loans?sid=a.b', 'POST', LOAN, 'sid'],
    ['/stages/a.b', 'GET', undefined, 'id'],
    ['/catalog/export?mb=1&ignore-backpressure=yes', 'GET', undefined, 'ignore-backpressure'],
    ['/books/0', 'GET', undefined, 'id'],
    ['/catalog/export?mb=0', 'GET', undefined, 'mb'],
    ['/upload?check=sometimes', 'POST', {}, 'check'],
  ];
  for (const [path, method, json, field] of cases) {
    const r = await probe<ErrorBody>(`${server.url}${path}`, { method, ...(json === undefined ? {} : { json }) });
    assert.equal(r.status, 400, path);
    assert.match(r.body.error, new RegExp(`^${field}: `), path);
  }
  assert.equal((await probe(`${server.url}/loans`, { method: 'POST', json: LOAN })).status, 201);
});

test('an early body limit answers Expect: 100-continue with 413 before any body byte; a late one reads the whole body first', async () => {
  const bytes = 1024 * 1024;
  const early = await upload(server.port, '/upload?check=early&sid=up-early', bytes);
  assert.equal(early.status, 413);
  assert.equal(early.bodyBytesSent, 0);
  const earlyRec = await record('up-early');
  assert.equal(earlyRec.extra.bodyBytesRead, 0);
  assert.ok(
    earlyRec.extra.socketBytesRead! < 1024,
    `the connection read the head only: ${earlyRec.extra.socketBytesRead}`,
  );
  assert.deepEqual(
    earlyRec.events.map((e) => (e as { offsetUs?: number }).offsetUs! >= 0),
    earlyRec.events.map(() => true),
    'each stage also as µs since the first',
  );
  const late = await upload(server.port, '/upload?check=late&sid=up-late', bytes);
  assert.equal(late.status, 413);
  assert.equal(late.bodyBytesSent, bytes);
  const rec = await record('up-late');
  assert.equal(rec.extra.bodyBytesRead, bytes);
  assert.ok(rec.events.some((e) => e.stage === 'body-read'));
  const small = await upload(server.port, '/upload?check=early', 1000);
  assert.equal(small.status, 201, 'under the limit: 100 Continue, then the body');
});

test('the export queues a chunk or two with backpressure, and most of the body without it', async () => {
  for (const [sid, ignore] of [
    ['ex-honour', ''],
    ['ex-ignore', '&ignore-backpressure=1'],
  ] as const) {
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${server.url}/catalog/export?mb=16&sid=${sid}${ignore}`, (res) => {
          res.pause(); // a reader that waits 300 ms before reading anything
          setTimeout(() => res.resume().on('end', resolve), 300);
        })
        .on('error', reject);
    });
  }
  const honoured = (await record('ex-honour')).extra;
  const ignored = (await record('ex-ignore')).extra;
  assert.ok(honoured.queuedMaxBytes! <= 4 * 65536, `honoured: ${honoured.queuedMaxBytes}`);
  assert.ok(honoured.drainWaitUs! > 0);
  assert.ok(ignored.queuedMaxBytes! >= 8 * 1024 * 1024, `ignored: ${ignored.queuedMaxBytes}`);
  // The route counts a wait from outside the loop (export.ts): a 'drain' that comes while the
  // ignoring loop yields its turn between two writes counts too, a few ms of the reader's 300.
  assert.ok(
    ignored.drainWaitUs! < honoured.drainWaitUs! / 5,
    `waits: ignored ${ignored.drainWaitUs} µs, honoured ${honoured.drainWaitUs} µs`,
  );
});

test("a student's export loop that resolves early: the connection is cut at once, not left to the reader's timeout", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-export-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'export.ts');
  // The likely mistake: stop at the first write() that says false, instead of waiting for 'drain'.
  writeFileSync(
    file,
    'export async function writeExport(res: any, chunks: number, next: () => Buffer) {\n' +
      '  for (let i = 0; i < chunks; i++) if (!res.write(next())) return;\n}\n',
  );
  const mine = await lab.start({
    server: 'stages',
    args: ['--port', '0', '--export', file],
    nodeArgs: ['--import', 'tsx'],
  });
  const outcome = await new Promise<string>((resolve) => {
    const req = http.get(`${mine.url}/catalog/export?mb=16`, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve('ended'));
      res.on('error', (err) => resolve(`error: ${err.message}`));
      res.on('aborted', () => resolve('aborted'));
    });
    req.on('error', (err) => resolve(`error: ${err.message}`));
    // A bound, not a wait for readiness: the reader's own timeout stands in for undici's 300 s.
    req.setTimeout(10_000, () => resolve('timed out'));
  });
  assert.match(outcome, /^(aborted|error: )/, outcome);
  await lab.stop(mine);
  assert.ok(
    mine.stderrTail.some((l) => /the export loop resolved after writing \d+ of 16777216 bytes/.test(l)),
    mine.stderrTail.join('\n'),
  );
});

test(
  'a real browser reads the stages from Server-Timing (PerformanceResourceTiming.serverTiming)',
  { skip: noBrowser },
  async () => {
    assert.ok(CHROMIUM);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${server.url}/books/7`);
      const timing = await page.evaluate(() =>
        (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).serverTiming.map((t) => ({
          name: t.name,
          duration: t.duration,
        })),
      );
      assert.deepEqual(
        timing.map((t) => t.name),
        ['first-bytes-read', 'headers-parsed', 'handler-start', 'sqlite-read', 'handler-end'],
      );
      assert.ok(timing.every((t) => t.duration >= 0 && t.duration < 1000));
    } finally {
      await browser.close();
    }
  },
);

/** Sends `raw` on a new socket and resolves with everything the server answered, once it closes the connection or `ms` pass. */
function rawExchange(port: number, raw: string | Buffer[], ms = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    const done = () => (socket.destroy(), resolve(text));
    const timer = setTimeout(done, ms);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('close', () => (clearTimeout(timer), resolve(text)));
    socket.on('error', reject);
    for (const part of Array.isArray(raw) ? raw : [raw]) socket.write(part);
  });
}

test("a target the checkContinue listener cannot parse gets 100 Continue and the router's 400; the server goes on serving", async () => {
  const answer = await rawExchange(
    server.port,
    'POST // HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    2000,
  );
  assert.match(answer, /HTTP\/1\.1 400 /);
  assert.equal((await probe(`${server.url}/books/1`)).status, 200);
});

test("a chunked JSON body over its limit gets its 413 too (the shared readJsonBody, every lesson server's JSON routes)", async () => {
  const head = 'POST /loans HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n';
  const chunk = Buffer.alloc(40_000, 0x20);
  const chunks = [
    Buffer.from(head),
    ...Array.from({ length: 3 }, () =>
      Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
    ),
    Buffer.from('0\r\n\r\n'),
  ];
  assert.match(await rawExchange(server.port, chunks, 2000), /^HTTP\/1\.1 413 /);
});

test('a chunked upload over an early limit still gets its 413 (the socket is not destroyed under it)', async () => {
  const head =
    'POST /upload?check=early HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n';
  const chunk = Buffer.alloc(40_000, 0x61);
  const chunks = [
    Buffer.from(head),
    ...Array.from({ length: 3 }, () =>
      Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
    ),
    Buffer.from('0\r\n\r\n'),
  ];
  const answer = await rawExchange(server.port, chunks, 2000);
  assert.match(answer, /^HTTP\/1\.1 413 /);
});

test("the kit's balancer with --stages stamps its own stages of a request, in order, and answers them at /__lb/stages/<id>", async () => {
  const upstream = `stages=127.0.0.1:${server.port}`;
  const lb = await lab.start({ server: 'balancer', args: ['--upstream', upstream, '--port', '0', '--stages'] });
  const plain = await lab.start({ server: 'balancer', args: ['--upstream', upstream, '--port', '0'] });
  try {
    assert.equal((await probe(`${lb.url}/loans?sid=lb-1`, { method: 'POST', json: LOAN })).status, 201);
    const r = await probe<ProxyStages>(`${lb.url}/__lb/stages/lb-1`);
    assert.equal(r.status, 200);
    const stages = r.body.events.map((e) => e.stage);
    assert.deepEqual(stages, [
      'accept',
      'headers-parsed',
      'upstream-connect',
      'upstream-request-written',
      'upstream-headers-parsed',
      'finish',
    ]);
    const server_ = await record('lb-1');
    const at = (stage: string) => r.body.events.find((e) => e.stage === stage)!.atUs;
    const srv = (stage: string) => server_.events.find((e) => e.stage === stage)!.atUs;
    assert.ok(
      at('upstream-request-written') <= srv('headers-parsed') &&
        srv('response-headers-written') <= at('upstream-headers-parsed'),
      'one clock: the balancer forwards before the server parses, and parses the answer after the server wrote it',
    );
    assert.match((await probe<ErrorBody>(`${lb.url}/__lb/stages/a.b`)).body.error, /^id: /);
    const off = await probe<ErrorBody>(`${plain.url}/__lb/stages/lb-1`);
    assert.equal(off.status, 404);
    assert.match(off.body.error, /--stages/);
  } finally {
    await lab.stop(lb);
    await lab.stop(plain);
  }
});
