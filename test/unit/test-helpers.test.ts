// The test helpers' own rules: a missing tool skips a test with its reason on a student's machine,
// and fails it, naming the tool, where NSL_REQUIRE_TOOLS=1 (as .ci/run sets it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failOnWarnings, toolSkip } from '../helpers.ts';

failOnWarnings();

test('a tool that is there never skips, with NSL_REQUIRE_TOOLS or without', () => {
  assert.equal(toolSkip('nginx', false, {}), false);
  assert.equal(toolSkip('nginx', false, { NSL_REQUIRE_TOOLS: '1' }), false);
});

test('a missing tool skips with its reason, or with NSL_REQUIRE_TOOLS=1 is an error naming the tool', () => {
  const reason = 'nginx is not installed (Debian/Ubuntu: apt-get install nginx)';
  assert.equal(toolSkip('nginx', reason, {}), reason);
  assert.equal(toolSkip('nginx', reason, { NSL_REQUIRE_TOOLS: '0' }), reason);
  assert.throws(
    () => toolSkip('nginx', reason, { NSL_REQUIRE_TOOLS: '1' }),
    /^Error: nginx is required here \(NSL_REQUIRE_TOOLS=1\) but it is missing: nginx is not installed/,
  );
});
