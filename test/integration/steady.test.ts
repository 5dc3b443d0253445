// measureSteadily: a step disturbed by other programs is taken again, bounded, and said; a quiet
// one runs once. The last test disturbs a step for real with a busy process outside the kit's tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { DisturbanceHistory, measureSteadily, STEP_BUSY_CORES, STEP_TRIES } from '../../measure/lib/machine/steady.ts';

/** A fake reading of other programs' CPU: each try sees the next of `cores`. */
function fake(cores: (number | undefined)[]) {
  let i = 0;
  return () => {
    const c = cores[i++];
    // Split between other programs and steal, as the real reading is.
    return () =>
      c === undefined ? undefined : { otherCores: Math.round(c * 50) / 100, stealCores: c - Math.round(c * 50) / 100 };
  };
}

function notes() {
  const lines: string[] = [];
  return { lines, progress: { note: (t: string) => void lines.push(t) } };
}

test('a quiet step runs once and says nothing', async () => {
  const n = notes();
  let runs = 0;
  const r = await measureSteadily('step', async () => ++runs, { disturbance: fake([0.02]), progress: n.progress });
  assert.deepEqual(r, { value: 1, tries: 1, busyCores: 0.02 });
  assert.deepEqual(n.lines, []);
});

test('a disturbed step is taken again, the quiet try kept, and the repeat said with the cores seen', async () => {
  const n = notes();
  let runs = 0;
  const r = await measureSteadily('io-bound: 8 connection(s)', async () => ++runs, {
    disturbance: fake([0.45, 0.03]),
    progress: n.progress,
  });
  assert.deepEqual(r, { value: 2, tries: 2, busyCores: 0.03 });
  assert.equal(n.lines.length, 1);
  assert.match(
    n.lines[0]!,
    /^io-bound: 8 connection\(s\): other programs took 0\.23 of the cores during it and other virtual machines 0\.22 \(steal\); measuring it again \(try 2 of 3\)$/,
  );
});

test(`bounded: after ${STEP_TRIES} disturbed tries the least disturbed is kept`, async () => {
  const n = notes();
  let runs = 0;
  const r = await measureSteadily('step', async () => ++runs, {
    disturbance: fake([0.6, 0.3, 0.9, 0]),
    progress: n.progress,
  });
  assert.deepEqual(r, { value: 2, tries: 3, busyCores: 0.3 });
  assert.equal(runs, STEP_TRIES);
  assert.match(n.lines.at(-1)!, /keeping the least disturbed of 3 tries \(0\.30 cores\)$/);
});

test('a steady load (a browser tab) is not waited out: past two tries it is the floor, and only a burst above it is taken again', async () => {
  const history = new DisturbanceHistory();
  let runs = 0;
  const step = (seen: number[]) => measureSteadily('s', async () => ++runs, { disturbance: fake(seen), history });
  assert.equal((await step([0.26, 0.24, 0.25])).tries, 3, 'the first step: no floor yet');
  assert.equal((await step([0.27])).tries, 1, 'steady 0.25: once');
  assert.equal((await step([0.3])).tries, 1);
  assert.equal((await step([0.7, 0.26])).tries, 2, 'a burst above the floor is taken again');
  const idle = new DisturbanceHistory();
  for (const busy of [0.03, 0.05]) idle.add(busy);
  assert.equal(idle.floor(), 0, "an idle machine's noise is no floor");
});

test('the threshold: just under it is quiet, at it is disturbed', async () => {
  let runs = 0;
  assert.equal(
    (await measureSteadily('s', async () => ++runs, { disturbance: fake([STEP_BUSY_CORES - 0.01]) })).tries,
    1,
  );
  assert.equal((await measureSteadily('s', async () => ++runs, { disturbance: fake([STEP_BUSY_CORES, 0]) })).tries, 2);
});

test('without /proc a step runs once; an error is not noise and is not retried', async () => {
  let runs = 0;
  assert.deepEqual(await measureSteadily('s', async () => ++runs, { disturbance: fake([undefined]) }), {
    value: 1,
    tries: 1,
    busyCores: undefined,
  });
  runs = 0;
  await assert.rejects(
    measureSteadily(
      's',
      async () => {
        runs++;
        throw new Error('refused');
      },
      { disturbance: fake([0.9, 0.9]) },
    ),
    /refused/,
  );
  assert.equal(runs, 1);
});

test(
  'for real: a busy process outside the kit makes a step be taken again; without it the step runs once',
  { skip: existsSync('/proc/stat') ? false : 'needs /proc' },
  async () => {
    const step = () => new Promise<void>((r) => setTimeout(r, 600));
    const quiet = await measureSteadily('quiet', step);
    // The machine may have had a neighbour just then; a quiet try is what the helper promises.
    assert.ok(quiet.busyCores! < STEP_BUSY_CORES || quiet.tries === STEP_TRIES, JSON.stringify(quiet));
    // sh starts a spinning node in the background and exits: the spinner is reparented, outside this
    // process's tree, as another program would be. It ends itself after 20 s at the latest.
    const sh = spawn(
      'sh',
      ['-c', `${process.execPath} -e "const e=Date.now()+20000; while(Date.now()<e){}" >/dev/null 2>&1 & echo $!`],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    sh.stdout.on('data', (d) => (out += d));
    await new Promise((r) => sh.on('close', r));
    const pid = Number(out.trim());
    try {
      const n = notes();
      const busy = await measureSteadily('busy', step, { progress: n.progress, tries: 2 });
      assert.equal(busy.tries, 2, JSON.stringify(busy));
      assert.ok(busy.busyCores! >= 0.5, JSON.stringify(busy));
      assert.equal(n.lines.length, 2);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  },
);
