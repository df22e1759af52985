/**
 * The decision records keep their shape (docs/decisions/README.md): one file per decision,
 * numbered without gaps, each with its context, decision and consequences, and every record in
 * the index. Fast and service-free.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const dir = new URL('../../docs/decisions/', import.meta.url);

test('every decision record is numbered, has its sections and is in the index', () => {
  const records = readdirSync(dir)
    .filter((name) => /^\d{4}-[a-z0-9-]+\.md$/.test(name))
    .sort();
  assert.ok(records.length > 50, 'the records were read');
  const index = readFileSync(new URL('README.md', dir), 'utf8');
  records.forEach((name, i) => {
    const number = String(i + 1).padStart(4, '0');
    assert.ok(name.startsWith(`${number}-`), `${name}: records are numbered from 0001 without gaps (expected ${number})`);
    const text = readFileSync(new URL(name, dir), 'utf8');
    assert.match(text, new RegExp(`^# ${number}\\. \\S`), `${name}: starts with "# ${number}. <title>"`);
    for (const section of ['## Context', '## Decision', '## Consequences']) {
      assert.ok(text.includes(`\n${section}\n`), `${name}: has "${section}"`);
    }
    assert.ok(index.includes(`](${name})`), `${name}: listed in docs/decisions/README.md`);
  });
});
