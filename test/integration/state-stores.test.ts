// Proves the state stores' contract (servers/lib/state/stores.ts) with one suite run against each store —
// memory, SQLite and a real Redis started for the test — and that the shared ones stay exact when
// several processes increment the same counter at once; and the signed session token: a good one
// names its member, a tampered, expired or malformed one is no session and never a crash.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Lab } from '../../measure/lib/process/lab.ts';
import { pollUntil } from '../../lib/wait.ts';
import {
  memoryStore,
  openStore,
  sqliteStore,
  type StateStore,
  type StoreKind,
} from '../../servers/lib/state/stores.ts';
import { createToken, verifyToken } from '../../servers/lib/state/session-token.ts';
import { failOnWarnings, skipUnless, ROOT } from '../helpers.ts';

failOnWarnings();
const run = promisify(execFile);
const lab = new Lab();
after(() => lab.close());

const redisSkip = skipUnless('redis-server');
let redisUrl = '';
before(async () => {
  if (redisSkip) return;
  const redis = await lab.start({ server: 'redis', args: ['--port', '0'] });
  redisUrl = `redis://127.0.0.1:${redis.port}`;
});

const where = (kind: StoreKind) => (kind === 'sqlite' ? path.join(lab.tempDir('state'), 'state.db') : redisUrl);

for (const kind of ['memory', 'sqlite', 'redis'] as const) {
  describe(`${kind} store`, { skip: kind === 'redis' ? redisSkip : false }, () => {
    let store: StateStore;
    before(async () => {
      store = await openStore({ kind, file: kind === 'sqlite' ? where('sqlite') : undefined, redisUrl });
    });
    after(() => store.close());

    test('a session names its member until it expires; an unknown id is no session', async () => {
      const id = await store.createSession('ann', 60_000);
      assert.match(id, /^[\w-]{20,}$/);
      assert.equal(await store.sessionMember(id), 'ann');
      assert.equal(await store.sessionMember('no-such-session'), undefined);
      const short = await store.createSession('bob', 150);
      assert.equal(await store.sessionMember(short), 'bob');
      await pollUntil(
        'the session to expire',
        async () => ((await store.sessionMember(short)) === undefined ? true : undefined),
        5000,
        20,
      );
    });

    test('counters start at 0 and increment atomically by any amount', async () => {
      const key = `c-${Date.now()}`;
      assert.equal(await store.counter(key), 0);
      assert.equal(await store.increment(key), 1);
      assert.equal(await store.increment(key, 5), 6);
      const all = await Promise.all(Array.from({ length: 50 }, () => store.increment(key)));
      assert.equal(new Set(all).size, 50, 'every increment saw its own value');
      assert.equal(await store.counter(key), 56);
    });

    test('rate limit: hits within the limit are allowed, the next one is not, a new window starts over', async () => {
      const key = `r-${Date.now()}`;
      const got = [];
      for (let i = 0; i < 4; i++) got.push(await store.hit(key, 3, 60_000));
      assert.deepEqual(
        got.map((g) => g.allowed),
        [true, true, true, false],
      );
      assert.deepEqual(
        got.map((g) => g.count),
        [1, 2, 3, 4],
      );
      const other = await store.hit(`${key}-other`, 3, 60_000);
      assert.equal(other.allowed, true, 'a limit is per key');
    });
  });
}

test('memory and SQLite stores: expiry follows the injected clock', async () => {
  let now = 1_000_000;
  const clock = () => now;
  for (const store of [memoryStore(clock), sqliteStore(path.join(lab.tempDir('clock'), 's.db'), clock)]) {
    const id = await store.createSession('ann', 1000);
    now += 999;
    assert.equal(await store.sessionMember(id), 'ann', store.kind);
    now += 2;
    assert.equal(await store.sessionMember(id), undefined, store.kind);
    assert.deepEqual((await store.hit('k', 1, 1000)).allowed, true);
    assert.deepEqual((await store.hit('k', 1, 1000)).allowed, false);
    now += 999;
    assert.deepEqual(
      (await store.hit('k', 1, 1000)).allowed,
      false,
      `${store.kind}: the window opened at the first hit`,
    );
    now += 2;
    assert.deepEqual((await store.hit('k', 1, 1000)).allowed, true, `${store.kind}: a new window`);
    await store.close();
  }
});

for (const kind of ['sqlite', 'redis'] as const) {
  test(
    `${kind}: four processes incrementing one counter 300 times each end at exactly 1200`,
    { skip: kind === 'redis' ? redisSkip : false },
    async () => {
      const location = kind === 'sqlite' ? where('sqlite') : redisUrl;
      const store = await openStore({ kind, file: location, redisUrl: location });
      const before = await store.counter('shared');
      const outs = await Promise.all(
        Array.from({ length: 4 }, () =>
          run(
            process.execPath,
            ['--import', 'tsx', path.join(ROOT, 'test/fixtures/increment.ts'), kind, location, '300'],
            { cwd: ROOT },
          ),
        ),
      );
      for (const o of outs) assert.match(o.stdout, /^done \d+$/m, o.stderr);
      assert.equal((await store.counter('shared')) - before, 1200, 'no increment lost, no "database is locked"');
      await store.close();
    },
  );
}

test('session token: a good token names its member; tampered, expired, malformed ones are no session', () => {
  const secret = 'lesson-5-secret';
  const now = 1_700_000_000_000;
  const token = createToken('ann', 60_000, secret, now);
  assert.equal(verifyToken(token, secret, now + 1), 'ann');
  assert.equal(verifyToken(token, secret, now + 60_001), undefined, 'expired');
  assert.equal(verifyToken(token, 'another-secret', now), undefined, 'signed with another secret');
  const [payload, sig] = token.split('.');
  const forged = Buffer.from(JSON.stringify({ m: 'admin', exp: now + 60_000 })).toString('base64url');
  assert.equal(verifyToken(`${forged}.${sig}`, secret, now), undefined, 'a changed payload');
  assert.equal(verifyToken(`${payload}.${sig!.slice(0, -2)}xx`, secret, now), undefined, 'a changed signature');
  for (const bad of ['', '.', 'abc', 'a.b.c', `${payload}.`, `.${sig}`, 'x'.repeat(5000), '%%%.%%%'])
    assert.equal(verifyToken(bad, secret, now), undefined, JSON.stringify(bad.slice(0, 20)));
  const notJson = Buffer.from('not json').toString('base64url');
  assert.equal(
    verifyToken(`${notJson}.${createHmac('sha256', secret).update(notJson).digest('base64url')}`, secret, now),
    undefined,
    'signed garbage',
  );
});
