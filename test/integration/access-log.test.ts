// Proves the balancers' access log: its line reads back as written, nginx's own lines (with "-"
// and " : ") parse, a load's part of the log is counted (retried, ≥ 1 s, clients gone left out),
// a path that could break nginx's config is refused; and on real processes, nginx and the kit's
// balancer both log a request held by a frozen replica as two tries, 504 then 200, which the
// client sees in x-upstream-addr.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { accessLogPath } from '../../servers/lib/balancer/upstreams.ts';
import {
  formatAccessLine,
  parseAccessLine,
  summarizeAccessLog,
  type AccessEntry,
} from '../../servers/lib/balancer/access-log.ts';
import { Lab } from '../../measure/lib/process/lab.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { retriesOf, startBalancer, startReplicas } from '../../measure/lib/process/topology.ts';
import { failOnWarnings, balancersToTest } from '../helpers.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

const retried: AccessEntry = {
  atS: 1764820862.517,
  method: 'GET',
  uri: '/fast?x=1',
  status: 200,
  requestS: 1.504,
  tries: [
    { addr: '127.0.0.1:40003', status: 504, timeS: 1.501 },
    { addr: '127.0.0.1:40001', status: 200, timeS: 0.003 },
  ],
};

test('a line reads back as it was written', () => {
  const text = formatAccessLine(retried);
  assert.equal(
    text,
    '1764820862.517 GET /fast?x=1 status=200 rt=1.504 ua="127.0.0.1:40003, 127.0.0.1:40001" us="504, 200" ut="1.501, 0.003"',
  );
  assert.deepEqual(parseAccessLine(text), retried);
  assert.equal(formatAccessLine({ ...retried, status: 503, tries: [] }).endsWith('ua="-" us="-" ut="-"'), true);
});

test('nginx\'s own forms parse: "-" for a value it has not, " : " between upstream groups; other lines do not', () => {
  const e = parseAccessLine(
    '1764820862.000 GET / status=502 rt=2.001 ua="127.0.0.1:1, 127.0.0.1:2 : 127.0.0.1:3" us="502, -, 200" ut="2.000, -, 0.001"',
  );
  assert.deepEqual(e?.tries, [
    { addr: '127.0.0.1:1', status: 502, timeS: 2 },
    { addr: '127.0.0.1:2', status: undefined, timeS: undefined },
    { addr: '127.0.0.1:3', status: 200, timeS: 0.001 },
  ]);
  assert.equal(parseAccessLine(''), undefined);
  assert.equal(parseAccessLine('GET /fast|127.0.0.1:1|200|0.001'), undefined);
  assert.equal(parseAccessLine('1764820862.000 GET / status=200 rt=0.001 ua="x"'), undefined);
});

test("a load's part of the log: retried and slow answers counted, gone clients and earlier lines left out, the slowest retried line kept", () => {
  const line = (over: Partial<AccessEntry>) => formatAccessLine({ ...retried, ...over });
  const one = [{ addr: '127.0.0.1:40001', status: 200, timeS: 0.001 }];
  const text = [
    line({ atS: 99, requestS: 3, tries: one }), // before the load: the warm-up
    line({ atS: 100, requestS: 0.001, tries: one }),
    line({ atS: 101 }),
    line({ atS: 102, requestS: 1.6 }),
    line({ atS: 103, status: 499, requestS: 2 }), // the client had gone
    line({
      atS: 104,
      requestS: 0.002,
      tries: [
        { addr: 'a', status: 502, timeS: 0 },
        { addr: 'b', status: 200, timeS: 0.002 },
      ],
    }),
    'garbage',
    '',
  ].join('\n');
  const s = summarizeAccessLog(text, 1, 100);
  assert.deepEqual(
    { ...s, sample: undefined },
    { requests: 5, answered: 4, retried: 3, slow: 2, sample: undefined, firstTriesS: [1.501, 1.501, 0] },
  );
  assert.match(s.sample!, /rt=1\.600/);
  assert.deepEqual(summarizeAccessLog('', 1), { requests: 0, answered: 0, retried: 0, slow: 0, firstTriesS: [] });
});

test("--access-log takes a plain path, made absolute; one that could end nginx's quoted word is refused", () => {
  assert.equal(accessLogPath('logs/access.log'), path.resolve('logs/access.log'));
  for (const bad of ['', 'a b.log', 'a";b', 'x;y', 'a{b}', '$x', 'a\\b', 'a\nb', "a'b"]) {
    assert.throws(
      () => accessLogPath(bad),
      (e: Error & { code?: string }) => e.code === 'KIT_ERR_USAGE',
      JSON.stringify(bad),
    );
  }
});

const BALANCERS = balancersToTest();

for (const { kind, skip } of BALANCERS) {
  test(
    `${kind}: a request held by a frozen replica is logged as two tries, 504 then 200, and x-upstream-addr names both`,
    { skip, timeout: 30_000 },
    async () => {
      const replicas = await startReplicas(lab, 2);
      const file = path.join(lab.tempDir('access-log-test'), 'access.log');
      const lb = await startBalancer(lab, kind, 'round-robin', replicas, 0, true, [
        '--response-timeout',
        '300',
        '--access-log',
        file,
      ]);
      const frozen = replicas[1]!;
      frozen.proc.signal('SIGSTOP');
      try {
        const seen: string[] = [];
        for (let i = 0; i < 4; i++) {
          const r = await probe(`${lb.url}/fast`);
          assert.equal(r.status, 200);
          seen.push(String(r.headers['x-upstream-addr']));
        }
        assert.ok(seen.includes(`${frozen.addr}, ${replicas[0]!.addr}`), seen.join(' | '));
        await retriesOf(lb); // the kit's balancer writes its log out before it answers
        const lines = readFileSync(file, 'utf8').trim().split('\n').map(parseAccessLine);
        const twoTries = lines.filter((e) => e && e.tries.length === 2);
        assert.ok(twoTries.length >= 1, 'a retried line');
        for (const e of twoTries) {
          assert.deepEqual(
            e!.tries.map((t) => [t.addr, t.status]),
            [
              [frozen.addr, 504],
              [replicas[0]!.addr, 200],
            ],
          );
          assert.ok(e!.tries[0]!.timeS! >= 0.29 && e!.requestS >= e!.tries[0]!.timeS!, JSON.stringify(e));
          assert.equal(e!.status, 200);
        }
        assert.equal(
          twoTries.length,
          seen.filter((s) => s.includes(',')).length,
          'every retried line is a retried answer',
        );
      } finally {
        frozen.proc.signal('SIGCONT');
        await lab.stop(lb);
        await Promise.all(replicas.map((r) => lab.stop(r.proc)));
      }
    },
  );
}
