/**
 * Every setting `src/config.ts` reads is listed in docs/operations.md (the recipe for a new
 * setting in docs/conventions.md). Fast and service-free.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CONFIG_VARIABLES } from '../../src/config.js';

test('every setting of src/config.ts is documented in docs/operations.md', () => {
  const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  assert.ok(CONFIG_VARIABLES.length > 50, 'the settings were read');
  const missing = CONFIG_VARIABLES.filter((name) => !operations.includes(`\`${name}\``));
  assert.deepEqual(missing, [], `settings missing from docs/operations.md: ${missing.join(', ')}`);
});
