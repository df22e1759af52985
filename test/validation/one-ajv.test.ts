import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const SRC = join(import.meta.dirname, '../../src');

describe('one ajv instance (issue 18 item 2)', () => {
  it('only src/validation/ajv.ts builds one for our schemas; client tools keep their own for tenant schemas', () => {
    const builders = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => /new Ajv\(/.test(readFileSync(join(SRC, f), 'utf8')))
      .map((f) => f.replaceAll('\\', '/'))
      .sort();
    assert.deepEqual(builders, ['offthread/client-tool-schemas.ts', 'validation/ajv.ts']);
  });
});
