// Lesson 3's write-the-fix exercise: the starting point a student copies (scryptSync) and the
// reference fix (crypto.scrypt, on the thread pool) compute the same key, one at once and one
// later, so the fix changes where the hash runs and nothing else. test/e2e/exercise-fixes.test.ts
// runs both behind the loan service.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyPassword as start } from '../../servers/lib/cpu/verify-exercise.ts';
import { verifyPassword as fixed } from '../fixtures/verify-fixed.ts';

test("the exercise's starting point answers at once, the fix later, with the same key", async () => {
  const salt = Buffer.from('0123456789abcdef');
  const options = { N: 2 ** 10, r: 8, p: 1 };
  const now = start('correct horse battery staple', salt, 32, options);
  assert.ok(Buffer.isBuffer(now), 'scryptSync returns the key itself');
  const later = fixed('correct horse battery staple', salt, 32, options);
  assert.ok(later instanceof Promise, 'the fix returns a promise of the key');
  assert.deepEqual(await later, now);
});
