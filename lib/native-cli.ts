/**
 * What the Makefile runs around installs (lib/native.ts says why):
 *   node --import tsx lib/native-cli.ts record   after npm ci: which Node built node_modules
 *   node --import tsx lib/native-cli.ts check    before a lesson: rebuild better-sqlite3 when it
 *                                                does not load in the running Node
 * Exit 0 when better-sqlite3 loads (perhaps after a rebuild), 1 when it cannot be made to, 2 on a usage error.
 */
import { spawnSync } from 'node:child_process';
import { describeError, KitError } from './errors.ts';
import { headersPrefix, probeNative, readRecord, rebuildCommand, ROOT, writeRecord } from './native.ts';

/** `check`: rebuild when the binding does not load in this Node. Returns the exit code. */
function check(): number {
  const mismatch = probeNative();
  if (!mismatch) {
    if (readRecord()?.modules !== process.versions.modules) writeRecord();
    return 0;
  }
  const was = readRecord();
  process.stderr.write(
    `node_modules was built for ${was ? `Node.js ${was.node}` : `module version ${mismatch.built}`}; this is Node.js ${process.versions.node}: ` +
      `rebuilding better-sqlite3 for it (about a minute)…\n`,
  );
  const prefix = headersPrefix();
  const r = spawnSync('npm', ['rebuild', 'better-sqlite3'], {
    cwd: ROOT,
    env: { ...process.env, ...(prefix ? { npm_config_nodedir: prefix } : {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  // Loaded again in a fresh process: this one already failed to load the old binary.
  const loads =
    r.status === 0 &&
    spawnSync(process.execPath, ['-e', "new (require('better-sqlite3'))(':memory:').close()"], {
      cwd: ROOT,
      stdio: 'ignore',
    }).status === 0;
  if (!loads) {
    const why = (r.stderr ?? '').trim().split('\n').filter(Boolean).at(-1) ?? `npm exited with ${r.status}`;
    process.stderr.write(
      describeError(
        new KitError(
          'KIT_ERR_NATIVE_BUILD',
          `could not rebuild better-sqlite3 for Node.js ${process.versions.node}: ${why}`,
          `try ${rebuildCommand()}, or rm -rf node_modules and run make again`,
        ),
      ) + '\n',
    );
    return 1;
  }
  writeRecord();
  process.stderr.write(`better-sqlite3 rebuilt for Node.js ${process.versions.node}.\n`);
  return 0;
}

{
  const verb = process.argv[2];
  if (verb === 'record') writeRecord();
  else if (verb === 'check') process.exitCode = check();
  else {
    process.stderr.write('usage: node --import tsx lib/native-cli.ts record|check\n');
    process.exitCode = 2;
  }
}
