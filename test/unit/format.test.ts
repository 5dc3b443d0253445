// Proves the format check (make format-check, in the fast tier) can fail: Prettier, with the kit's
// own .prettierrc.json, rejects a line over 120 columns and double quotes, and accepts the same code
// once formatted. The check of every file is the Makefile's; this is only the rule it applies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import * as prettier from 'prettier';
import { failOnWarnings, ROOT } from '../helpers.ts';

failOnWarnings();

test("the kit's Prettier settings: 120 columns, single quotes, and a check that rejects anything else", async () => {
  const file = path.join(ROOT, 'measure', 'example.ts');
  const options = { ...(await prettier.resolveConfig(file)), filepath: file };
  assert.equal(options.printWidth, 120);
  assert.equal(options.singleQuote, true);
  const args = Array.from({ length: 12 }, (_, i) => `argument${i}`).join(', ');
  const long = `export const x = f(${args});\n`;
  assert.ok(long.length > 121);
  assert.equal(await prettier.check(long, options), false, 'a line over 120 columns');
  const formatted = await prettier.format(long, options);
  assert.ok(
    formatted.split('\n').every((l) => l.length <= 120),
    formatted,
  );
  assert.equal(await prettier.check(formatted, options), true);
  assert.equal(await prettier.check('export const s = "text";\n', options), false, 'double quotes');
  assert.equal(await prettier.check("export const s = 'text';\n", options), true);
});
